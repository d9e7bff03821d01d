package slurm

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func open(t testing.TB, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func nodesOf(t *testing.T, name string) map[string]Node {
	t.Helper()
	nodes, err := ParseSinfoJSON(open(t, name))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]Node{}
	for _, n := range nodes {
		m[n.Name] = n
	}
	return m
}

// Each captured cluster state gives each node the condition it had.
func TestSinfoConditions(t *testing.T) {
	type want struct {
		cond          Condition
		cpus, alloc   int
		usable        bool
		partitionsLen int
	}
	for _, tc := range []struct {
		file  string
		nodes map[string]want
	}{
		{"sinfo-empty.json", map[string]want{
			"vm":     {NodeIdle, 8, 0, true, 2},
			"ghost1": {NodeDown, 4, 0, false, 1},
			"ghost2": {NodeDrained, 4, 0, false, 1}, // state unknown + DRAIN
		}},
		{"sinfo.json", map[string]want{
			"vm":     {NodeMixed, 8, 6, true, 2},
			"ghost1": {NodeDown, 4, 0, false, 1},
			"ghost2": {NodeDown, 4, 0, false, 1}, // DRAIN, and now NOT_RESPONDING too
		}},
		{"sinfo-completing.json", map[string]want{
			"vm": {NodeCompleting, 8, 0, true, 2},
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got := nodesOf(t, tc.file)
			if len(got) != 3 {
				t.Fatalf("%d nodes, want 3", len(got))
			}
			for name, w := range tc.nodes {
				n := got[name]
				if n.Condition() != w.cond || n.CPUs != w.cpus || n.AllocCPUs != w.alloc ||
					n.Usable() != w.usable || len(n.Partitions) != w.partitionsLen {
					t.Errorf("%s = %+v (condition %s, usable %v), want %+v", name, n, n.Condition(), n.Usable(), w)
				}
			}
		})
	}
}

// A drained node that responds is drained, not down.
func TestConditionOrder(t *testing.T) {
	for _, tc := range []struct {
		n    Node
		want Condition
	}{
		{Node{State: "idle", Flags: []string{"DRAIN"}}, NodeDrained},
		{Node{State: "mixed", Flags: []string{"DRAIN", "COMPLETING"}}, NodeDrained},
		{Node{State: "allocated", Flags: []string{"COMPLETING"}}, NodeCompleting},
		{Node{State: "idle", Flags: []string{"RESERVED", "PLANNED"}}, NodeIdle},
		{Node{State: "allocated"}, NodeAllocated},
		{Node{State: "future"}, NodeDown},
		{Node{State: "something-new"}, NodeUnknown},
	} {
		if got := tc.n.Condition(); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.n, got, tc.want)
		}
	}
	if (Node{State: "something-new"}).Usable() {
		t.Error("a node in an unknown state is usable")
	}
}

func TestSqueueJobs(t *testing.T) {
	jobs, err := ParseSqueueJSON(open(t, "squeue.json"))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int64]Job{}
	for _, j := range jobs {
		byID[j.ID] = j
	}
	if len(jobs) != 6 {
		t.Fatalf("%d jobs, want 6", len(jobs))
	}
	// Running: actual start, end = start + limit.
	run := byID[2]
	if run.State != "RUNNING" || !run.Running() || run.Partition != "short" || run.Nodes != "vm" ||
		run.Start == nil || run.TimeLimit == nil || *run.TimeLimit != 50*time.Minute ||
		!run.End.Equal(run.Start.Add(50*time.Minute)) || run.CPUs != 2 {
		t.Errorf("job 2 = %+v", run)
	}
	if u := byID[3]; u.User != "lkslurm" || u.UID != 1005 {
		t.Errorf("job 3 user = %q %d", u.User, u.UID)
	}
	// Pending, bound to a reservation: no planned start.
	in := byID[4]
	if in.State != "PENDING" || in.Reason != "Reservation" || in.Reservation != "grid-r1" || in.Start != nil || in.End != nil {
		t.Errorf("job 4 = %+v", in)
	}
	// Pending with backfill's plan: after job 1 ends (its end time).
	p := byID[7]
	if p.Reason != "Resources" || p.Priority != 41 || p.CPUs != 8 || p.Start == nil || !p.Start.Equal(*byID[1].End) ||
		p.Account != "" || p.QOS != "" || p.Partition != "batch" {
		t.Errorf("job 7 = %+v (job 1 ends %v)", p, byID[1].End)
	}
	if got := byID[6].Start.Format(time.RFC3339); got != "2026-11-25T19:36:01Z" {
		t.Errorf("job 6 planned start %s, want after maint-1 (ends 19:35:58)", got)
	}
	empty, err := ParseSqueueJSON(open(t, "squeue-empty.json"))
	if err != nil || len(empty) != 0 {
		t.Errorf("empty queue: %v, %v", empty, err)
	}
}

func TestReservations(t *testing.T) {
	rs, err := ParseReservations(open(t, "show-reservation-two.txt"), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 {
		t.Fatalf("%d reservations, want 2", len(rs))
	}
	r := rs[0]
	if r.Name != "grid-r1" || r.Start.Format(time.RFC3339) != "2026-11-25T17:35:58Z" ||
		r.End.Sub(r.Start) != 30*time.Minute || *r.Duration != 30*time.Minute ||
		r.Nodes != "vm" || r.NodeCount != 1 || r.CoreCount != 4 || r.Partition != "batch" ||
		len(r.Flags) != 0 || !slices.Equal(r.Users, []string{"root"}) || r.Accounts != nil ||
		!slices.Equal(r.Cores, []NodeCores{{"vm", "0-3"}}) || r.TRES != "cpu=4" || r.State != "INACTIVE" || r.Maintenance() {
		t.Errorf("grid-r1 = %+v", r)
	}
	m := rs[1]
	if m.Name != "maint-1" || !m.Maintenance() || m.CoreCount != 16 || m.Partition != "" || m.Cores != nil ||
		!slices.Equal(m.Flags, []string{"MAINT", "IGNORE_JOBS", "SPEC_NODES", "ALL_NODES"}) {
		t.Errorf("maint-1 = %+v", m)
	}
	names, err := ExpandHostlist(m.Nodes)
	if err != nil || !slices.Equal(names, []string{"ghost1", "ghost2", "vm"}) {
		t.Errorf("maint-1 nodes %q → %v, %v", m.Nodes, names, err)
	}
	none, err := ParseReservations(open(t, "show-reservation-none.txt"), time.UTC)
	if err != nil || len(none) != 0 {
		t.Errorf("no reservations: %v, %v", none, err)
	}
}

// Times are read in the client's zone.
func TestReservationZone(t *testing.T) {
	loc := time.FixedZone("X", 3600)
	rs, err := ParseReservations(open(t, "show-reservation-one.txt"), loc)
	if err != nil {
		t.Fatal(err)
	}
	if got := rs[0].Start.UTC().Format(time.RFC3339); got != "2026-11-25T16:35:58Z" {
		t.Errorf("start %s", got)
	}
}

func TestReservationErrors(t *testing.T) {
	for _, in := range []string{
		"Nodes=vm\n",
		"ReservationName=x StartTime=yesterday\n",
		"ReservationName=x CoreCnt=four\n",
		"ReservationName=x CoreIDs=0-3\n",
	} {
		if _, err := ParseReservations(stringsReader(in), time.UTC); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"00:30:00": 30 * time.Minute, "1-02:03:04": 26*time.Hour + 3*time.Minute + 4*time.Second,
	} {
		if got := parseDuration(in); got == nil || *got != want {
			t.Errorf("%s → %v", in, got)
		}
	}
	for _, in := range []string{"UNLIMITED", "N/A", "1:2", "x-00:00:01", "-1:00:00"} {
		if got := parseDuration(in); got != nil {
			t.Errorf("%s → %v, want nil", in, *got)
		}
	}
}

func TestExpandHostlist(t *testing.T) {
	for in, want := range map[string][]string{
		"ghost[1-2],vm": {"ghost1", "ghost2", "vm"},
		"n[01-03,7]":    {"n01", "n02", "n03", "n7"},
		"a[9-10]b":      {"a9b", "a10b"},
		"(null)":        nil,
		"":              nil,
	} {
		got, err := ExpandHostlist(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%q → %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"n[3-1]", "n[1-2", "n]1[", "n[1-2][3]", "n[a]", "n[1-999999999]", "a,,b"} {
		if got, err := ExpandHostlist(in); err == nil {
			t.Errorf("%q → %v, want an error", in, got)
		}
	}
}

// The lifecycle capture: a reservation active with its job running, and
// the same after a slurmctld restart on its saved state (both survive).
func TestActiveReservationAndRestart(t *testing.T) {
	for _, name := range []string{"active", "restarted"} {
		rs, err := ParseReservations(open(t, "lifecycle-show-reservation-"+name+".txt"), time.UTC)
		if err != nil || len(rs) != 1 || rs[0].State != "ACTIVE" || !slices.Equal(rs[0].Users, []string{"lkslurm"}) {
			t.Errorf("%s: %+v, %v", name, rs, err)
		}
		jobs, err := ParseSqueueJSON(open(t, "lifecycle-squeue-"+name+".json"))
		if err != nil || len(jobs) != 2 {
			t.Fatalf("%s: %+v, %v", name, jobs, err)
		}
		j := jobs[1]
		if !j.Running() || j.Reservation != "grid-a" || j.Start.Before(rs[0].Start) {
			t.Errorf("%s: job %+v in %+v", name, j, rs[0])
		}
	}
}

// A reservation ends with jobs still pending in it (one held, one too big
// for it): until slurmctld purges it they pend naming it; then they are
// RESV_DEL_HOLD, priority 0, no reservation, no planned start.
func TestJobsLeftByAnEndedReservation(t *testing.T) {
	after, err := ParseSqueueJSON(open(t, "resv-end-squeue-after.json"))
	if err != nil || len(after) != 2 {
		t.Fatalf("%+v, %v", after, err)
	}
	for _, j := range after {
		if j.State != "PENDING" || j.Reservation != "grid-e" {
			t.Errorf("before the purge: %+v", j)
		}
	}
	purged, err := ParseSqueueJSON(open(t, "resv-end-squeue-purged.json"))
	if err != nil || len(purged) != 2 {
		t.Fatalf("%+v, %v", purged, err)
	}
	for _, j := range purged {
		if j.State != "RESV_DEL_HOLD" || j.Reason != "ReservationDeleted" || j.Reservation != "" ||
			j.Priority != 0 || j.Start != nil || j.Running() {
			t.Errorf("after the purge: %+v", j)
		}
	}
}
