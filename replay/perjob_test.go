package replay

import (
	"reflect"
	"testing"
)

// TestPerJobSharedSameReplay: the per-job strategies give the same replay
// (every job record, metrics, stats) with pools shared over a cycle as
// with a new pool per job and site set, on seed 002's heterogeneous sites
// with a multi-site factor, where greedy co-allocates and queues build up.
func TestPerJobSharedSameReplay(t *testing.T) {
	jobs := ctcSlice(t)
	in := Inputs{Traces: map[string][]TraceJob{"ctc": jobs}}
	sc := seed002(perJobTestJobs)
	sc.Broker.MultiSiteFactor = 1.3
	sc.Broker.Order = OrderFCFS
	for i, h := range []float64{1.4, 1, 0.6} {
		sc.Sites[i].Heterogeneity, sc.Sites[i].Speed = h, 1/h
	}
	sc = sc.WithDefaults()
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	w, err := BuildWorkload(sc, in)
	if err != nil {
		t.Fatal(err)
	}
	for _, pol := range []string{NameSingleSite, NameGreedy, NameCheap, NameMCTSort} {
		t.Run(pol, func(t *testing.T) {
			old, err := RunOnce(sc, w, pol, nil, Options{Rebuild: true})
			if err != nil {
				t.Fatal(err)
			}
			got, err := RunOnce(sc, w, pol, nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Stats.Commits == 0 || (pol == NameGreedy && got.Stats.MultiSite == 0) {
				t.Fatalf("the slice tests too little: %+v", got.Stats)
			}
			if !reflect.DeepEqual(got.Records, old.Records) {
				t.Errorf("records differ from the rebuilt pools'")
			}
			if !reflect.DeepEqual(got.Metrics, old.Metrics) || got.Stats != old.Stats || got.Checks.Count != 0 {
				t.Errorf("shared: %+v %+v %+v\nrebuilt: %+v %+v", got.Metrics, got.Stats, got.Checks, old.Metrics, old.Stats)
			}
		})
	}
}

const perJobTestJobs = 200
