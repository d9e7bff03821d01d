package replay

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Duration is a span of seconds. In a scenario it is written either as a
// number of seconds (600), as whole days ("2d") or as a Go duration ("10m",
// "48h").
type Duration int64

// UnmarshalText reads "600", "10m" or "1h30m".
func (d *Duration) UnmarshalText(b []byte) error {
	s := string(b)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		*d = Duration(n)
		return nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.ParseInt(days, 10, 64); err == nil {
			*d = Duration(n * 86400)
			return nil
		}
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: want seconds, days (2d) or a duration like 10m", s)
	}
	if v%time.Second != 0 {
		return fmt.Errorf("duration %q: must be whole seconds", s)
	}
	*d = Duration(v / time.Second)
	return nil
}

// MarshalText writes the duration as whole seconds.
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(strconv.FormatInt(int64(d), 10)), nil
}

// Seconds returns the duration in seconds.
func (d Duration) Seconds() int64 { return int64(d) }
