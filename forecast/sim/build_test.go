package sim

import (
	"reflect"
	"testing"

	"lookahead/forecast"
)

func smallSnapshot(now int64) forecast.Snapshot {
	up := []string{forecast.NodeFree}
	return forecast.Snapshot{
		Site: "alpha", Taken: now,
		Nodes: []forecast.SnapshotNode{
			{Name: "n1", Procs: 4, State: up, Speed: 1},
			{Name: "n2", Procs: 4, State: up, Speed: 1.5},
			{Name: "n3", Procs: 4, State: []string{forecast.NodeDown}, Speed: 1},
		},
		Jobs: []forecast.LocalJob{
			{ID: "r1", State: forecast.JobRunning, Procs: 4, Walltime: 150, Started: now - 50, Submitted: now - 60,
				Hosts: []forecast.HostProcs{{Node: "n1", Procs: 4}}},
			{ID: "q1", State: forecast.JobQueued, Queue: "low", Procs: 4, Walltime: 50, Submitted: now - 10},
			{ID: "q2", State: forecast.JobQueued, Queue: "urgent", Procs: 4, Walltime: 100, Submitted: now - 5},
			{ID: "h1", State: forecast.JobHeld, Procs: 4, Walltime: 100, Submitted: now - 5},
		},
		Reservations: []forecast.Reservation{{ID: "g.0", Start: now + 200, End: now + 300,
			Hosts: []forecast.HostProcs{{Node: "n2", Procs: 2}}}},
	}
}

func testPricing() forecast.Pricing {
	return forecast.Pricing{Base: 1, Default: forecast.Displace{Multiplier: 3},
		Rules: []forecast.PriceRule{
			{Queue: "low", Displace: forecast.Displace{Multiplier: 2}},
			{Queue: "urgent", Displace: forecast.Displace{Never: true}},
		}}
}

// Hand-computed: q1 fits now on n2 (ends before the reservation), q2 waits
// for q1 and runs [50, 150) on n2; r1 holds n1 until 100.
func TestBuildHandComputed(t *testing.T) {
	const now = 1000
	f, preds, err := Build(smallSnapshot(now), now, now+1000, EASY, testPricing())
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Validate(); err != nil {
		t.Fatalf("forecast does not validate: %v", err)
	}
	wantPreds := map[string][3]int64{"r1": {now - 50, now + 100}, "q1": {now, now + 50}, "q2": {now + 50, now + 150}}
	if len(preds) != len(wantPreds) {
		t.Fatalf("predictions %+v, want %v", preds, wantPreds)
	}
	for _, p := range preds {
		w := wantPreds[p.Job]
		if p.Start != w[0] || p.End != w[1] {
			t.Errorf("%s predicted [%d, %d), want [%d, %d)", p.Job, p.Start, p.End, w[0], w[1])
		}
		if p.Job != "r1" && (len(p.Hosts) != 1 || p.Hosts[0].Node != "n2") {
			t.Errorf("%s on %v, want n2", p.Job, p.Hosts)
		}
	}
	want := []forecast.Slot{
		{Node: "n1", Procs: 4, Start: now + 100, End: now + 1000, Price: 1},
		{Node: "n2", Procs: 4, Start: now, End: now + 50, Price: 2}, // q1, queue low: 2x base
		{Node: "n2", Procs: 2, Start: now + 150, End: now + 200, Price: 1},
		{Node: "n2", Procs: 2, Start: now + 150, End: now + 1000, Price: 1},
		{Node: "n2", Procs: 2, Start: now + 300, End: now + 1000, Price: 1},
	}
	if !reflect.DeepEqual(f.Slots, want) {
		t.Errorf("slots\n got %+v\nwant %+v", f.Slots, want)
	}
	if len(f.Nodes) != 2 || f.Nodes[1].Speed != 1.5 {
		t.Errorf("nodes %+v: want n1, n2 (n3 is down)", f.Nodes)
	}
}

func TestPricingRules(t *testing.T) {
	p := forecast.Pricing{Base: 2, Default: forecast.Displace{Multiplier: 1.5, PerPriority: 0.1, Max: 4},
		Rules: []forecast.PriceRule{{Queue: "low", Displace: forecast.Displace{Multiplier: 2}}, {Queue: "urgent", Displace: forecast.Displace{Never: true}}}}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		j     forecast.LocalJob
		price float64
		ok    bool
	}{
		{forecast.LocalJob{Queue: "low", Priority: 1000}, 4, true},
		{forecast.LocalJob{Queue: "urgent"}, 0, false},
		{forecast.LocalJob{Queue: "batch", Priority: 5}, 2 * 2, true},
		{forecast.LocalJob{Queue: "batch", Priority: 100}, 8, true}, // capped at 4x
		{forecast.LocalJob{Queue: "batch", Priority: -50}, 3, true},
	}
	for _, c := range cases {
		got, ok := p.Price(c.j)
		if ok != c.ok || got != c.price {
			t.Errorf("Price(%+v) = %v, %v; want %v, %v", c.j, got, ok, c.price, c.ok)
		}
	}
	bad := forecast.Pricing{Base: 1, Default: forecast.Displace{Multiplier: 0.5}}
	if bad.Validate() == nil {
		t.Error("multiplier 0.5 must be refused: displacing a job cannot be cheaper than free time")
	}
}
