package slurm

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ReservationSpec is a reservation to create. Either Nodes (a hostlist) or
// NodeCount (with CoreCount for a core-based one) says where.
type ReservationSpec struct {
	Name      string
	Users     []string
	Start     time.Time
	Duration  time.Duration // whole seconds
	Nodes     string
	NodeCount int
	CoreCount int
	// CoreCounts, with Nodes, are the cores on each node in Slurm's node
	// order (scontrol's CoreCnt=2,4 array); CoreCount is then unused.
	CoreCounts []int
	// End, when set, is the exact end (endtime=); Duration is then
	// unused. Slurm reads a duration in whole minutes.
	End       time.Time
	Partition string
	Flags     []string
}

// Code is a stable answer code of a reservation request.
type Code string

// The answers seen from Slurm 22.05 (testdata/README.md); any other
// refusal is an error carrying Slurm's message until it is captured.
const (
	Created   Code = "created"
	Deleted   Code = "deleted"
	Updated   Code = "updated"    // "Reservation updated."
	NodesBusy Code = "nodes_busy" // "Requested nodes are busy": overlap, or running jobs without ignore_jobs
	// "Invalid user id": the caller may not create reservations, or
	// users= names a user slurmctld does not know (the same words).
	NotOperator  Code = "not_operator"
	BadPartition Code = "bad_partition" // "Invalid partition name specified"
	InUse        Code = "in_use"        // "Requested reservation is in use": jobs are queued in it
	Exists       Code = "exists"        // "Duplicate reservation name": compare it before taking it as ours
	NoSuch       Code = "no_such"       // "Requested reservation is invalid": no reservation of that name
)

// Answer is Slurm's answer to a reservation request: a code and, for a
// refusal, Slurm's words.
type Answer struct {
	Code   Code
	Reason string
}

// Ok says whether the request was done.
func (a Answer) Ok() bool { return a.Code == Created || a.Code == Deleted }

// CreateArgs is the scontrol argument vector creating spec; times are
// written in loc, the zone scontrol reads them in.
func CreateArgs(spec ReservationSpec, loc *time.Location) ([]string, error) {
	if spec.Name == "" || len(spec.Users) == 0 || spec.Start.IsZero() ||
		(spec.End.IsZero() && spec.Duration < time.Second) || (!spec.End.IsZero() && !spec.End.After(spec.Start)) {
		return nil, fmt.Errorf("reservation %q: a name, users, a start and an end or a duration of at least 1 s are needed", spec.Name)
	}
	if (spec.Nodes == "") == (spec.NodeCount == 0) {
		return nil, fmt.Errorf("reservation %q: exactly one of nodes and a node count", spec.Name)
	}
	args := []string{"create", "reservation", "reservationname=" + spec.Name,
		"users=" + strings.Join(spec.Users, ","),
		"starttime=" + spec.Start.In(loc).Format("2006-01-02T15:04:05")}
	if !spec.End.IsZero() {
		args = append(args, "endtime="+spec.End.In(loc).Format("2006-01-02T15:04:05"))
	} else {
		args = append(args, "duration="+formatDuration(spec.Duration))
	}
	if spec.Nodes != "" {
		args = append(args, "nodes="+spec.Nodes)
	} else {
		args = append(args, fmt.Sprintf("nodecnt=%d", spec.NodeCount))
	}
	switch {
	case len(spec.CoreCounts) > 0:
		cs := make([]string, len(spec.CoreCounts))
		for i, n := range spec.CoreCounts {
			cs[i] = strconv.Itoa(n)
		}
		args = append(args, "corecnt="+strings.Join(cs, ","))
	case spec.CoreCount > 0:
		args = append(args, fmt.Sprintf("corecnt=%d", spec.CoreCount))
	}
	if spec.Partition != "" {
		args = append(args, "partition="+spec.Partition)
	}
	if len(spec.Flags) > 0 {
		args = append(args, "flags="+strings.Join(spec.Flags, ","))
	}
	return args, nil
}

// formatDuration writes Slurm's days-hours:minutes:seconds.
func formatDuration(d time.Duration) string {
	s := int64(d / time.Second)
	return fmt.Sprintf("%d-%02d:%02d:%02d", s/86400, s%86400/3600, s%3600/60, s%60)
}

// CreateReservation asks slurmctld for spec. A refusal Slurm explains in
// words seen before is an Answer; anything else is an error.
func (c *Client) CreateReservation(ctx context.Context, spec ReservationSpec) (Answer, error) {
	args, err := CreateArgs(spec, c.loc())
	if err != nil {
		return Answer{}, err
	}
	res, err := c.Run.Run(ctx, "scontrol", args...)
	if err != nil {
		return Answer{}, fmt.Errorf("scontrol create reservation %s: %w", spec.Name, err)
	}
	return classifyCreate(spec.Name, res.ExitCode, message(res))
}

func classifyCreate(name string, exit int, msg string) (Answer, error) {
	switch {
	case exit == 0 && strings.Contains(msg, "Reservation created: "+name):
		return Answer{Code: Created}, nil
	case exit != 0 && strings.Contains(msg, "Duplicate reservation name"):
		return Answer{Code: Exists, Reason: firstLine(msg)}, nil
	case exit != 0:
		if a, ok := refusal(msg); ok {
			return a, nil
		}
	}
	return Answer{}, fmt.Errorf("scontrol create reservation %s: exit %d: %s", name, exit, msg)
}

// NarrowArgs is the scontrol argument vector setting reservation name's
// ACL back to users alone in place: no accounts, the flags drop removed,
// and partition when given. Its nodes, cores and times are left, and so
// are the jobs queued in it (a delete is refused while there are any).
func NarrowArgs(name string, users, drop []string, partition string) []string {
	args := []string{"update", "reservationname=" + name, "users=" + strings.Join(users, ","), "accounts="}
	if len(drop) > 0 {
		args = append(args, "flags-="+strings.Join(drop, ","))
	}
	if partition != "" {
		args = append(args, "partition="+partition)
	}
	return args
}

// NarrowReservation runs NarrowArgs. slurmctld re-checks the cores on any
// update and refuses it (nodes_busy) while another job runs on the
// reservation's nodes.
func (c *Client) NarrowReservation(ctx context.Context, name string, users, drop []string, partition string) (Answer, error) {
	res, err := c.Run.Run(ctx, "scontrol", NarrowArgs(name, users, drop, partition)...)
	if err != nil {
		return Answer{}, fmt.Errorf("scontrol update reservation %s: %w", name, err)
	}
	return classifyUpdate(name, res.ExitCode, message(res))
}

func classifyUpdate(name string, exit int, msg string) (Answer, error) {
	switch {
	case exit == 0 && strings.Contains(msg, "Reservation updated"):
		return Answer{Code: Updated}, nil
	case exit != 0 && strings.Contains(msg, "Requested reservation is invalid"):
		return Answer{Code: NoSuch, Reason: firstLine(msg)}, nil
	case exit != 0:
		if a, ok := refusal(msg); ok {
			return a, nil
		}
	}
	return Answer{}, fmt.Errorf("scontrol update reservation %s: exit %d: %s", name, exit, msg)
}

// refusal classifies the refusals a create and an update share.
func refusal(msg string) (Answer, bool) {
	for _, r := range []struct {
		words string
		code  Code
	}{{"Requested nodes are busy", NodesBusy}, {"Invalid user id", NotOperator}, {"Invalid partition name", BadPartition}} {
		if strings.Contains(msg, r.words) {
			return Answer{Code: r.code, Reason: firstLine(msg)}, true
		}
	}
	return Answer{}, false
}

// DeleteReservation asks slurmctld to delete the named reservation.
func (c *Client) DeleteReservation(ctx context.Context, name string) (Answer, error) {
	res, err := c.Run.Run(ctx, "scontrol", "delete", "reservationname="+name)
	if err != nil {
		return Answer{}, fmt.Errorf("scontrol delete reservation %s: %w", name, err)
	}
	return classifyDelete(name, res.ExitCode, message(res))
}

func classifyDelete(name string, exit int, msg string) (Answer, error) {
	switch {
	case exit == 0:
		return Answer{Code: Deleted}, nil
	case strings.Contains(msg, "Requested reservation is in use"):
		return Answer{Code: InUse, Reason: firstLine(msg)}, nil
	case strings.Contains(msg, "Requested reservation is invalid"):
		return Answer{Code: NoSuch, Reason: firstLine(msg)}, nil
	}
	return Answer{}, fmt.Errorf("scontrol delete reservation %s: exit %d: %s", name, exit, msg)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
