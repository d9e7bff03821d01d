package maui

import (
	"fmt"
	"io"
	"strings"
)

// ShowresRow is one line of plain `showres` (also -v, -g, -s, -r and
// --format=xml, which print the same table in 3.3.1). Start, End are
// seconds relative to Maui's clock when the command ran (negative once
// started); StartTime is the absolute stamp as printed (local time of the
// Maui host; "-v" adds the year): read it with ParseClock.
type ShowresRow struct {
	ID        string
	Type      string // "User", "Job", ...
	State     string // "R" running, "I" idle, "-" not a job
	Start     int64
	End       int64
	Duration  int64
	Nodes     int
	Procs     int
	StartTime string
}

// ParseShowres reads plain `showres` output. The trailer "N reservation(s)
// located" must agree with the rows read, so truncated output is an error.
func ParseShowres(r io.Reader) ([]ShowresRow, error) {
	ls, err := lines(r)
	if err != nil {
		return nil, fmt.Errorf("showres: %w", err)
	}
	var rows []ShowresRow
	header, located := false, -1
	for i, l := range ls {
		f := strings.Fields(l)
		switch {
		case len(f) == 0 || l == "Reservations":
		case f[0] == "ReservationID":
			header = true
		case len(f) == 3 && (f[1] == "reservations" || f[1] == "reservation") && f[2] == "located":
			if located, err = atoiField(f[0], "count"); err != nil {
				return nil, &lineError{"showres", i + 1, l, err}
			}
		case !header:
			return nil, &lineError{"showres", i + 1, l, fmt.Errorf("row before the header")}
		default:
			row, err := parseShowresRow(f)
			if err != nil {
				return nil, &lineError{"showres", i + 1, l, err}
			}
			rows = append(rows, row)
		}
	}
	if !header {
		return nil, fmt.Errorf("showres: no ReservationID header (not showres output?)")
	}
	if located != len(rows) {
		return nil, fmt.Errorf("showres: trailer says %d reservations, read %d", located, len(rows))
	}
	return rows, nil
}

func parseShowresRow(f []string) (ShowresRow, error) {
	if len(f) < 11 {
		return ShowresRow{}, fmt.Errorf("want at least 11 fields, got %d", len(f))
	}
	row := ShowresRow{ID: f[0], Type: f[1], State: f[2], StartTime: strings.Join(f[7:], " ")}
	var err error
	if row.Start, err = ParseDuration(f[3]); err != nil {
		return row, err
	}
	if row.End, err = ParseDuration(f[4]); err != nil {
		return row, err
	}
	if row.Duration, err = ParseDuration(f[5]); err != nil {
		return row, err
	}
	row.Nodes, row.Procs, err = splitNP(f[6])
	return row, err
}

// ShowresNodeRow is one line of `showres -n`: one reservation on one node.
// Tasks is Maui's task count on that node (a task is a whole node unless
// the reservation was made with -r PROCS=k).
type ShowresNodeRow struct {
	Node      string
	Type      string
	ID        string
	JobState  string // "N/A" for user reservations
	Tasks     int
	Start     int64
	Duration  int64
	StartTime string
}

// ShowresNodes is `showres -n` output: the instant it describes (as
// printed) and its rows.
type ShowresNodes struct {
	At   string
	Rows []ShowresNodeRow
}

// ParseShowresNodes reads `showres -n` (or `showres -n <id>`). The trailer
// "N nodes reserved" must agree with the rows read.
func ParseShowresNodes(r io.Reader) (ShowresNodes, error) {
	var out ShowresNodes
	ls, err := lines(r)
	if err != nil {
		return out, fmt.Errorf("showres -n: %w", err)
	}
	header, reserved := false, -1
	for i, l := range ls {
		f := strings.Fields(l)
		switch {
		case len(f) == 0:
		case strings.HasPrefix(l, "reservations on "):
			out.At = strings.TrimPrefix(l, "reservations on ")
		case f[0] == "NodeName":
			header = true
		case len(f) == 3 && f[1] == "nodes" && f[2] == "reserved":
			if reserved, err = atoiField(f[0], "count"); err != nil {
				return out, &lineError{"showres -n", i + 1, l, err}
			}
		case !header:
			return out, &lineError{"showres -n", i + 1, l, fmt.Errorf("row before the header")}
		default:
			row, err := parseShowresNodeRow(f)
			if err != nil {
				return out, &lineError{"showres -n", i + 1, l, err}
			}
			out.Rows = append(out.Rows, row)
		}
	}
	if !header {
		return out, fmt.Errorf("showres -n: no NodeName header (not showres -n output?)")
	}
	if reserved != len(out.Rows) {
		return out, fmt.Errorf("showres -n: trailer says %d rows, read %d", reserved, len(out.Rows))
	}
	return out, nil
}

func parseShowresNodeRow(f []string) (ShowresNodeRow, error) {
	if len(f) < 11 {
		return ShowresNodeRow{}, fmt.Errorf("want at least 11 fields, got %d", len(f))
	}
	row := ShowresNodeRow{Node: f[0], Type: f[1], ID: f[2], JobState: f[3], StartTime: strings.Join(f[7:], " ")}
	var err error
	if row.Tasks, err = atoiField(f[4], "tasks"); err != nil {
		return row, err
	}
	if row.Start, err = ParseDuration(f[5]); err != nil {
		return row, err
	}
	row.Duration, err = ParseDuration(f[6])
	return row, err
}
