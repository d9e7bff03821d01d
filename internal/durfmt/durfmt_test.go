package durfmt

import (
	"testing"
	"time"
)

// The one format: exact, compact, hours at most, and a Go duration.
func TestSeconds(t *testing.T) {
	for s, want := range map[int64]string{0: "0s", 45: "45s", 60: "1m", 90: "1m30s", 605: "10m05s", 3600: "1h", 3601: "1h00m01s",
		7507: "2h05m07s", 7500: "2h05m", 360000: "100h", 3*86400 + 4*3600: "76h", -90: "-1m30s"} {
		got := Seconds(s)
		if got != want {
			t.Errorf("Seconds(%d) = %q, want %q", s, got, want)
		}
		if d, err := time.ParseDuration(got); err != nil || d != time.Duration(s)*time.Second {
			t.Errorf("Seconds(%d) = %q reads back as %v, %v", s, got, d, err)
		}
	}
	for d, want := range map[time.Duration]string{30 * time.Second: "30s", 168 * time.Hour: "168h", 1500 * time.Millisecond: "1.5s", 0: "0s"} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}
