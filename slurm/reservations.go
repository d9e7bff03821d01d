package slurm

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Reservation is one reservation of `scontrol show reservation`.
type Reservation struct {
	Name      string
	Start     time.Time
	End       time.Time
	Duration  *time.Duration // nil when Slurm prints none it can read
	Nodes     string         // hostlist expression: "ghost[1-2],vm"; ExpandHostlist lists them
	NodeCount int
	CoreCount int
	Partition string
	Flags     []string // MAINT, IGNORE_JOBS, SPEC_NODES, ALL_NODES, …
	Cores     []NodeCores
	TRES      string
	Users     []string
	Groups    []string
	Accounts  []string
	State     string // ACTIVE or INACTIVE
}

// NodeCores is the cores a core-based reservation holds on one node.
type NodeCores struct {
	Node    string
	CoreIDs string // "0-3"
}

// Maintenance says whether the reservation is a maintenance one (MAINT).
func (r Reservation) Maintenance() bool { return hasFlag(r.Flags, "MAINT") }

func hasFlag(flags []string, f string) bool {
	for _, x := range flags {
		if x == f {
			return true
		}
	}
	return false
}

// ParseReservations reads `scontrol show reservation`. Its times are in
// the client's local time zone, loc. "No reservations in the system" is
// no reservation, not an error.
func ParseReservations(r io.Reader, loc *time.Location) ([]Reservation, error) {
	var out []Reservation
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for line := 1; sc.Scan(); line++ {
		for _, p := range splitPairs(sc.Text()) {
			if p.Key == "ReservationName" {
				out = append(out, Reservation{Name: p.Value})
				continue
			}
			if len(out) == 0 {
				return nil, fmt.Errorf("scontrol show reservation: line %d: %s before any ReservationName", line, p.Key)
			}
			if err := out[len(out)-1].set(p, loc); err != nil {
				return nil, fmt.Errorf("scontrol show reservation: line %d: reservation %s: %w", line, out[len(out)-1].Name, err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("scontrol show reservation: %w", err)
	}
	return out, nil
}

// set applies one pair; unknown keys are ignored.
func (r *Reservation) set(p pair, loc *time.Location) (err error) {
	v := p.Value
	switch p.Key {
	case "StartTime":
		r.Start, err = parseTime(v, loc)
	case "EndTime":
		r.End, err = parseTime(v, loc)
	case "Duration":
		r.Duration = parseDuration(v)
	case "Nodes":
		r.Nodes = nullable(v)
	case "NodeCnt":
		r.NodeCount, err = strconv.Atoi(v)
	case "CoreCnt":
		r.CoreCount, err = strconv.Atoi(v)
	case "PartitionName":
		r.Partition = nullable(v)
	case "Flags":
		r.Flags = list(v)
	case "NodeName":
		r.Cores = append(r.Cores, NodeCores{Node: v})
	case "CoreIDs":
		if len(r.Cores) == 0 {
			return fmt.Errorf("CoreIDs without NodeName")
		}
		r.Cores[len(r.Cores)-1].CoreIDs = v
	case "TRES":
		r.TRES = nullable(v)
	case "Users":
		r.Users = list(v)
	case "Groups":
		r.Groups = list(v)
	case "Accounts":
		r.Accounts = list(v)
	case "State":
		r.State = v
	}
	if err != nil {
		return fmt.Errorf("%s=%q: %w", p.Key, v, err)
	}
	return nil
}

// parseTime reads scontrol's local "2006-01-02T15:04:05".
func parseTime(v string, loc *time.Location) (time.Time, error) {
	if loc == nil {
		loc = time.UTC
	}
	return time.ParseInLocation("2006-01-02T15:04:05", v, loc)
}

// parseDuration reads Slurm's "[days-]hours:minutes:seconds"; nil for any
// other text (UNLIMITED, N/A).
func parseDuration(v string) *time.Duration {
	days := 0
	if d, rest, ok := strings.Cut(v, "-"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return nil
		}
		days, v = n, rest
	}
	parts := strings.Split(v, ":")
	if len(parts) != 3 {
		return nil
	}
	total := time.Duration(days) * 24 * time.Hour
	for i, unit := range []time.Duration{time.Hour, time.Minute, time.Second} {
		n, err := strconv.Atoi(parts[i])
		if err != nil || n < 0 {
			return nil
		}
		total += time.Duration(n) * unit
	}
	return &total
}
