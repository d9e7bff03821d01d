package sim

import (
	"strings"
	"testing"

	"lookahead/forecast"
)

// TestShortChunkStart: under LASTAVAILABLE, NODECFG[DEFAULT] MAXPROC=7
// lets each idle 8-processor node give a job of 2 per node 7 tasks, which
// MJobAllocMNL adds up before MJobDistributeTasks rounds each node down:
// 7 + 7 >= 14 takes two nodes, rounded to 6 + 6, so Maui starts the job
// on 12 of its 14 tasks (nodeheld2's j0012, 54 of 60). Other allocation
// policies keep the counts rounded and give it all 14.
func TestShortChunkStart(t *testing.T) {
	jobs := []Job{{ID: "a", Procs: 14, PPN: 2, Walltime: 100, Runtime: 100, User: "u"}}
	for _, tc := range []struct {
		alloc string
		held  int
		hosts string
	}{
		{"LASTAVAILABLE", 12, "n0003:n0002"},
		{"FIRSTAVAILABLE", 0, "n0001:n0002:n0003"},
		{"PRIORITY", 0, "n0001:n0002:n0003"},
	} {
		mc := readCfg(t, "RESERVATIONDEPTH 1\nNODEALLOCATIONPOLICY "+tc.alloc+"\nNODECFG[DEFAULT] MAXPROC=7\n")
		res, err := Run(UniformCluster(3, 8), jobs, mc.Policy)
		if err == nil {
			err = Verify(UniformCluster(3, 8), jobs, res)
		}
		if err != nil {
			t.Fatal(err)
		}
		got := res.Jobs[0]
		if got.Start != 0 || got.Held != tc.held || hostNames(got.Hosts) != tc.hosts {
			t.Errorf("%s: a at %d held %d on %s, want 0 held %d on %s", tc.alloc, got.Start, got.Held, hostNames(got.Hosts), tc.held, tc.hosts)
		}
		// the metrics weigh what it held (12 × 100 s over 24 processors ×
		// 100 s) and count it short
		if short, u := res.Metrics.Short, res.Metrics.Utilization; short != min(tc.held, 1) || u != float64(got.HeldProcs())/24 {
			t.Errorf("%s: metrics count %d short, utilization %.3f", tc.alloc, short, u)
		}
	}
}

// TestShortChunkSlots: a quiet node's range counts its job slots (its own
// MAXPROC) before the chunks are rounded: n0003 (MAXPROC 3) gives 2, not
// the 3 MNodeCheckPolicies allows, so 7 + 2 + ... takes a third node
// (nodeheld2 +75959 s, n033).
func TestShortChunkSlots(t *testing.T) {
	mc := readCfg(t, "RESERVATIONDEPTH 1\nNODEALLOCATIONPOLICY LASTAVAILABLE\nNODECFG[DEFAULT] MAXPROC=7\nNODECFG[n0003] MAXPROC=3\n")
	jobs := []Job{{ID: "a", Procs: 10, PPN: 2, Walltime: 100, Runtime: 100, User: "u"}}
	got := runVerified(t, UniformCluster(3, 8), jobs, mc.Policy)["a"]
	// n0003 2 (slots 3, rounded) + n0002 7 = 9 < 10: n0001 too; 2 + 6 + 2
	if got.Start != 0 || got.Held != 0 || hostNames(got.Hosts) != "n0003:n0002:n0001" {
		t.Errorf("a at %d held %d on %v, want 0, all 10 on n0003:n0002:n0001", got.Start, got.Held, got.Hosts)
	}
}

// A job started short keeps its recorded processors consistent: Verify
// refuses a short job that does not ask for chunks, or holds part of one.
func TestVerifyShortJobs(t *testing.T) {
	c := UniformCluster(2, 8)
	res := func(held int, hosts ...int) Result {
		r := JobResult{ID: "a", Procs: 14, Start: 0, End: 10, Walltime: 100, Held: held}
		for k, p := range hosts {
			r.Hosts = append(r.Hosts, forecast.HostProcs{Node: c.Nodes[k].Name, Procs: p})
		}
		return Result{Jobs: []JobResult{r}}
	}
	chunked := []Job{{ID: "a", Procs: 14, PPN: 2, Walltime: 100}}
	if err := Verify(c, chunked, res(12, 6, 6)); err != nil {
		t.Errorf("12 of 14 in chunks of 2: %v", err)
	}
	for _, tc := range []struct {
		name string
		jobs []Job
		res  Result
		want string
	}{
		{"no chunks", []Job{{ID: "a", Procs: 14, Walltime: 100}}, res(12, 6, 6), "asked for 14"},
		{"half a chunk", chunked, res(11, 6, 5), "not whole chunks"},
		{"held not its hosts", chunked, res(12, 6, 4), "10 processors, 12 recorded"},
	} {
		if err := Verify(c, tc.jobs, tc.res); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// The first reservation of a pass for a job of whole chunks under
// LASTAVAILABLE: Maui's ranges sum each node's tasks before rounding
// (distributeChunks books the same way), so with n0001 and n0002 at 7
// slots (own MAXPROC 7) and n0003 running 4 tasks, an 18-task job of 2 per
// node fits now (7 + 7 + 4), booked short on 6 + 6 + 4 — not at +1000,
// as the counts rounded first (6 + 6 + 4 = 16) would have it (nodeheld2
// +3521 s, j0080).
func TestShortChunkFirstReservation(t *testing.T) {
	mc := readCfg(t, "RESERVATIONDEPTH 1\nNODEALLOCATIONPOLICY LASTAVAILABLE\nNODECFG[n0001] MAXPROC=7\nNODECFG[n0002] MAXPROC=7\n")
	e := NewEngine(UniformCluster(3, 8), mc.Policy, 0)
	e.Submit(Job{ID: "run", Procs: 4, Walltime: 1000, Runtime: 1000, Submit: 0})
	e.AdvanceTo(0)
	if len(e.nodes[2].run) != 1 {
		t.Fatalf("the running job is not on n0003: %+v", e.nodes)
	}
	big := &job{Job: Job{ID: "big", Procs: 18, PPN: 2, Walltime: 500}}
	if !e.holdAt(big, 0) {
		t.Fatal("does not fit now")
	}
	b := e.blocked[len(e.blocked)-1]
	if b.per[0] != 6 || b.per[1] != 6 || b.per[2] != 4 {
		t.Errorf("booked %v, want 6, 6 and 4", b.per)
	}
}

// After IdleJobFound, a job whose new reservation starts now starts on it
// (MQueueScheduleIJobs: "job reservation created for immediate use"), and
// MJobPReserve has counted that reservation against the depth all the
// same: with RESERVATIONDEPTH 2 and one reservation made, none is left
// (nodeheld2 +21832 s: j0075 in the second call, after which j0091 got no
// reservation and j0128 backfilled on its nodes).
func TestReservationUsedAtOnceCounts(t *testing.T) {
	e := NewEngine(UniformCluster(2, 4), Policy{Depth: 2, Backfill: FirstFit}, 0)
	j := newJob(Job{ID: "a", Procs: 2, Walltime: 100, Runtime: 100}, 1)
	e.buildProfile()
	ps := passState{q: []*job{j}, w: 1, reserved: 1, room: true, idle: true}
	e.passReserve(&ps, j)
	if !j.started {
		t.Fatal("a did not start on its reservation")
	}
	if ps.reserved != 2 || ps.room {
		t.Errorf("%d reservations counted, room %v: want 2 and no room", ps.reserved, ps.room)
	}
}
