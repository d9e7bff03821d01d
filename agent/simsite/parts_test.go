package simsite

import (
	"context"
	"errors"
	"testing"
	"time"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/torque"
	"lookahead/wire"
)

// reserveAndSubmit reserves 4 procs of s-n0001 over [t0+100, t0+1000) for
// grid job g1 (user alice, account proj1) and submits its part 0 with
// script, bound as the agent binds it.
func reserveAndSubmit(t *testing.T, s *Site, script, user string) string {
	t.Helper()
	ctx := context.Background()
	res, err := s.Reserve(ctx, agent.ReserveSpec{Job: "g1", Start: t0 + 100, End: t0 + 1000,
		Nodes: []wire.NodeProcs{{Node: "s-n0001", Procs: 4}}, Identity: wire.Identity{User: "alice", Account: "proj1"}})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Reservations[0]
	id, argv, err := s.Submit(ctx, torque.QsubSpec{User: user, Name: wire.PartName("g1", 0), Walltime: 600,
		Nodes: []forecast.HostProcs{{Node: "s-n0001", Procs: 4}}, Bind: []string{"-A", "proj1", "-W", "x=FLAGS:ADVRES:" + r.ID},
		Output: "/home/alice/la.g1.0.out", Error: "/home/alice/la.g1.0.err", Script: []byte(script)})
	if err != nil || argv[0] != "qsub" || argv[1] != "-P" {
		t.Fatalf("submit: %v %q", err, argv)
	}
	return id
}

func jobOf(t *testing.T, s *Site, id string) (torque.BatchJob, bool) {
	t.Helper()
	jobs, _, err := s.Jobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.ID == id {
			return j, true
		}
	}
	return torque.BatchJob{}, false
}

func TestPartRunsInItsReservation(t *testing.T) {
	c := &clock{t0}
	s, err := New(Config{Site: "s", Nodes: 2, PPN: 4, Start: t0, Clock: c.now, StartDelay: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	id := reserveAndSubmit(t, s, "#!/bin/sh\n#lookahead-sim runtime=300 exit=0\n#lookahead-sim site=other exit=9\nhostname\n", "alice")
	if j, _ := jobOf(t, s, id); j.State != "Q" || j.Reservation != "g1.0" || j.Account != "proj1" || j.Output != "s:/home/alice/la.g1.0.out" {
		t.Fatalf("before the reservation: %+v", j)
	}
	c.t = t0 + 104
	if j, _ := jobOf(t, s, id); j.State != "Q" {
		t.Fatalf("started before reservation start + delay: %+v", j)
	}
	c.t = t0 + 200
	j, _ := jobOf(t, s, id)
	if j.State != "R" || j.Started != t0+105 {
		t.Fatalf("in the reservation: %+v", j)
	}
	snap, _ := s.Snapshot(context.Background())
	found := false
	for _, lj := range snap.Jobs {
		if lj.ID == id {
			found = lj.Running() && lj.Reservation == "g1.0" && len(lj.Hosts) == 1
		}
	}
	if job, ok := s.JobOf("g1.0"); !found || !ok || job != "g1" {
		t.Fatalf("snapshot does not show the part running in g1.0 (found %v, JobOf %q %v)", found, job, ok)
	}
	c.t = t0 + 500
	j, _ = jobOf(t, s, id)
	if !j.Done() || j.Ended != t0+405 || j.ExitStatus == nil || *j.ExitStatus != 0 {
		t.Fatalf("after its runtime: %+v", j)
	}
	c.t = t0 + 405 + 300
	if _, listed := jobOf(t, s, id); listed {
		t.Fatal("completed part listed after keep_completed")
	}
}

func TestPartBehaviours(t *testing.T) {
	for _, c := range []struct {
		name, script, user string
		at                 int64
		state              string
		exit               *int
	}{
		{"fails", "#lookahead-sim runtime=60 exit=3\n", "alice", t0 + 200, "C", intp(3)},
		{"over walltime", "#lookahead-sim runtime=2h\n", "alice", t0 + 800, "C", intp(exitWalltime)},
		{"held", "#lookahead-sim site=s hold\n", "alice", t0 + 800, "Q", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := &clock{t0}
			s, _ := New(Config{Site: "s", Nodes: 2, PPN: 4, Start: t0, Clock: cl.now})
			id := reserveAndSubmit(t, s, c.script, c.user)
			cl.t = c.at
			j, _ := jobOf(t, s, id)
			if j.State != c.state || (c.exit == nil) != (j.ExitStatus == nil) || (c.exit != nil && *c.exit != *j.ExitStatus) {
				t.Fatalf("%+v, want state %s exit %v", j, c.state, c.exit)
			}
		})
	}
}

func TestPartWithoutAccessWaits(t *testing.T) {
	c := &clock{t0}
	s, _ := New(Config{Site: "s", Nodes: 2, PPN: 4, Start: t0, Clock: c.now})
	ctx := context.Background()
	if _, err := s.Reserve(ctx, agent.ReserveSpec{Job: "g1", Start: t0 + 100, End: t0 + 1000,
		Nodes: []wire.NodeProcs{{Node: "s-n0001", Procs: 4}}, Identity: wire.Identity{User: "alice"}}); err != nil {
		t.Fatal(err)
	}
	id, _, err := s.Submit(ctx, torque.QsubSpec{User: "bob", Name: "la.g1.0", Walltime: 60,
		Nodes: []forecast.HostProcs{{Node: "s-n0001", Procs: 4}}, Bind: []string{"-W", "x=FLAGS:ADVRES:g1.0"}})
	if err != nil {
		t.Fatal(err)
	}
	c.t = t0 + 500
	if j, _ := jobOf(t, s, id); j.State != "Q" {
		t.Fatalf("bob's part ran in alice's reservation: %+v", j)
	}
}

func TestDeletePart(t *testing.T) {
	c := &clock{t0}
	s, _ := New(Config{Site: "s", Nodes: 2, PPN: 4, Start: t0, Clock: c.now})
	ctx := context.Background()
	queued := reserveAndSubmit(t, s, "", "alice")
	argv, err := s.Delete(ctx, queued)
	if err != nil || argv[0] != "qdel" {
		t.Fatalf("qdel queued: %v %q", err, argv)
	}
	if j, _ := jobOf(t, s, queued); !j.Done() || j.ExitStatus != nil {
		t.Fatalf("deleted queued part: %+v", j)
	}
	if _, err := s.Delete(ctx, queued); !errors.Is(err, torque.ErrInvalidState) || !torque.Gone(err) {
		t.Fatalf("qdel completed: %v", err)
	}
	if _, err := s.Delete(ctx, "999.s"); !errors.Is(err, torque.ErrUnknownJob) {
		t.Fatalf("qdel unknown: %v", err)
	}
	s.Release(ctx, "g1")
	running := reserveAndSubmit(t, s, "", "alice")
	c.t = t0 + 200
	s.Delete(ctx, running)
	if j, _ := jobOf(t, s, running); !j.Done() || j.ExitStatus == nil || *j.ExitStatus != exitDeleted || j.Ended != t0+200 {
		t.Fatalf("deleted running part: %+v", j)
	}
}

func TestSubmitRefusesBadDirective(t *testing.T) {
	c := &clock{t0}
	s, _ := New(Config{Site: "s", Nodes: 2, PPN: 4, Start: t0, Clock: c.now})
	_, _, err := s.Submit(context.Background(), torque.QsubSpec{User: "alice", Name: "la.g1.0", Walltime: 60,
		Nodes: []forecast.HostProcs{{Node: "s-n0001", Procs: 1}}, Script: []byte("#lookahead-sim exit=x\n")})
	var ce *torque.CommandError
	if !errors.As(err, &ce) {
		t.Fatalf("bad directive: %v", err)
	}
}

func intp(n int) *int { return &n }

func TestParseBehaviour(t *testing.T) {
	b, err := ParseBehaviour([]byte("#!/bin/sh\n#lookahead-sim runtime=20m exit=1\n #lookahead-sim site=beta exit=2 runtime=30\n#lookahead-sim site=gamma hold\necho\n"), "beta")
	if err != nil || b.Runtime != 30*time.Second || b.Exit != 2 || b.Hold {
		t.Fatalf("beta: %+v %v", b, err)
	}
	b, _ = ParseBehaviour([]byte("#lookahead-sim runtime=20m exit=1\n#lookahead-sim site=gamma hold\n"), "gamma")
	if !b.Hold || b.Runtime != 20*time.Minute || b.Exit != 1 {
		t.Fatalf("gamma: %+v", b)
	}
	for _, bad := range []string{"#lookahead-sim exit=x", "#lookahead-sim runtime=-5m", "#lookahead-sim color=red", "#lookahead-sim site="} {
		if _, err := ParseBehaviour([]byte(bad), "s"); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseBehaviour(f *testing.F) {
	f.Add([]byte("#lookahead-sim runtime=20m exit=1\n#lookahead-sim site=s hold\n"), "s")
	f.Add([]byte("#!/bin/sh\necho hi\n"), "beta")
	f.Fuzz(func(t *testing.T, script []byte, site string) {
		b, err := ParseBehaviour(script, site)
		if err == nil && b.Runtime < 0 {
			t.Fatalf("negative runtime from %q", script)
		}
	})
}
