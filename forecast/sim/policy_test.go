package sim

import (
	"errors"
	"testing"

	"lookahead/forecast"
)

func j(id string, procs int, wall, run, submit int64) Job {
	return Job{ID: id, Procs: procs, Walltime: wall, Runtime: run, Submit: submit}
}

// Four single-processor nodes. A (2p) and X (1p) run from 0; B (2p) gets
// the first reservation at 10; C (4p) is the second blocked job; D (1p, 30
// s) fits now but would push C back.
func depthScenario() []Job {
	return []Job{
		j("A", 2, 10, 10, 0), j("X", 1, 20, 20, 0),
		j("B", 2, 10, 10, 1), j("C", 4, 10, 10, 2), j("D", 1, 30, 30, 3),
	}
}

func TestPoliciesHandComputed(t *testing.T) {
	cases := []struct {
		policy Policy
		want   map[string]int64
	}{
		// EASY reserves only for B: D backfills at 3 and delays C to 33.
		{EASY, map[string]int64{"A": 0, "X": 0, "B": 10, "C": 33, "D": 3}},
		// Conservative also reserves C at 20, so D waits until 30.
		{Conservative, map[string]int64{"A": 0, "X": 0, "B": 10, "C": 20, "D": 30}},
		{Policy{Depth: 2}, map[string]int64{"A": 0, "X": 0, "B": 10, "C": 20, "D": 30}},
		// FCFS: nothing passes B or C.
		{FCFS, map[string]int64{"A": 0, "X": 0, "B": 10, "C": 20, "D": 30}},
	}
	for _, tc := range cases {
		t.Run(tc.policy.String(), func(t *testing.T) {
			c, jobs := PoolCluster(4), depthScenario()
			res, err := Run(c, jobs, tc.policy)
			if err != nil {
				t.Fatal(err)
			}
			checkReplay(t, c, jobs, res)
			got := startsOf(res)
			for id, w := range tc.want {
				if got[id] != w {
					t.Errorf("%s starts at %d, want %d (all: %v)", id, got[id], w, got)
				}
			}
		})
	}
}

// A backfill that would delay the reserved job must not happen: C (1p,
// 20 s) fits now but would run past B's reservation at 10, which needs all
// 4 processors; D (2p, 5 s) ends before it and backfills.
func TestEASYNoDelayingBackfill(t *testing.T) {
	c := PoolCluster(4)
	jobs := []Job{j("A", 2, 10, 10, 0), j("B", 4, 10, 10, 1), j("C", 1, 20, 20, 2), j("D", 2, 5, 5, 3)}
	res, err := Run(c, jobs, EASY)
	if err != nil {
		t.Fatal(err)
	}
	checkReplay(t, c, jobs, res)
	want := map[string]int64{"A": 0, "B": 10, "C": 20, "D": 3}
	got := startsOf(res)
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s starts at %d, want %d (all: %v)", id, got[id], w, got)
		}
	}
}

// FCFS never lets a later job pass: C would fit at 2 but waits behind B.
func TestFCFSOrder(t *testing.T) {
	c := PoolCluster(4)
	jobs := []Job{j("A", 4, 10, 10, 0), j("B", 2, 10, 10, 1), j("C", 1, 2, 2, 2), j("D", 3, 5, 5, 3)}
	res, _ := Run(c, jobs, FCFS)
	checkReplay(t, c, jobs, res)
	want := map[string]int64{"A": 0, "B": 10, "C": 10, "D": 20}
	got := startsOf(res)
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s starts at %d, want %d (all: %v)", id, got[id], w, got)
		}
	}
}

// Torque kills a job at its walltime: runtime 50 with a 10 s limit ends at
// start+10, and the job behind it starts then.
func TestKilledAtWalltime(t *testing.T) {
	c := PoolCluster(2)
	jobs := []Job{j("long", 2, 10, 50, 0), j("next", 2, 10, 5, 0)}
	res, _ := Run(c, jobs, EASY)
	checkReplay(t, c, jobs, res)
	for _, r := range res.Jobs {
		switch r.ID {
		case "long":
			if r.End != 10 {
				t.Errorf("long ends at %d, want 10 (killed at its walltime)", r.End)
			}
		case "next":
			if r.Start != 10 || r.End != 15 {
				t.Errorf("next runs [%d, %d), want [10, 15)", r.Start, r.End)
			}
		}
	}
}

func TestPriorityThenSubmitThenID(t *testing.T) {
	c := PoolCluster(1)
	jobs := []Job{
		j("10", 1, 10, 10, 0), j("9", 1, 10, 10, 0), j("b", 1, 10, 10, 0),
		{ID: "hi", Procs: 1, Walltime: 10, Runtime: 10, Submit: 5, Priority: 7},
	}
	jobs[0].Submit = 0
	res, _ := Run(c, jobs, FCFS)
	checkReplay(t, c, jobs, res)
	// at 0: 9, 10, b are queued; 9 < 10 numerically. At 10 "hi" (higher
	// priority, submitted at 5) passes 10 and b.
	want := map[string]int64{"9": 0, "hi": 10, "10": 20, "b": 30}
	got := startsOf(res)
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s starts at %d, want %d (all: %v)", id, got[id], w, got)
		}
	}
}

func TestRejectsTooWide(t *testing.T) {
	c := PoolCluster(4)
	jobs := []Job{j("ok", 4, 10, 10, 0), j("wide", 5, 10, 10, 0), j("zero", 0, 10, 10, 0)}
	res, _ := Run(c, jobs, EASY)
	checkReplay(t, c, jobs, res)
	if res.Metrics.Rejected != 2 || len(res.Jobs) != 1 {
		t.Fatalf("rejected %v, ran %d; want wide and zero rejected", res.Rejected, len(res.Jobs))
	}
}

func TestReservationNodes(t *testing.T) {
	c := UniformCluster(2, 2)
	e := NewEngine(c, EASY, 0)
	if err := e.Reserve(forecast.Reservation{ID: "g1", Start: 5, End: 15, Hosts: []forecast.HostProcs{{Node: "n0001", Procs: 2}}}); err != nil {
		t.Fatal(err)
	}
	e.Submit(j("J1", 2, 10, 10, 0))
	e.Submit(j("J2", 2, 10, 10, 0))
	evs := e.AdvanceTo(100)
	got := map[string]Event{}
	for _, ev := range evs {
		if ev.Kind == Started {
			got[ev.Job] = ev
		}
	}
	if g := got["J1"]; g.Start != 0 || g.Hosts[0].Node != "n0002" {
		t.Errorf("J1 %+v, want start 0 on n0002 (n0001 is reserved from 5)", g)
	}
	if g := got["J2"]; g.Start != 10 || g.Hosts[0].Node != "n0002" {
		t.Errorf("J2 %+v, want start 10 on n0002", g)
	}
	err := e.Reserve(forecast.Reservation{ID: "g2", Start: 100, End: 200, Hosts: []forecast.HostProcs{{Node: "n0001", Procs: 3}}})
	if !errors.Is(err, ErrNoCapacity) {
		t.Errorf("over-capacity reservation: err %v, want ErrNoCapacity", err)
	}
}

func TestReserveRefusesRunningOverlap(t *testing.T) {
	e := NewEngine(UniformCluster(1, 4), EASY, 0)
	e.Submit(j("J", 3, 100, 100, 0))
	e.AdvanceTo(1)
	err := e.Reserve(forecast.Reservation{ID: "g", Start: 50, End: 60, Hosts: []forecast.HostProcs{{Node: "n0001", Procs: 2}}})
	if !errors.Is(err, ErrNoCapacity) {
		t.Fatalf("err %v, want ErrNoCapacity (J holds 3 of 4 until 100)", err)
	}
	if err := e.Reserve(forecast.Reservation{ID: "g", Start: 50, End: 60, Hosts: []forecast.HostProcs{{Node: "n0001", Procs: 1}}}); err != nil {
		t.Fatal(err)
	}
	if !e.Release("g") || e.Release("g") {
		t.Error("Release: want true then false")
	}
}

func TestParsePolicy(t *testing.T) {
	for in, want := range map[string]Policy{"fcfs": FCFS, "EASY": EASY, "conservative": Conservative, "depth=3": {Depth: 3}} {
		got, err := ParsePolicy(in)
		if err != nil || got != want {
			t.Errorf("ParsePolicy(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"depth=-1", "depth=x", "lifo"} {
		if _, err := ParsePolicy(bad); err == nil {
			t.Errorf("ParsePolicy(%q): want an error", bad)
		}
	}
}

// Verify must catch what it promises to catch.
func TestVerifyCatches(t *testing.T) {
	c := PoolCluster(2)
	jobs := []Job{j("a", 2, 10, 10, 0), j("b", 2, 10, 10, 0)}
	res, _ := Run(c, jobs, EASY)
	checkReplay(t, c, jobs, res)
	bad := res
	bad.Jobs = append([]JobResult(nil), res.Jobs...)
	bad.Jobs[1].Start, bad.Jobs[1].End = bad.Jobs[0].Start, bad.Jobs[0].End
	bad.Jobs[1].Hosts = bad.Jobs[0].Hosts
	if Verify(c, jobs, bad) == nil {
		t.Error("two 2-proc jobs on 2 processors at once: Verify passed")
	}
	bad.Jobs = res.Jobs[:1]
	if Verify(c, jobs, bad) == nil {
		t.Error("a lost job: Verify passed")
	}
}
