package agent_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/wire"
)

var lim = agent.Limits{Site: "s", Now: 1000, MaxDuration: 3600, PastGrace: 120}

func req(mod func(*wire.ReserveRequest)) wire.ReserveRequest {
	r := wire.ReserveRequest{Type: wire.TypeReserve, Job: "g1", Site: "s", Start: 1100, Duration: 600,
		Nodes: []wire.NodeProcs{{Node: "n1", Procs: 2}}, Identity: wire.Identity{User: "u"}}
	if mod != nil {
		mod(&r)
	}
	return r
}

func TestCheckReserveCodes(t *testing.T) {
	cases := map[string]struct {
		mod  func(*wire.ReserveRequest)
		code string
	}{
		"ok":              {nil, ""},
		"wrong type":      {func(r *wire.ReserveRequest) { r.Type = wire.TypeRelease }, wire.CodeInvalid},
		"other site":      {func(r *wire.ReserveRequest) { r.Site = "t" }, wire.CodeInvalid},
		"no identity":     {func(r *wire.ReserveRequest) { r.Identity = wire.Identity{} }, wire.CodeInvalid},
		"user ALL":        {func(r *wire.ReserveRequest) { r.Identity.User = "all" }, wire.CodeInvalid},
		"zero duration":   {func(r *wire.ReserveRequest) { r.Duration = 0 }, wire.CodeInvalid},
		"too long":        {func(r *wire.ReserveRequest) { r.Duration = 3601 }, wire.CodeTooLong},
		"ended":           {func(r *wire.ReserveRequest) { r.Start, r.Duration = 100, 900 }, wire.CodeInPast},
		"past grace":      {func(r *wire.ReserveRequest) { r.Start = 879 }, wire.CodeInPast},
		"within grace":    {func(r *wire.ReserveRequest) { r.Start = 880 }, ""},
		"nodes and procs": {func(r *wire.ReserveRequest) { r.Procs = 3 }, wire.CodeInvalid},
		"neither":         {func(r *wire.ReserveRequest) { r.Nodes = nil }, wire.CodeInvalid},
		"procs only":      {func(r *wire.ReserveRequest) { r.Nodes, r.Procs = nil, 3 }, ""},
		"node twice": {func(r *wire.ReserveRequest) {
			r.Nodes = append(r.Nodes, wire.NodeProcs{Node: "n1", Procs: 1})
		}, wire.CodeInvalid},
		"zero procs":   {func(r *wire.ReserveRequest) { r.Nodes[0].Procs = 0 }, wire.CodeInvalid},
		"long actor":   {func(r *wire.ReserveRequest) { r.RequestedBy = string(make([]byte, 300)) }, wire.CodeInvalid},
		"control char": {func(r *wire.ReserveRequest) { r.RequestedBy = "broker\n" }, wire.CodeInvalid},
	}
	for name, c := range cases {
		spec, ref := agent.CheckReserve(req(c.mod), lim)
		switch {
		case c.code == "" && ref != nil:
			t.Errorf("%s: refused %+v", name, ref)
		case c.code != "" && (ref == nil || ref.Code != c.code):
			t.Errorf("%s: got %+v, want %s", name, ref, c.code)
		case c.code == "" && (spec.Start < lim.Now || spec.End <= spec.Start):
			t.Errorf("%s: spec %+v", name, spec)
		}
	}
	spec, _ := agent.CheckReserve(req(func(r *wire.ReserveRequest) { r.Start = 900 }), lim)
	if spec.Start != 1000 || spec.End != 1500 {
		t.Fatalf("start within grace: spec [%d, %d), want [1000, 1500)", spec.Start, spec.End)
	}
}

func slots(ss ...forecast.Slot) []forecast.Slot { return ss }

func TestAvailableIsTheMinimumOverTheInterval(t *testing.T) {
	s := slots(
		forecast.Slot{Node: "n", Procs: 2, Start: 0, End: 100},
		forecast.Slot{Node: "n", Procs: 2, Start: 50, End: 200},
		forecast.Slot{Node: "n", Procs: 1, Start: 100, End: 300},
	)
	for _, c := range []struct {
		a, b int64
		want int
	}{{0, 50, 2}, {0, 100, 2}, {50, 100, 4}, {50, 150, 3}, {0, 300, 1}, {250, 400, 0}, {-10, 10, 0}, {10, 10, 0}} {
		if got := agent.Available(s, c.a, c.b); got != c.want {
			t.Errorf("[%d, %d): %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestFitNamedNodesAndPicking(t *testing.T) {
	f := &forecast.Forecast{Nodes: []forecast.Node{{Name: "a", Procs: 4}, {Name: "b", Procs: 4}, {Name: "c", Procs: 4}},
		Slots: slots(
			forecast.Slot{Node: "a", Procs: 1, Start: 0, End: 1000},
			forecast.Slot{Node: "b", Procs: 4, Start: 0, End: 1000},
			forecast.Slot{Node: "c", Procs: 4, Start: 0, End: 500},
		)}
	spec := agent.ReserveSpec{Start: 100, End: 900, Nodes: []wire.NodeProcs{{Node: "b", Procs: 4}}}
	if _, ref := agent.Fit(f, spec, 0); ref != nil {
		t.Fatalf("b fits: %+v", ref)
	}
	spec.Nodes = []wire.NodeProcs{{Node: "c", Procs: 1}}
	if _, ref := agent.Fit(f, spec, 0); ref == nil || ref.Code != wire.CodeStale {
		t.Fatalf("c ends at 500: %+v, want stale", ref)
	}
	spec.Nodes = nil
	got, ref := agent.Fit(f, spec, 5)
	if ref != nil || !slices.Equal(got, []wire.NodeProcs{{Node: "b", Procs: 4}, {Node: "a", Procs: 1}}) {
		t.Fatalf("pick 5: %v %+v", got, ref)
	}
	if _, ref := agent.Fit(f, spec, 6); ref == nil || ref.Code != wire.CodeStale {
		t.Fatalf("pick 6: %+v, want stale", ref)
	}
}

func TestCheckCapacity(t *testing.T) {
	snap := forecast.Snapshot{Nodes: []forecast.SnapshotNode{
		{Name: "a", Procs: 4, State: []string{"free"}},
		{Name: "d", Procs: 4, State: []string{"down"}},
	}}
	for _, c := range []struct {
		nodes []wire.NodeProcs
		procs int
		ok    bool
	}{
		{[]wire.NodeProcs{{Node: "a", Procs: 4}}, 0, true},
		{[]wire.NodeProcs{{Node: "a", Procs: 5}}, 0, false},
		{[]wire.NodeProcs{{Node: "d", Procs: 1}}, 0, false},
		{[]wire.NodeProcs{{Node: "x", Procs: 1}}, 0, false},
		{nil, 4, true},
		{nil, 5, false},
	} {
		ref := agent.CheckCapacity(snap, c.nodes, c.procs)
		if (ref == nil) != c.ok || (ref != nil && ref.Code != wire.CodeNoCapacity) {
			t.Errorf("%v/%d: %+v, want ok=%v", c.nodes, c.procs, ref, c.ok)
		}
	}
}

func TestFingerprintMasksOnlyThePassageOfTime(t *testing.T) {
	mk := func(gen int64) *forecast.Forecast {
		return &forecast.Forecast{Site: "s", Seq: uint64(gen), Generated: gen, Horizon: gen + 1000,
			Nodes: []forecast.Node{{Name: "n", Procs: 4, Speed: 1}},
			Slots: slots(forecast.Slot{Node: "n", Procs: 4, Start: gen, End: 500, Price: 1},
				forecast.Slot{Node: "n", Procs: 4, Start: 500, End: gen + 1000, Price: 2})}
	}
	a, b := mk(100), mk(160)
	if agent.Fingerprint(a) != agent.Fingerprint(b) {
		t.Fatal("time passing alone changed the fingerprint")
	}
	b.Slots[1].Price = 3
	if agent.Fingerprint(a) == agent.Fingerprint(b) {
		t.Fatal("a price change kept the fingerprint")
	}
	b = mk(160)
	b.Slots[0].End = 499
	if agent.Fingerprint(a) == agent.Fingerprint(b) {
		t.Fatal("a slot change kept the fingerprint")
	}
}

func TestShouldPublish(t *testing.T) {
	now := time.Unix(10000, 0)
	var x, y [32]byte
	y[0] = 1
	ttl := 10 * time.Minute
	for _, c := range []struct {
		prev, cur [32]byte
		last      time.Time
		want      bool
	}{
		{x, x, now.Add(-time.Minute), false},
		{x, y, now.Add(-time.Minute), true},
		{x, x, now.Add(-5 * time.Minute), true},
		{x, x, time.Time{}, true},
	} {
		if got := agent.ShouldPublish(c.prev, c.cur, c.last, now, ttl); got != c.want {
			t.Errorf("%+v: %v", c, got)
		}
	}
}

func TestAccuracyScoresFirstPrediction(t *testing.T) {
	acc := agent.NewAccuracy()
	queued := forecast.LocalJob{ID: "1", State: forecast.JobQueued}
	snap := forecast.Snapshot{Jobs: []forecast.LocalJob{queued, {ID: "2", State: forecast.JobQueued}}}
	acc.Observe(snap, []forecast.Prediction{{Job: "1", Start: 1000}, {Job: "2", Start: 5000}})
	acc.Observe(snap, []forecast.Prediction{{Job: "1", Start: 1100}, {Job: "2", Start: 5000}})
	running := forecast.LocalJob{ID: "1", State: forecast.JobRunning, Started: 1300}
	scores := acc.Observe(forecast.Snapshot{Jobs: []forecast.LocalJob{running}}, nil)
	if len(scores) != 1 || scores[0].Predicted != 1000 || scores[0].Actual != 1300 {
		t.Fatalf("scores %+v, want job 1 predicted 1000, started 1300", scores)
	}
	s := acc.Summary()
	if s.Checked != 1 || s.Late != 1 || s.MeanAbsFirst != 300 || s.MeanAbsLast != 200 || acc.Pending() != 0 {
		t.Fatalf("summary %+v, pending %d (job 2 left the snapshot and is forgotten)", s, acc.Pending())
	}
	if _, ok := acc.Started("1", 1400); ok {
		t.Fatal("a job scored twice")
	}
	// A snapshot taken before the start, observed after it was scored from
	// an event, must not score the job again.
	acc.Observe(snap, []forecast.Prediction{{Job: "1", Start: 1000}})
	if scores := acc.Observe(forecast.Snapshot{Jobs: []forecast.LocalJob{running}}, nil); len(scores) != 0 || acc.Summary().Checked != 1 {
		t.Fatalf("job 1 scored again from a late stale snapshot: %+v", scores)
	}
	if s.Buckets[2] != 1 {
		t.Fatalf("300 s error in bucket %v, want the (60, 300] one", s.Buckets)
	}
}

// FuzzCheckReserve feeds arbitrary request bodies to the checks the
// service runs before anything else: no panic, and whatever is accepted
// names only plain identities and nodes over a valid interval.
func FuzzCheckReserve(f *testing.F) {
	for _, seed := range []string{
		`{"type":"reserve.v1","job":"g1","site":"s","start":1100,"duration":600,"nodes":[{"node":"n1","procs":2}],"identity":{"user":"u"}}`,
		`{"type":"reserve.v1","job":"g1","site":"s","start":1100,"duration":600,"procs":3,"identity":{"account":"a;rm -rf /"}}`,
		`{"type":"reserve.v1","job":"$(id)","site":"s","start":-1,"duration":99999999999,"identity":{"group":"-u root"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r wire.ReserveRequest
		if json.Unmarshal(data, &r) != nil {
			return
		}
		spec, ref := agent.CheckReserve(r, lim)
		if ref != nil {
			if ref.Code == "" || strings.ContainsAny(ref.Message, "\n\x00") {
				t.Fatalf("refusal %+v", ref)
			}
			return
		}
		for _, s := range []string{spec.Job, spec.Identity.User, spec.Identity.Group, spec.Identity.Account} {
			if s != "" && !forecast.IsPlainName(s) {
				t.Fatalf("accepted %q", s)
			}
		}
		for _, n := range spec.Nodes {
			if !forecast.IsPlainName(n.Node) || n.Procs <= 0 {
				t.Fatalf("accepted node %+v", n)
			}
		}
		if spec.End <= spec.Start || spec.Start < lim.Now || spec.End-spec.Start > lim.MaxDuration {
			t.Fatalf("accepted interval [%d, %d)", spec.Start, spec.End)
		}
	})
}
