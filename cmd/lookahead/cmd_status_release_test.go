package main

import (
	"bytes"
	"strings"
	"testing"

	"lookahead/forecast"
	"lookahead/wire"
)

// A job that no longer holds its reservations shows each one released, or
// its release pending while a site still owes it (seen live: a finished
// job's reservation was listed as if it still held, "→ (in 6m)").
func TestStatusSaysWhetherReservationsAreReleased(t *testing.T) {
	res := []wire.Reservation{{ID: "la.g1.0", Site: "a", Start: 100, End: 700}, {ID: "g1.0", Site: "b", Start: 100, End: 700}}
	for _, c := range []struct {
		state     string
		releasing []string
		want      []string
	}{
		{wire.JobReserved, nil, []string{"on a, ", "on b, "}},
		{wire.JobFinished, []string{"b"}, []string{"(released)", "(release pending)"}},
		{wire.JobCancelled, nil, []string{"(released)", "(released)"}},
	} {
		var b bytes.Buffer
		j := wire.JobStatus{Job: forecast.JobRequest{ID: "g1", Procs: 1, Walltime: 600}, State: c.state, Reservations: res, Releasing: c.releasing}
		if err := writeJobDetail(&b, j, 50); err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, l := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(l, "reservation") {
				lines = append(lines, l)
			}
		}
		for i, want := range c.want {
			if i >= len(lines) || !strings.Contains(lines[i], want) || (c.state == wire.JobReserved && strings.Contains(lines[i], "release")) {
				t.Errorf("%s: reservation lines %q, want %q in line %d", c.state, lines, want, i)
			}
		}
	}
}

// A job reserved on one site that still owes a release to another (a
// site that did not answer its reserve request, seen live) says so in
// the table too, not only in -o json; a job that no longer holds its
// reservations shows it on the reservation line, not twice.
func TestStatusShowsAReleaseOwedElsewhere(t *testing.T) {
	res := []wire.Reservation{{ID: "la.g1.0", Site: "beta", Start: 100, End: 700}}
	for _, c := range []struct {
		state     string
		releasing []string
		want      string
	}{
		{wire.JobReserved, []string{"vm"}, "release owed  vm"},
		{wire.JobWaiting, []string{"vm"}, "release owed  vm"},
		{wire.JobFinished, []string{"beta"}, ""},
		{wire.JobReserved, nil, ""},
	} {
		var b bytes.Buffer
		j := wire.JobStatus{Job: forecast.JobRequest{ID: "g1", Procs: 1, Walltime: 600}, State: c.state, Reservations: res, Releasing: c.releasing}
		if err := writeJobDetail(&b, j, 50); err != nil {
			t.Fatal(err)
		}
		got := b.String()
		if c.want == "" && strings.Contains(got, "release owed") || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s releasing %v: want %q in\n%s", c.state, c.releasing, c.want, got)
		}
	}
}

// The detail shows the criterion the broker says it plans the job with
// (its planning.criterion for a job that omits one), not the format's
// default.
func TestStatusShowsTheBrokersCriterion(t *testing.T) {
	var b bytes.Buffer
	j := wire.JobStatus{Job: forecast.JobRequest{ID: "g1", Procs: 1, Walltime: 600}, State: wire.JobWaiting, Criterion: forecast.EarliestFinish}
	if err := writeJobDetail(&b, j, 50); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), forecast.EarliestFinish) || strings.Contains(b.String(), forecast.LeastHeld) {
		t.Errorf("detail:\n%s", b.String())
	}
}
