package maui

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// sim5Exact is Maui's own event-exact schedule of the sim5 workload (n
// jobs on 64×8), times relative to its first start.
func sim5Exact(t *testing.T, n string) (recs []WorkloadRecord, r0 int64) {
	t.Helper()
	recs, err := ParseWorkload(bytes.NewReader(readFixture(t, "sim5/simstat.exact"+n+".out.gz")))
	if err != nil {
		t.Fatal(err)
	}
	r0 = int64(math.MaxInt64)
	for _, r := range recs {
		r0 = min(r0, r.Start)
	}
	return recs, r0
}

func sim5Oracle(t *testing.T, n string, site []byte) Oracle {
	t.Helper()
	o, why, err := oracleFor(readFixture(t, "sim5/resource64.trace"), readFixture(t, "sim5/workload"+n+".trace.gz"), site, nil, time.UTC, 0, 48*3600)
	if err != nil || why != "" {
		t.Fatalf("oracle: %v %s", err, why)
	}
	return o
}

// TestOracleReproducesSim5: the built-in simulator, fed the traces Maui
// was fed and the site's maui.cfg, predicts every start and host of
// Maui's event-exact schedule (simstat.exact*.out, captured) inside the
// 12 h window; its plan stops at every one of those starts and skips the
// job ends where nothing starts.
func TestOracleReproducesSim5(t *testing.T) {
	for _, c := range []struct {
		n                 string
		wantPlan, allEnds int
	}{{"500", 200, 277}, {"2000", 360, 471}} {
		recs, r0 := sim5Exact(t, c.n)
		o := sim5Oracle(t, c.n, readFixture(t, "sim5/maui.cfg.exact"))
		starts := map[int64]bool{}
		for _, r := range recs {
			s := r.Start - r0
			if s >= 12*3600 {
				continue
			}
			if o.Start[r.ID] != s {
				t.Fatalf("%s: %s starts at %+d in Maui, %+d in the simulator", c.n, r.ID, s, o.Start[r.ID])
			}
			if got := sortedNodes(o.Hosts[r.ID]); got != strings.Join(uniqSorted(r.Hosts), ",") {
				t.Fatalf("%s: %s on %s in Maui, %s in the simulator", c.n, r.ID, strings.Join(r.Hosts, ","), got)
			}
			starts[s] = true
		}
		plan := o.Plan(nil, StepPolicy{Near: 12 * 3600}, 48*3600)
		onPlan := map[int64]bool{}
		for _, s := range plan {
			onPlan[s] = true
		}
		for s := range starts {
			if s > 0 && !onPlan[s] {
				t.Errorf("%s: Maui starts a job at %+d s, the plan does not stop there", c.n, s)
			}
		}
		cost := EvaluatePolicy(recs, StepPolicy{Near: 12 * 3600, Coarse: 300}, 48*3600, 512)
		if len(plan) != c.wantPlan || cost.ExactStops != c.allEnds {
			t.Errorf("%s: plan of %d stops (want %d), plain stepping %d (want %d)", c.n, len(plan), c.wantPlan, cost.ExactStops, c.allEnds)
		}
		t.Logf("sim5 %s: plan %d stops, plain exact stepping %d", c.n, len(plan), cost.ExactStops)
	}
}

// sim5Seen is what Maui's reads would show at t on its exact schedule:
// every job started by t, at its captured start, on the oracle's per-node
// tasks where the captured node names agree (simstat.out names nodes, not
// tasks per node).
func sim5Seen(t *testing.T, recs []WorkloadRecord, r0 int64, o Oracle, at int64) map[string]*jobObs {
	t.Helper()
	seen := map[string]*jobObs{}
	for _, r := range recs {
		if s := r.Start - r0; s <= at {
			if sortedNodes(o.Hosts[r.ID]) != strings.Join(uniqSorted(r.Hosts), ",") {
				t.Fatalf("%s: nodes %v vs %v", r.ID, r.Hosts, o.Hosts[r.ID])
			}
			seen[r.ID] = &jobObs{start: s, hosts: o.Hosts[r.ID]}
		}
	}
	return seen
}

// TestOracleCheckOnMauiSchedule: at every stop of the plan, the oracle
// agrees with what Maui's own exact schedule shows (captured), and its
// simstat.out records pass CheckRecords; a start a second late, other
// hosts, a job the oracle starts that Maui did not, are each reported.
func TestOracleCheckOnMauiSchedule(t *testing.T) {
	recs, r0 := sim5Exact(t, "500")
	o := sim5Oracle(t, "500", readFixture(t, "sim5/maui.cfg.exact"))
	for _, at := range append([]int64{0}, o.Plan(nil, StepPolicy{}, 48*3600)...) {
		if why := o.Check(at, sim5Seen(t, recs, r0, o, at)); why != "" {
			t.Fatalf("at %+d: %s", at, why)
		}
	}
	if why := o.CheckRecords(recs, r0, 12*3600); why != "" {
		t.Fatal(why)
	}
	const at = 3 * 3600 // a job running then, started after +0
	seen := sim5Seen(t, recs, r0, o, at)
	var some string
	for name, ob := range seen {
		if ob.start > 0 && ob.start < at && o.End[name] > at && (some == "" || name < some) {
			some = name
		}
	}
	late := *seen[some]
	late.start++
	other := *seen[some]
	other.hosts = map[string]int{"c064": 1}
	for what, change := range map[string]func(map[string]*jobObs){
		"late":    func(m map[string]*jobObs) { m[some] = &late },
		"hosts":   func(m map[string]*jobObs) { m[some] = &other },
		"missing": func(m map[string]*jobObs) { delete(m, some) },
	} {
		m := sim5Seen(t, recs, r0, o, at)
		change(m)
		if why := o.Check(at, m); why == "" || !strings.Contains(why, some) {
			t.Errorf("%s: Check says %q", what, why)
		}
	}
	bad := append([]WorkloadRecord(nil), recs...)
	for i := range bad {
		if bad[i].ID == some {
			bad[i].Start++
		}
	}
	if why := o.CheckRecords(bad, r0, 12*3600); !strings.Contains(why, some) {
		t.Errorf("CheckRecords on a start a second late: %q", why)
	}
}

// TestOracleWrongPolicyIsCaught: an oracle run under another policy than
// the one Maui ran (node allocation, backfill) departs from Maui's
// captured schedule, and the checks report it: a plan from a wrong model
// is never taken for Maui's.
func TestOracleWrongPolicyIsCaught(t *testing.T) {
	recs, r0 := sim5Exact(t, "500")
	site := string(readFixture(t, "sim5/maui.cfg.exact"))
	for _, c := range []struct{ from, to string }{
		{"NODEALLOCATIONPOLICY  MINRESOURCE", "NODEALLOCATIONPOLICY  FIRSTAVAILABLE"},
		{"BACKFILLPOLICY        FIRSTFIT", "BACKFILLPOLICY        NONE"},
	} {
		if !strings.Contains(site, c.from) {
			t.Fatalf("maui.cfg.exact has no %q", c.from)
		}
		o := sim5Oracle(t, "500", []byte(strings.Replace(site, c.from, c.to, 1)))
		if why := o.CheckRecords(recs, r0, 12*3600); why == "" {
			t.Errorf("%s: CheckRecords found no departure", c.to)
		}
	}
}

// TestPlanPure: the plan is every distinct predicted start and known
// boundary inside (0, near) and not after the horizon, plus the last
// predicted end before near, ascending.
func TestPlanPure(t *testing.T) {
	o := Oracle{Start: map[string]int64{"a": 0, "b": 100, "c": 100, "d": 250, "e": 5000},
		End: map[string]int64{"a": 100, "b": 400, "c": 900, "d": 1200, "e": 6000}}
	got := o.Plan([]int64{50, 250, 3000}, StepPolicy{Near: 1000}, 4000)
	if want := []int64{50, 100, 250, 900}; !reflect.DeepEqual(got, want) {
		t.Errorf("plan %v, want %v", got, want)
	}
	if got := o.Plan(nil, StepPolicy{Near: 1000}, 200); !reflect.DeepEqual(got, []int64{100}) {
		t.Errorf("plan to horizon 200: %v", got)
	}
}

// TestMergeStops: batches land on every stop, in order, each a whole
// number of equal steps; equal gaps merge, others do not unless cheap.
func TestMergeStops(t *testing.T) {
	for _, c := range []struct {
		t       int64
		stops   []int64
		perStop int64
		want    []Batch
	}{
		{0, []int64{100, 200, 300}, 1, []Batch{{100, 3}}},
		{0, []int64{100, 250}, 1, []Batch{{100, 1}, {150, 1}}},
		{10, []int64{10, 60, 110, 160, 200}, 1, []Batch{{50, 3}, {40, 1}}},
		{0, []int64{60, 90}, 4, []Batch{{30, 3}}}, // one extra iteration (at 30) for one stop fewer
		{0, nil, 1, nil},
	} {
		got := MergeStops(c.t, c.stops, c.perStop)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("MergeStops(%d, %v, %d) = %v, want %v", c.t, c.stops, c.perStop, got, c.want)
		}
	}
	o := sim5Oracle(t, "500", readFixture(t, "sim5/maui.cfg.exact"))
	plan := o.Plan(nil, StepPolicy{}, 48*3600)
	for _, per := range []int64{1, 30} {
		at, on := int64(0), map[int64]bool{}
		for _, b := range MergeStops(0, plan, per) {
			for range b.Iters {
				at += b.Step
				on[at] = true
			}
		}
		for _, s := range plan {
			if !on[s] {
				t.Fatalf("perStop %d: no iteration at planned stop %d", per, s)
			}
		}
		if at != plan[len(plan)-1] {
			t.Errorf("perStop %d: batches end at %d, plan at %d", per, at, plan[len(plan)-1])
		}
	}
}
