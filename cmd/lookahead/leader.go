package main

import (
	"fmt"
	"io"
	"time"

	"lookahead/wire"
)

// writeLeader prints which broker answered: the active one, its epoch and
// since when (nothing from a broker before leadership).
func writeLeader(w io.Writer, l *wire.Leadership) error {
	if l == nil {
		return nil
	}
	_, err := fmt.Fprintf(w, "\nbroker %s active since %s (epoch %d)\n", l.Broker,
		time.Unix(l.Since, 0).UTC().Format("2006-01-02 15:04:05Z"), l.Epoch)
	return err
}
