package maui

import (
	"bytes"
	"math"
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
