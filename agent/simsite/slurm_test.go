package simsite

import (
	"context"
	"strings"
	"testing"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/torque"
	"lookahead/wire"
)

// The agent's Slurm adapter over the simulated Slurm cluster: a grid
// reservation named for the job, a part submitted with sbatch into it that
// runs and reports its exit status, a release that cancels a part still
// queued before it deletes the reservation, and the workload's jobs in
// the snapshot.
func TestSlurmClusterUnderTheAgentsAdapter(t *testing.T) {
	c := &clock{t0}
	s := newSite(t, c, sim.Job{ID: "s.7", Procs: 2, Walltime: 3600, Runtime: -1, Submit: 0})
	site := &agent.SlurmSite{Client: SlurmCluster{Site: s}, Site: "s", Prefix: "la.", Now: c.now}
	ctx := context.Background()
	spec := agent.ReserveSpec{Job: "g1", Start: t0 + 60, End: t0 + 960, Nodes: []wire.NodeProcs{{Node: "s-n0001", Procs: 4}},
		Identity: wire.Identity{User: "alice"}}
	res, err := site.Reserve(ctx, spec)
	if err != nil || len(res.Reservations) != 1 || res.Reservations[0].ID != "la.g1" || !strings.Contains(res.Reservations[0].Submit, "--reservation=la.g1") {
		t.Fatalf("reserve: %+v, %v", res, err)
	}
	if again, err := site.Reserve(ctx, spec); err != nil || again.Reservations[0].ID != "la.g1" {
		t.Fatalf("retry: %+v, %v", again, err)
	}
	q := torque.QsubSpec{User: "alice", UID: 1001, Name: "la.g1.0", Walltime: 600, Bind: []string{"--reservation=la.g1"},
		Nodes: []forecast.HostProcs{{Node: "s-n0001", Procs: 4}}, Output: "/home/alice/o", Error: "/home/alice/e",
		Script: []byte("#lookahead-sim runtime=2m exit=3\n")}
	id, argv, err := site.Submit(ctx, q)
	if err != nil || argv[0] != "sbatch" {
		t.Fatalf("submit: %v %q", err, argv)
	}
	c.t = t0 + 300
	jobs, _, _ := site.Jobs(ctx)
	if len(jobs) != 1 || jobs[0].ID != id || !jobs[0].Done() || jobs[0].ExitStatus == nil || *jobs[0].ExitStatus != 3 || jobs[0].Started != t0+60 {
		t.Fatalf("part %+v", jobs)
	}
	snap, err := site.Snapshot(ctx)
	if err != nil || len(snap.Jobs) != 2 || snap.Jobs[0].ID != "7" || !snap.Jobs[0].Running() || snap.Jobs[1].State != "C" ||
		len(snap.Reservations) != 1 || snap.Reservations[0].Job != "g1" {
		t.Fatalf("snapshot %+v, %v", snap, err)
	}

	later := agent.ReserveSpec{Job: "g2", Start: t0 + 3600, End: t0 + 4000, Nodes: []wire.NodeProcs{{Node: "s-n0001", Procs: 2}},
		Identity: wire.Identity{User: "alice"}}
	if _, err := site.Reserve(ctx, later); err != nil {
		t.Fatal(err)
	}
	q.Name, q.Bind, q.Nodes = "la.g2.0", []string{"--reservation=la.g2"}, []forecast.HostProcs{{Node: "s-n0001", Procs: 2}}
	if _, _, err := site.Submit(ctx, q); err != nil {
		t.Fatal(err)
	}
	if a, _ := (SlurmCluster{Site: s}).DeleteReservation(ctx, "la.g2"); a.Code != "in_use" {
		t.Fatalf("delete with a queued part: %+v", a)
	}
	rel, err := site.Release(ctx, "g2")
	if err != nil || len(rel.IDs) != 1 || rel.Commands[0][0] != "scancel" {
		t.Fatalf("release: %+v, %v", rel, err)
	}
	if rs, _ := site.List(ctx); len(rs) != 1 || rs[0].ID != "la.g1" {
		t.Fatalf("after release: %+v", rs)
	}
}
