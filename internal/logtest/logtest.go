// Package logtest holds test helpers for the daemons' JSON logs: a buffer
// the daemons' goroutines may write to at once, and a check that no JSON
// object names a key twice (encoding/json keeps the last one silently, and
// jq shows only it). Test helpers only.
package logtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Buffer collects log lines written from several goroutines.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// DuplicateKeys returns the keys that occur more than once in one object
// of the JSON value in line, at any depth; anything after the value is an
// error.
func DuplicateKeys(line []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	var dups []string
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				key := k.(string)
				if seen[key] {
					dups = append(dups, key)
				}
				seen[key] = true
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token() // '}'
			return err
		case json.Delim('['):
			for dec.More() {
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token() // ']'
			return err
		}
		return nil
	}
	if err := walk(); err != nil {
		return dups, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return dups, fmt.Errorf("trailing data after the value")
	}
	return dups, nil
}
