package simsite

import (
	"context"
	"errors"
	"testing"
	"time"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/wire"
)

const t0 = int64(1763780000)

type clock struct{ t int64 }

func (c *clock) now() time.Time { return time.Unix(c.t, 0) }

func newSite(t *testing.T, c *clock, jobs ...sim.Job) *Site {
	s, err := New(Config{Site: "s", Nodes: 2, PPN: 4, Policy: sim.EASY, Workload: jobs, Start: t0, Clock: c.now})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func running(snap forecast.Snapshot) map[string]bool {
	out := map[string]bool{}
	for _, j := range snap.Jobs {
		if j.Running() {
			out[j.ID] = true
		}
	}
	return out
}

func TestWorkloadFollowsTheClock(t *testing.T) {
	c := &clock{t0}
	s := newSite(t, c, sim.Job{ID: "a", Procs: 8, Walltime: 100, Runtime: 100, Submit: 0},
		sim.Job{ID: "b", Procs: 4, Walltime: 100, Runtime: 50, Submit: 10},
		sim.Job{ID: "wide", Procs: 9, Walltime: 100, Runtime: 100, Submit: 0})
	snap, _ := s.Snapshot(context.Background())
	if r := running(snap); !r["a"] || len(r) != 1 || snap.Site != "s" || len(snap.Nodes) != 2 || snap.Nodes[0].Name != "s-n0001" {
		t.Fatalf("at t0: %+v", snap)
	}
	c.t = t0 + 120
	snap, _ = s.Snapshot(context.Background())
	if r := running(snap); !r["b"] || r["a"] {
		t.Fatalf("at t0+120 running %v, want b only", r)
	}
	if s.Rejected() != 1 {
		t.Fatalf("rejected %d, want the 9-proc job on 8 procs", s.Rejected())
	}
}

func TestReservationHoldsProcessorsAgainstLocalJobs(t *testing.T) {
	c := &clock{t0}
	s := newSite(t, c, sim.Job{ID: "late", Procs: 8, Walltime: 100, Runtime: 100, Submit: 60})
	ctx := context.Background()
	spec := agent.ReserveSpec{Job: "g1", Start: t0 + 30, End: t0 + 130,
		Nodes: []wire.NodeProcs{{Node: "s-n0001", Procs: 4}}, Identity: wire.Identity{Account: "acct"}}
	got, err := s.Reserve(ctx, spec)
	if err != nil || len(got.Reservations) != 1 || got.Reservations[0].ID != "g1.0" ||
		got.Reservations[0].Submit != "-A acct -W x=FLAGS:ADVRES:g1.0" {
		t.Fatalf("reserve: %+v %v", got, err)
	}
	if _, err := s.Reserve(ctx, agent.ReserveSpec{Job: "g2", Start: t0 + 30, End: t0 + 130,
		Nodes: []wire.NodeProcs{{Node: "s-n0001", Procs: 1}}}); !errors.Is(err, agent.ErrScheduler) {
		t.Fatalf("over-full reserve: %v, want ErrScheduler", err)
	}
	c.t = t0 + 70
	snap, _ := s.Snapshot(ctx)
	if running(snap)["late"] {
		t.Fatal("the 8-proc local job started inside the reservation")
	}
	list, _ := s.List(ctx)
	if len(list) != 1 || list[0].Job != "g1" || list[0].Identity.Account != "acct" {
		t.Fatalf("list %+v", list)
	}
	rel, _ := s.Release(ctx, "g1")
	again, _ := s.Release(ctx, "g1")
	if len(rel.IDs) != 1 || len(again.IDs) != 0 {
		t.Fatalf("release %+v then %+v", rel, again)
	}
	c.t = t0 + 71
	snap, _ = s.Snapshot(ctx)
	if !running(snap)["late"] {
		t.Fatal("the local job did not start once the reservation was released")
	}
}
