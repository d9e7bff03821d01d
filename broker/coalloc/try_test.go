package coalloc

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"lookahead/forecast"
)

// TestTryTake: Try answers what Place would and leaves the pool as it was;
// Take of that answer leaves the pool as Place leaves it; and taking an
// allocation placed on a pool over some of the sites from a pool over all
// of them leaves the sites they share the same (the replay's per-job
// strategies keep one pool per site set this way).
func TestTryTake(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for it := range 1000 {
		fcs, opts := randInstance(r)
		placed, _ := NewPool(fcs, opts)
		tried, _ := NewPool(fcs, opts)
		sub, _ := NewPool(fcs[:1], opts)
		for i := range 1 + r.IntN(5) {
			job := randJob(r, i)
			before := tried.Remaining()
			got := tried.Try(job)
			if !reflect.DeepEqual(tried.Remaining(), before) {
				t.Fatalf("instance %d job %d: Try changed the pool", it, i)
			}
			want := placed.Place(job)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("instance %d job %d: Try %+v, Place %+v", it, i, got, want)
			}
			if got.Placed() {
				if err := tried.Take(job, got); err != nil {
					t.Fatalf("instance %d job %d: take: %v", it, i, err)
				}
				if err := sub.Take(job, got); err != nil {
					t.Fatalf("instance %d job %d: take on the first site: %v", it, i, err)
				}
			}
			if !reflect.DeepEqual(tried.Remaining(), placed.Remaining()) {
				t.Fatalf("instance %d job %d: after Take the pool differs from Place's", it, i)
			}
			if !reflect.DeepEqual(sub.Remaining()[0], placed.Remaining()[0]) {
				t.Fatalf("instance %d job %d: the one-site pool differs on its site", it, i)
			}
		}
	}
}

// TestTakeRefusesWhatIsNotThere: a part on an unknown node of a held site,
// or more processors than are left, is an error and takes nothing.
func TestTakeRefusesWhatIsNotThere(t *testing.T) {
	f := forecast.Forecast{Version: 1, Site: "a", Horizon: 100,
		Nodes: []forecast.Node{{Name: "n", Procs: 2, Speed: 1}},
		Slots: []forecast.Slot{{Node: "n", Procs: 2, Start: 0, End: 100, Price: 1}}}
	p, err := NewPool([]forecast.Forecast{f}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	job := forecast.JobRequest{ID: "j", Procs: 3, Walltime: 10, MaxPrice: 1}
	for _, a := range []forecast.Allocation{
		{Job: "j", Start: 0, End: 10, Parts: []forecast.Part{{Site: "a", Node: "m", Procs: 1}}},
		{Job: "j", Start: 0, End: 10, Parts: []forecast.Part{{Site: "a", Node: "n", Procs: 3}}},
		{Job: "j", Start: 95, End: 105, Parts: []forecast.Part{{Site: "a", Node: "n", Procs: 1}}},
	} {
		before := p.Remaining()
		if err := p.Take(job, a); err == nil {
			t.Errorf("take %+v: no error", a.Parts)
		}
		if !reflect.DeepEqual(p.Remaining(), before) {
			t.Errorf("take %+v: the pool changed", a.Parts)
		}
	}
}
