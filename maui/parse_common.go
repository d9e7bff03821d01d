package maui

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Infinity is what Maui's "INFINITY" duration reads as (its own bound,
// 100 days). "INFINITE" reads the same: Maui 3.3.1 prints it as the
// duration of the phantom reservation a job leaves when it starts at the
// very iteration a standing window ends (`n01 Job <id> Running 2
// -INFINITY INFINITE Thu Jan  1 ...` in showres -n; docs/maui.md).
const Infinity = 8640000

// ParseDuration reads a Maui duration, "[-][[[DD:]HH:]MM:]SS" as Maui
// prints it ("00:10:00", "2:00:00", "-00:00:33", "1:02:00:00"), into
// seconds.
func ParseDuration(s string) (int64, error) {
	switch s {
	case "INFINITY", "INFINITE":
		return Infinity, nil
	case "-INFINITY":
		return -Infinity, nil
	}
	neg := strings.HasPrefix(s, "-")
	body := strings.TrimPrefix(s, "-")
	parts := strings.Split(body, ":")
	if body == "" || len(parts) > 4 {
		return 0, fmt.Errorf("duration %q: want [-][[[DD:]HH:]MM:]SS", s)
	}
	mult := []int64{1, 60, 3600, 86400}
	var total int64
	for i := range parts {
		p := parts[len(parts)-1-i]
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil || v < 0 || len(p) == 0 || p[0] == '+' {
			return 0, fmt.Errorf("duration %q: bad field %q", s, p)
		}
		if v > 1<<40 {
			return 0, fmt.Errorf("duration %q: out of range", s)
		}
		total += v * mult[i]
	}
	if neg {
		total = -total
	}
	return total, nil
}

// FormatDuration writes seconds as Maui reads a relative time or duration,
// "[-]HH:MM:SS" with hours unbounded.
func FormatDuration(sec int64) string {
	sign := ""
	if sec < 0 {
		sign, sec = "-", -sec
	}
	return fmt.Sprintf("%s%02d:%02d:%02d", sign, sec/3600, sec/60%60, sec%60)
}

// ParseClock reads a Maui wall-clock stamp such as "Sun Nov 22 03:03:00"
// (no year) or "Sun Nov 22 03:03:00 2026" (showres -v) in loc. Without a
// year, the year that puts the stamp closest to ref is chosen.
func ParseClock(s string, loc *time.Location, ref time.Time) (time.Time, error) {
	f := strings.Fields(s)
	if loc == nil {
		loc = time.UTC
	}
	switch len(f) {
	case 5:
		t, err := time.ParseInLocation("Mon Jan 2 15:04:05 2006", strings.Join(f, " "), loc)
		if err != nil {
			return time.Time{}, fmt.Errorf("clock %q: %w", s, err)
		}
		return t, nil
	case 4:
	default:
		return time.Time{}, fmt.Errorf("clock %q: want \"Mon Jan 2 15:04:05[ 2006]\"", s)
	}
	base := strings.Join(f[1:], " ")
	var best time.Time
	for _, y := range []int{ref.Year() - 1, ref.Year(), ref.Year() + 1} {
		t, err := time.ParseInLocation("Jan 2 15:04:05 2006", base+" "+strconv.Itoa(y), loc)
		if err != nil {
			return time.Time{}, fmt.Errorf("clock %q: %w", s, err)
		}
		if best.IsZero() || absDur(t.Sub(ref)) < absDur(best.Sub(ref)) {
			best = t
		}
	}
	return best, nil
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// lines reads r into lines without their trailing newline, tolerating
// lines up to 1 MiB.
func lines(r io.Reader) ([]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var out []string
	for sc.Scan() {
		out = append(out, strings.TrimRight(sc.Text(), "\r"))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// lineError names the line of a Maui output that failed to parse.
type lineError struct {
	what string
	line int
	text string
	err  error
}

func (e *lineError) Error() string {
	return fmt.Sprintf("%s line %d %q: %v", e.what, e.line, clipString(e.text), e.err)
}

func (e *lineError) Unwrap() error { return e.err }

func clipString(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

func atoiField(s, name string) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s %q: not an integer", name, s)
	}
	return v, nil
}

// splitNP reads showres' "N/P" column (nodes/procs).
func splitNP(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, fmt.Errorf("N/P %q: want nodes/procs", s)
	}
	n, err := atoiField(a, "nodes")
	if err != nil {
		return 0, 0, err
	}
	p, err := atoiField(b, "procs")
	return n, p, err
}
