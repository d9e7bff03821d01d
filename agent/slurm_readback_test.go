package agent_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"lookahead/agent"
	"lookahead/broker"
	"lookahead/internal/execx"
	"lookahead/slurm"
	"lookahead/wire"
)

// recorder runs captured answers (slurm.FixtureRunner over
// slurm/testdata) and records every command line; after, when set, runs
// after each command (a test cancels the request's context there).
type recorder struct {
	fix   *slurm.FixtureRunner
	after func(argv []string)
	mu    sync.Mutex
	ran   [][]string
}

func (r *recorder) Run(ctx context.Context, name string, args ...string) (execx.Result, error) {
	argv := append([]string{name}, args...)
	r.mu.Lock()
	r.ran = append(r.ran, argv)
	r.mu.Unlock()
	res, err := r.fix.Run(ctx, name, args...)
	if r.after != nil {
		r.after(argv)
	}
	return res, err
}

// ran says whether a command starting with prefix ran.
func (r *recorder) hasRun(prefix ...string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.ContainsFunc(r.ran, func(a []string) bool { return len(a) >= len(prefix) && slices.Equal(a[:len(prefix)], prefix) })
}

// capturedSite is a SlurmSite over the multi-node capture: sinfo with
// n1's core busy, create answered by create, scontrol show reservation by
// show, delete done.
func capturedSite(create, show string) (*agent.SlurmSite, *recorder) {
	rec := &recorder{fix: &slurm.FixtureRunner{Dir: slurmCaptures, Rules: []slurm.FixtureRule{
		{Argv: []string{"scontrol", "ping"}, File: "mn-ping-up.txt"},
		{Argv: []string{"sinfo", "--json"}, File: "mn-sinfo-busy.json"},
		{Argv: []string{"squeue", "--json"}, File: "mn-squeue-busy.json"},
		{Argv: []string{"scontrol", "create"}, File: create},
		{Argv: []string{"scontrol", "show", "reservation"}, File: show},
		{Argv: []string{"scontrol", "delete"}, File: "delete-reservation-ok.txt"},
	}}}
	capturedAt := time.Unix(at("2026-11-29T00:16:30"), 0) // before every reservation of the capture ended
	return &agent.SlurmSite{Client: &slurm.Client{Run: rec, Loc: time.UTC}, Site: "sl", Prefix: "la.",
		Now: func() time.Time { return capturedAt }}, rec
}

func at(s string) int64 {
	t, err := time.Parse("2006-01-02T15:04:05", s)
	if err != nil {
		panic(err)
	}
	return t.Unix()
}

// la.u1 of the capture: 3 cores of n1 (whose fourth is busy) and 4 of n2.
var unevenSpec = agent.ReserveSpec{Job: "u1", Start: at("2026-11-29T00:18:22"), End: at("2026-11-29T00:38:22"),
	Nodes: []wire.NodeProcs{{Node: "n2", Procs: 4}, {Node: "n1", Procs: 3}}, Identity: wire.Identity{User: "lookahead-slurmtest"}}

// Slurm made the uneven reservation asked for but prints no CoreIDs for
// it yet: the read-back compares its nodes and total, keeps it, and
// answers with the cores asked; what the agent lists, and what the audit
// compares, agree with what the broker was told.
func TestSlurmReadBackBeforeCoreIDs(t *testing.T) {
	site, rec := capturedSite("mn-create-uneven.txt", "mn-show-reservation-uneven-nocoreids.txt")
	res, err := site.Reserve(context.Background(), unevenSpec)
	if err != nil || len(res.Reservations) != 1 {
		t.Fatalf("reserve: %+v, %v", res, err)
	}
	got := res.Reservations[0]
	if agent.SlurmDiff(unevenSpec, got) != "" || got.CoresUnknown || rec.hasRun("scontrol", "delete") {
		t.Fatalf("reserved %+v (diff %q), commands %q", got, agent.SlurmDiff(unevenSpec, got), rec.ran)
	}
	if a := strings.Join(res.Commands[0], " "); !strings.Contains(a, "nodes=n1,n2 corecnt=3,4") || !strings.Contains(a, "users=lookahead-slurmtest ") {
		t.Errorf("create: %s", a)
	}
	listed, err := site.List(context.Background())
	if err != nil || len(listed) != 1 || listed[0].CoresUnknown || !slices.Equal(listed[0].Nodes, []wire.NodeProcs{{Node: "n1", Procs: 3}, {Node: "n2", Procs: 4}}) {
		t.Fatalf("listed by the agent that made it: %+v, %v", listed, err)
	}
	// An agent that did not make it (restarted) lists the node set and
	// total only; the audit and the held check compare just those.
	fresh, _ := capturedSite("mn-create-uneven.txt", "mn-show-reservation-uneven-nocoreids.txt")
	listed, err = fresh.List(context.Background())
	if err != nil || len(listed) != 1 || !listed[0].CoresUnknown {
		t.Fatalf("listed by another agent: %+v, %v", listed, err)
	}
	got.Site, listed[0].Site = "sl", "sl"
	if f := broker.Reconcile(map[string][]wire.Reservation{"sl": {got}}, map[string][]wire.Reservation{"sl": listed}); len(f) != 0 {
		t.Errorf("audit while CoreIDs are not printed: %+v", f)
	}
	// Its holds never offer a core it may hold.
	holds, err := fresh.Holds(context.Background())
	if err != nil || len(holds) != 1 || holds[0].Reservation.Hosts[0].Procs != 4 || holds[0].Reservation.Hosts[1].Procs != 4 {
		t.Errorf("holds while unknown: %+v, %v", holds, err)
	}
	// Once printed, the CoreIDs are what was asked.
	printed, _ := capturedSite("mn-create-uneven.txt", "mn-show-reservation-uneven-coreids.txt")
	listed, _ = printed.List(context.Background())
	if len(listed) != 1 || listed[0].CoresUnknown || agent.SlurmDiff(unevenSpec, listed[0]) != "" {
		t.Errorf("with CoreIDs: %+v", listed)
	}
}

// A reservation the agent just made that is not what it asked for is
// deleted again, on a context of its own even when the request's is
// over, and the error says both.
func TestSlurmReadBackDifferentCoresUndone(t *testing.T) {
	spec := unevenSpec
	spec.Nodes = []wire.NodeProcs{{Node: "n1", Procs: 4}, {Node: "n2", Procs: 3}}
	for _, cancelled := range []bool{false, true} {
		site, rec := capturedSite("mn-create-uneven.txt", "mn-show-reservation-uneven-coreids.txt")
		ctx, cancel := context.WithCancel(context.Background())
		if cancelled {
			rec.after = func(argv []string) {
				if slices.Contains(argv, "create") {
					cancel() // the request's deadline passes right after the create
				}
			}
		}
		res, err := site.Reserve(ctx, spec)
		cancel()
		want := "cores n1:3,n2:4, asked n1:4,n2:3"
		if cancelled {
			want = "context canceled"
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("cancelled %v: reserve of other cores: %+v, %v", cancelled, res, err)
		}
		if !rec.hasRun("scontrol", "delete", "reservationname=la.u1") || !strings.Contains(err.Error(), "la.u1, just made, deleted again") {
			t.Errorf("cancelled %v: the reservation just made was not deleted: %v; ran %q", cancelled, err, rec.ran)
		}
		t.Logf("cancelled %v: %v", cancelled, err)
	}
}

// The read-back compares the whole ACL: a reservation of the job's name
// widened by hand (another user, a flag, an account, another partition)
// is not the job's; the audit reports each drifted, field acl.
func TestSlurmReadBackWholeACL(t *testing.T) {
	spec := agent.ReserveSpec{Job: "w1", Start: at("2026-11-29T01:16:21"), End: at("2026-11-29T01:36:21"),
		Nodes: []wire.NodeProcs{{Node: "n2", Procs: 2}}, Identity: wire.Identity{User: "lookahead-slurmtest"}}
	made := wire.Reservation{ID: "la.w1", Job: "w1", Site: "sl", Start: spec.Start, End: spec.End, Nodes: spec.Nodes,
		Identity: spec.Identity, Submit: "--reservation=la.w1 --job-name=la.w1.0"}
	for file, want := range map[string]string{
		"mn-show-reservation-users-widened.txt": `users "lookahead-slurmtest,root", asked "lookahead-slurmtest" alone`,
		"mn-show-reservation-magnetic.txt":      "flag MAGNETIC",
		"mn-show-reservation-accounts.txt":      `accounts "root"`,
		"mn-show-reservation-partition.txt":     "partition short (slurm.partition is batch)",
	} {
		site, rec := capturedSite("lifecycle-create-reservation-exists.txt", file)
		site.Partition = "batch"
		res, err := site.Reserve(context.Background(), spec)
		if !errors.Is(err, agent.ErrScheduler) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %+v, %v; want a refusal naming %s", file, res, err, want)
		}
		if strings.Contains(err.Error(), "scheduler") || rec.hasRun("scontrol", "delete") {
			t.Errorf("%s: %v (ran %q): a retry's reservation is not deleted, and the text does not repeat its code", file, err, rec.ran)
		}
		listed, err := site.List(context.Background())
		if err != nil || len(listed) != 1 {
			t.Fatal(err)
		}
		listed[0].Site = "sl"
		f := broker.Reconcile(map[string][]wire.Reservation{"sl": {made}}, map[string][]wire.Reservation{"sl": listed})
		if len(f) != 1 || f[0].Kind != wire.DriftDrifted || !slices.Equal(f[0].Fields, []string{"acl"}) {
			t.Errorf("%s: audit %+v", file, f)
		}
	}
	// The same reservation as made is the job's.
	site, _ := capturedSite("lifecycle-create-reservation-exists.txt", "mn-show-reservation-accounts.txt")
	spec.Identity.User = "nobody"
	if _, err := site.Reserve(context.Background(), spec); err == nil {
		t.Error("another user's reservation taken")
	}
}

// A mapped user the system does not know is refused before any
// reservation names it, in words that say so (slurmctld's own answer,
// "Invalid user id", is the one a caller who is no operator gets).
func TestSlurmReserveUnknownUser(t *testing.T) {
	site, rec := capturedSite("mn-create-unknown-user.txt", "mn-show-reservation-uneven-nocoreids.txt")
	site.Users = func(name string) (agent.LocalUser, error) {
		return agent.LocalUser{}, agent.ErrNoSuchUser
	}
	_, err := site.Reserve(context.Background(), unevenSpec)
	if !errors.Is(err, agent.ErrScheduler) || !strings.Contains(err.Error(), "local user lookahead-slurmtest does not exist on this site") ||
		rec.hasRun("scontrol", "create") {
		t.Errorf("unknown user: %v; ran %q", err, rec.ran)
	}
	site.Users = nil // slurmctld's answer, explained
	_, err = site.Reserve(context.Background(), unevenSpec)
	if !errors.Is(err, agent.ErrScheduler) || !strings.Contains(err.Error(), "not_operator") || !strings.Contains(err.Error(), "run it as root") {
		t.Errorf("slurmctld's refusal: %v", err)
	}
}
