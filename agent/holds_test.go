package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/wire"
)

// fixedSnapshot is one cluster state: 2 nodes of 8 procs, idle.
type fixedSnapshot struct{ jobs []forecast.LocalJob }

func (f fixedSnapshot) Snapshot(context.Context) (forecast.Snapshot, error) {
	return forecast.Snapshot{Site: "delta", Taken: t0, Jobs: f.jobs, Nodes: []forecast.SnapshotNode{
		{Name: "n01", Procs: 8, State: []string{forecast.NodeFree}, Speed: 1},
		{Name: "n02", Procs: 8, State: []string{forecast.NodeFree}, Speed: 1}}}, nil
}

type holdList []agent.Hold

func (h holdList) Holds(context.Context) ([]agent.Hold, error) { return h, nil }

// specReserver records the specs it is given and reserves them as asked.
type specReserver struct {
	mu    sync.Mutex
	specs []agent.ReserveSpec
	ctxs  []context.Context
	delay time.Duration
}

func (s *specReserver) Reserve(ctx context.Context, spec agent.ReserveSpec) (agent.Reserved, error) {
	s.mu.Lock()
	s.specs, s.ctxs = append(s.specs, spec), append(s.ctxs, ctx)
	s.mu.Unlock()
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return agent.Reserved{}, ctx.Err()
	}
	return agent.Reserved{Reservations: []wire.Reservation{{ID: spec.Job + ".0", Job: spec.Job, Start: spec.Start, End: spec.End, Nodes: spec.Nodes}}}, nil
}
func (s *specReserver) Release(context.Context, string) (agent.Released, error) {
	return agent.Released{}, nil
}
func (s *specReserver) List(context.Context) ([]wire.Reservation, error) { return nil, nil }

func holdAgent(t *testing.T, snap agent.Snapshotter, res agent.Reserver) *agent.Agent {
	t.Helper()
	nc := startNATS(t)
	a, err := agent.New(testConfig("delta"), agent.Deps{Conn: nc, Snapshotter: snap, Reserver: res,
		Engine: agent.BuiltinEngine{Horizon: 24 * time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()},
		Now:    func() time.Time { return time.Unix(t0, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	waitService(t, nc, "delta")
	return a
}

func reserveJSON(t *testing.T, a *agent.Agent, req wire.ReserveRequest) wire.ReserveReply {
	t.Helper()
	req.Type, req.Site = wire.TypeReserve, "delta"
	if req.Identity == (wire.Identity{}) {
		req.Identity = wire.Identity{User: "alice", Account: "proj1"}
	}
	return a.Reserve(context.Background(), mustJSON(t, req))
}

var adminHold = agent.Hold{Reservation: forecast.Reservation{ID: "admin.0", Start: t0 + 600, End: t0 + 4200,
	Hosts: []forecast.HostProcs{{Node: "n01", Procs: 6}}}}

// The site's reservations are in the snapshot, so the reserve path's
// re-check sees them: processors an admin's reservation holds are not
// reserved again (Maui itself would accept the overlap).
func TestReserveRefusesProcessorsAnotherReservationHolds(t *testing.T) {
	res := &specReserver{}
	a := holdAgent(t, agent.HoldingSnapshotter{Snapshotter: fixedSnapshot{}, Holds: holdList{adminHold}}, res)
	got := reserveJSON(t, a, wire.ReserveRequest{Job: "g1", Start: t0 + 1200, Duration: 600, Nodes: []wire.NodeProcs{{Node: "n01", Procs: 4}}})
	if got.Code != wire.CodeStale {
		t.Fatalf("4 procs where 2 are free: %+v, want stale", got)
	}
	got = reserveJSON(t, a, wire.ReserveRequest{Job: "g2", Start: t0 + 1200, Duration: 600, Nodes: []wire.NodeProcs{{Node: "n01", Procs: 2}}})
	if got.Code != wire.CodeOK {
		t.Fatalf("the 2 free procs: %+v", got)
	}
	if len(res.specs) != 1 || res.specs[0].Job != "g2" || !reflect.DeepEqual(res.specs[0].Capacity, map[string]int{"n01": 8, "n02": 8}) {
		t.Fatalf("reserver got %+v", res.specs)
	}
}

// The reservation runs past the asked end by the slack, cut where the
// nodes are no longer free.
func TestReserveSlackStopsAtTheNextHold(t *testing.T) {
	res := &specReserver{}
	a := holdAgent(t, agent.HoldingSnapshotter{Snapshotter: fixedSnapshot{}, Holds: holdList{adminHold}}, res)
	if got := reserveJSON(t, a, wire.ReserveRequest{Job: "g1", Start: t0 + 60, Duration: 360, Nodes: []wire.NodeProcs{{Node: "n01", Procs: 4}}}); got.Code != wire.CodeOK {
		t.Fatalf("%+v", got)
	}
	if got := reserveJSON(t, a, wire.ReserveRequest{Job: "g2", Start: t0 + 60, Duration: 360, Nodes: []wire.NodeProcs{{Node: "n02", Procs: 4}}}); got.Code != wire.CodeOK {
		t.Fatalf("%+v", got)
	}
	if end := res.specs[0].End; end != t0+600 {
		t.Errorf("slack on n01 runs to %d, want %d where the admin's reservation leaves too few", end, t0+600)
	}
	if end := res.specs[1].End; end != t0+420+int64(agent.DefaultSlack/time.Second) {
		t.Errorf("slack on the free n02 runs to %d, want the full %v", end, agent.DefaultSlack)
	}
}

// A local job charged to a grid reservation's binding account, as its
// user, runs inside it (Torque's snapshot does not say so without ADVRES).
func TestWithHoldsBindsJobsByAccount(t *testing.T) {
	snap, _ := fixedSnapshot{jobs: []forecast.LocalJob{
		{ID: "1.vm", User: "alice", Account: "la.acct0", State: "Q", Procs: 4, Walltime: 600},
		{ID: "2.vm", User: "bob", Account: "la.acct0", State: "Q", Procs: 4, Walltime: 600},
		{ID: "3.vm", User: "alice", Account: "proj1", State: "Q", Procs: 4, Walltime: 600}}}.Snapshot(context.Background())
	grid := agent.Hold{Reservation: forecast.Reservation{ID: "la.g1.0", Job: "g1", Start: t0, End: t0 + 900,
		Hosts: []forecast.HostProcs{{Node: "n01", Procs: 12}, {Node: "gone", Procs: 1}}}, Account: "la.acct0", User: "alice"}
	got := agent.WithHolds(snap, []agent.Hold{grid, adminHold})
	if len(got.Reservations) != 2 || !reflect.DeepEqual(got.Reservations[0].Hosts, []forecast.HostProcs{{Node: "n01", Procs: 8}}) {
		t.Fatalf("reservations %+v: want unknown nodes dropped, procs capped at the node's", got.Reservations)
	}
	if got.Jobs[0].Reservation != "la.g1.0" || got.Jobs[1].Reservation != "" || got.Jobs[2].Reservation != "" {
		t.Fatalf("bound %q %q %q", got.Jobs[0].Reservation, got.Jobs[1].Reservation, got.Jobs[2].Reservation)
	}
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
	if snap.Jobs[0].Reservation != "" {
		t.Error("WithHolds changed its input")
	}
}

// A snapshot whose reservations cannot be read is no snapshot: a forecast
// without them would offer reserved processors.
func TestHoldingSnapshotterFailsWithoutHolds(t *testing.T) {
	_, err := agent.HoldingSnapshotter{Snapshotter: fixedSnapshot{}, Holds: failingHolds{}}.Snapshot(context.Background())
	if err == nil {
		t.Fatal("snapshot without the site's reservations accepted")
	}
}

type failingHolds struct{}

func (failingHolds) Holds(context.Context) ([]agent.Hold, error) {
	return nil, errors.New("showres: exit 1")
}

// A reserve request's timeout is counted on the agent's own clock from
// when the request reached it, never compared with the sender's clock: a
// request whose (older broker's) wall-clock deadline_ms is already past
// here, as on a site whose clock runs ahead, is served; one that waited in
// the agent's queue longer than its timeout_ms is answered expired and
// nothing runs; the Reserver works under the deadline and is cancelled at
// it.
func TestReserveTimeoutIsRelative(t *testing.T) {
	res := &specReserver{}
	a := holdAgent(t, fixedSnapshot{}, res)
	ahead := wire.ReserveRequest{Job: "g1", Start: t0 + 60, Duration: 600, Nodes: []wire.NodeProcs{{Node: "n01", Procs: 1}},
		DeadlineMS: time.Now().Add(-10 * time.Second).UnixMilli()}
	if got := reserveJSON(t, a, ahead); got.Code != wire.CodeOK {
		t.Fatalf("request from a broker whose clock is 10 s behind: %+v", got)
	}
	ok := ahead
	ok.Job, ok.DeadlineMS, ok.TimeoutMS = "g2", 0, 60_000
	before := time.Now()
	if got := reserveJSON(t, a, ok); got.Code != wire.CodeOK {
		t.Fatalf("request in time: %+v", got)
	}
	if d, set := res.ctxs[1].Deadline(); !set || d.Before(before.Add(time.Minute)) || d.After(time.Now().Add(time.Minute)) {
		t.Errorf("reserver context deadline %v (set %v), want a minute after the request arrived", d, set)
	}
	// A Reserver busy past the timeout holds the queue: the request behind
	// it expires there, and the busy one is cancelled.
	res.mu.Lock()
	res.delay = time.Hour
	res.mu.Unlock()
	slow := ok
	slow.Job, slow.TimeoutMS = "g3", 2000
	done := make(chan wire.ReserveReply, 1)
	go func() { done <- reserveJSON(t, a, slow) }()
	for {
		res.mu.Lock()
		n := len(res.specs)
		res.mu.Unlock()
		if n == 3 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	queued := ok
	queued.Job, queued.TimeoutMS = "g4", 100
	if got := reserveJSON(t, a, queued); got.Code != wire.CodeExpired || !strings.Contains(got.Message, "nothing was done") {
		t.Fatalf("request that waited past its timeout: %+v", got)
	}
	if got := <-done; got.Code == wire.CodeOK {
		t.Fatalf("reservation landed after the timeout: %+v", got)
	}
	if len(res.specs) != 3 {
		t.Fatalf("reserver called %d times, want 3 (never for the expired request)", len(res.specs))
	}
}

func TestSlackEnd(t *testing.T) {
	f := &forecast.Forecast{Slots: []forecast.Slot{
		{Node: "a", Procs: 8, Start: 0, End: 1000},
		{Node: "a", Procs: 2, Start: 1000, End: 5000},
		{Node: "b", Procs: 4, Start: 0, End: 5000}}}
	cases := []struct {
		nodes      []wire.NodeProcs
		end, slack int64
		want       int64
	}{
		{[]wire.NodeProcs{{Node: "a", Procs: 4}}, 600, 300, 900},
		{[]wire.NodeProcs{{Node: "a", Procs: 4}}, 800, 300, 1000},
		{[]wire.NodeProcs{{Node: "a", Procs: 2}}, 800, 300, 1100},
		{[]wire.NodeProcs{{Node: "a", Procs: 4}}, 1000, 300, 1000},
		{[]wire.NodeProcs{{Node: "a", Procs: 4}, {Node: "b", Procs: 4}}, 600, 300, 900},
		{[]wire.NodeProcs{{Node: "b", Procs: 4}}, 4900, 300, 5000},
		{[]wire.NodeProcs{{Node: "b", Procs: 4}}, 600, 0, 600},
	}
	for _, tc := range cases {
		if got := agent.SlackEnd(f, tc.nodes, tc.end, tc.slack); got != tc.want {
			t.Errorf("%v end %d slack %d: %d, want %d", tc.nodes, tc.end, tc.slack, got, tc.want)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
