package agent

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"lookahead/wire"
)

func users(name string) (LocalUser, error) {
	switch name {
	case "alice":
		return LocalUser{Name: "alice", UID: 1001, Home: "/home/alice"}, nil
	case "gridbob":
		return LocalUser{Name: "gridbob", UID: 1500, Home: "/users/gridbob"}, nil
	case "daemon":
		return LocalUser{Name: "daemon", UID: 1, Home: "/usr/sbin"}, nil
	case "root":
		return LocalUser{Name: "root", UID: 0, Home: "/root"}, nil
	}
	return LocalUser{}, errors.New("unknown user " + name)
}

func dispatchReq() wire.DispatchRequest {
	return wire.DispatchRequest{Type: wire.TypeDispatch, Job: "g17", Site: "beta", Part: 1, Start: 1000, Walltime: 3600,
		Parts: []wire.PartSpec{{Site: "alpha", Nodes: []wire.NodeProcs{{Node: "a1", Procs: 8}}},
			{Site: "beta", Nodes: []wire.NodeProcs{{Node: "b7", Procs: 4}, {Node: "b8", Procs: 2}}}},
		User: "alice", Account: "proj1", Script: []byte("#!/bin/sh\nhostname\n"), RequestedBy: "broker"}
}

func TestCheckDispatch(t *testing.T) {
	if r := CheckDispatch(dispatchReq(), "beta"); r != nil {
		t.Fatalf("good request refused: %+v", r)
	}
	for name, mut := range map[string]func(*wire.DispatchRequest){
		"wrong type":     func(r *wire.DispatchRequest) { r.Type = wire.TypeReserve },
		"wrong site":     func(r *wire.DispatchRequest) { r.Site = "alpha" },
		"part elsewhere": func(r *wire.DispatchRequest) { r.Part = 0 },
		"part too high":  func(r *wire.DispatchRequest) { r.Part = 2 },
		"negative part":  func(r *wire.DispatchRequest) { r.Part = -1 },
		"bad job":        func(r *wire.DispatchRequest) { r.Job = "g1;rm" },
		"bad user":       func(r *wire.DispatchRequest) { r.User = "-P" },
		"reserved user":  func(r *wire.DispatchRequest) { r.User = "ALL" },
		"bad account":    func(r *wire.DispatchRequest) { r.Account = "a b" },
		"no script":      func(r *wire.DispatchRequest) { r.Script = nil },
		"huge script":    func(r *wire.DispatchRequest) { r.Script = make([]byte, wire.MaxScriptBytes+1) },
		"no walltime":    func(r *wire.DispatchRequest) { r.Walltime = 0 },
		"bad node":       func(r *wire.DispatchRequest) { r.Parts[0].Nodes[0].Node = "a1:ppn=99" },
		"zero procs":     func(r *wire.DispatchRequest) { r.Parts[1].Nodes[1].Procs = 0 },
	} {
		req := dispatchReq()
		mut(&req)
		if r := CheckDispatch(req, "beta"); r == nil || r.Code != wire.CodeInvalid {
			t.Errorf("%s: %+v, want invalid", name, r)
		}
	}
}

func TestMapUser(t *testing.T) {
	cfg := DispatchConfig{Users: map[string]string{"bob": "gridbob", "eve": "root", "carol": "daemon"}}.withDefaults()
	if u, r := MapUser(cfg, "alice", users); r != nil || u.Name != "alice" {
		t.Fatalf("alice: %+v %+v", u, r)
	}
	if u, r := MapUser(cfg, "bob", users); r != nil || u.Name != "gridbob" || u.Home != "/users/gridbob" {
		t.Fatalf("bob: %+v %+v", u, r)
	}
	for _, who := range []string{"root", "eve", "carol", "daemon", "nobody"} {
		if _, r := MapUser(cfg, who, users); r == nil || r.Code != wire.CodeForbidden {
			t.Errorf("%s: %+v, want forbidden", who, r)
		}
	}
}

func TestPlanPart(t *testing.T) {
	cfg := DispatchConfig{}.withDefaults()
	res := wire.Reservation{ID: "la.g17.0", Job: "g17", Start: 1000, End: 4630,
		Nodes: []wire.NodeProcs{{Node: "b7", Procs: 4}, {Node: "b8", Procs: 2}}, Submit: "-A proj1 -W x=FLAGS:ADVRES:la.g17.0"}
	alice, _ := users("alice")
	plan, r := PlanPart(dispatchReq(), res, alice, cfg, 900)
	if r != nil || plan.Cut != "" {
		t.Fatalf("plan: %+v %+v", plan, r)
	}
	args, err := (plan.Spec).Args()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-P", "alice", "-N", "la.g17.1", "-l", "nodes=b7:ppn=4+b8:ppn=2", "-l", "walltime=01:00:00",
		"-A", "proj1", "-W", "x=FLAGS:ADVRES:la.g17.0", "-o", "/home/alice/la.g17.1.out", "-e", "/home/alice/la.g17.1.err",
		"-v", "LOOKAHEAD_JOB=g17,LOOKAHEAD_SITE=beta,LOOKAHEAD_PART=1,LOOKAHEAD_PARTS=alpha:a1:8+beta:b7:4+beta:b8:2,LOOKAHEAD_START=1000"}
	if !slices.Equal(args, want) {
		t.Fatalf("qsub args\n got %q\nwant %q", args, want)
	}
	if string(plan.Spec.Script) != "#!/bin/sh\nhostname\n" {
		t.Fatalf("script %q", plan.Spec.Script)
	}
	// A reservation without slack: the walltime leaves StartSlack free.
	res.End = 4600
	plan, r = PlanPart(dispatchReq(), res, alice, cfg, 900)
	if r != nil || plan.Spec.Walltime != 3570 || !strings.Contains(plan.Cut, "1h to 59m30s") {
		t.Fatalf("no slack: walltime %d cut %q %+v", plan.Spec.Walltime, plan.Cut, r)
	}
	// Dispatched late: only what is left of the reservation.
	plan, _ = PlanPart(dispatchReq(), res, alice, cfg, 2000)
	if plan.Spec.Walltime != 2570 {
		t.Fatalf("late dispatch walltime %d, want 2570", plan.Spec.Walltime)
	}
	if _, r := PlanPart(dispatchReq(), res, alice, cfg, 4580); r == nil || r.Code != wire.CodeInPast {
		t.Fatalf("nearly over: %+v", r)
	}
	cfg.OutputDir = "/scratch/{user}/grid"
	plan, _ = PlanPart(dispatchReq(), res, alice, cfg, 900)
	if plan.Spec.Output != "/scratch/alice/grid/la.g17.1.out" {
		t.Fatalf("output %q", plan.Spec.Output)
	}
}

func TestDispatchConfigValidate(t *testing.T) {
	good := DispatchConfig{Users: map[string]string{"alice": "al"}, OutputDir: "/scratch/{user}"}.withDefaults()
	if err := good.validate(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]DispatchConfig{
		"relative dir": {OutputDir: "out"},
		"dir space":    {OutputDir: "/a b"},
		"unknown {x}":  {OutputDir: "/a/{group}"},
		"bad map":      {Users: map[string]string{"alice": "-root"}},
		"min uid":      {MinUID: -1},
		"slack":        {StartSlack: -time.Second},
	} {
		if err := c.withDefaults().validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A mapped grid user's reservations admit the local account its parts run
// as (live: the ACL named the grid user alice, the part submitted as
// alice01 stayed queued with [ReserveTime]); root is refused.
func TestLocalIdentityMapsTheGridUser(t *testing.T) {
	cfg := DispatchConfig{Users: map[string]string{"alice": "alice01", "eve": "root"}}
	id, ref := LocalIdentity(cfg, wire.Identity{User: "alice", Account: "proj1"})
	if ref != nil || id != (wire.Identity{User: "alice01", Account: "proj1"}) {
		t.Fatalf("alice: %+v %v, want alice01", id, ref)
	}
	if id, _ := LocalIdentity(cfg, wire.Identity{User: "bob"}); id.User != "bob" {
		t.Fatalf("unmapped bob: %+v", id)
	}
	if _, ref := LocalIdentity(cfg, wire.Identity{User: "eve"}); ref == nil || ref.Code != wire.CodeForbidden {
		t.Fatalf("eve → root: %v, want forbidden", ref)
	}
}
