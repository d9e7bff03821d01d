// Package durfmt is the one way every lookahead binary writes a duration
// for people — in tables, messages, refusals and the configuration it
// prints: whole hours, minutes and seconds, leading zeros dropped and
// trailing zero parts left out: 45s, 12m, 1m30s, 2h, 2h05m, 2h05m07s,
// 100h (never 360000s, 100h0m0s or 4d4h). Nothing is rounded away, and
// the text is a Go duration (time.ParseDuration reads it back), so it can
// be pasted into any flag or key that takes one.
package durfmt

import (
	"fmt"
	"time"
)

// Seconds writes s seconds.
func Seconds(s int64) string {
	if s < 0 {
		return "-" + Seconds(-s)
	}
	h, m, sec := s/3600, s%3600/60, s%60
	switch {
	case h > 0 && m == 0 && sec == 0:
		return fmt.Sprintf("%dh", h)
	case h > 0 && sec == 0:
		return fmt.Sprintf("%dh%02dm", h, m)
	case h > 0:
		return fmt.Sprintf("%dh%02dm%02ds", h, m, sec)
	case m > 0 && sec == 0:
		return fmt.Sprintf("%dm", m)
	case m > 0:
		return fmt.Sprintf("%dm%02ds", m, sec)
	}
	return fmt.Sprintf("%ds", sec)
}

// Duration writes d: whole seconds as Seconds does; a duration with a
// fraction of a second as Go writes it (1.5s, 250ms), which is exact.
func Duration(d time.Duration) string {
	if d%time.Second != 0 {
		return d.String()
	}
	return Seconds(int64(d / time.Second))
}
