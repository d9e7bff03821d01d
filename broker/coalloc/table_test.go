package coalloc

import (
	"reflect"
	"strings"
	"testing"

	"lookahead/forecast"
)

func mkSite(name string, nodes []forecast.Node, slots ...forecast.Slot) forecast.Forecast {
	return forecast.Forecast{Version: 1, Site: name, Seq: 1, Generated: 0, Horizon: 1 << 40, Nodes: nodes, Slots: slots}
}

func nd(name string, procs int, speed float64, feats ...string) forecast.Node {
	return forecast.Node{Name: name, Procs: procs, Speed: speed, MemMB: 1000, Features: feats}
}

func sl(node string, procs int, start, end int64, price float64) forecast.Slot {
	return forecast.Slot{Node: node, Procs: procs, Start: start, End: end, Price: price}
}

func jb(id string, procs int, wall int64, maxPrice float64) forecast.JobRequest {
	return forecast.JobRequest{ID: id, Procs: procs, Walltime: wall, MaxPrice: maxPrice}
}

func TestNamedCases(t *testing.T) {
	cases := []struct {
		name  string
		fcs   []forecast.Forecast
		job   forecast.JobRequest
		opts  Options
		want  forecast.Allocation
		error string
	}{
		{
			name: "job longer than each of two abutting slots but not their sum",
			fcs: []forecast.Forecast{mkSite("a", []forecast.Node{nd("n1", 4, 1)},
				sl("n1", 4, 0, 100, 1), sl("n1", 4, 100, 200, 1))},
			job:  jb("j", 4, 150, 1),
			want: forecast.Allocation{Job: "j", Start: 0, End: 150, Parts: []forecast.Part{{Site: "a", Node: "n1", Procs: 4}}, Cost: 4 * 150.0 / 3600},
		},
		{
			name: "overlapping slots on one node add up only where both hold",
			fcs: []forecast.Forecast{mkSite("a", []forecast.Node{nd("n1", 8, 1)},
				sl("n1", 4, 0, 100, 1), sl("n1", 4, 50, 300, 1))},
			job:  jb("j", 8, 50, 1),
			want: forecast.Allocation{Job: "j", Start: 50, End: 100, Parts: []forecast.Part{{Site: "a", Node: "n1", Procs: 8}}, Cost: 8 * 50.0 / 3600},
		},
		{
			name: "too expensive slot in the middle of a free stretch",
			fcs: []forecast.Forecast{mkSite("a", []forecast.Node{nd("n1", 4, 1)},
				sl("n1", 4, 0, 100, 1), sl("n1", 4, 100, 150, 5), sl("n1", 4, 150, 400, 1))},
			job:  jb("j", 4, 200, 2),
			want: forecast.Allocation{Job: "j", Start: 150, End: 350, Parts: []forecast.Part{{Site: "a", Node: "n1", Procs: 4}}, Cost: 4 * 200.0 / 3600},
		},
		{
			name: "only fits across two sites",
			fcs: []forecast.Forecast{
				mkSite("a", []forecast.Node{nd("n1", 4, 1)}, sl("n1", 4, 0, 1000, 1)),
				mkSite("b", []forecast.Node{nd("m1", 4, 1)}, sl("m1", 4, 0, 1000, 2)),
			},
			job:  jb("j", 8, 100, 2),
			want: forecast.Allocation{Job: "j", Start: 0, End: 100, Parts: []forecast.Part{{Site: "a", Node: "n1", Procs: 4}, {Site: "b", Node: "m1", Procs: 4}}, Cost: 4*100.0/3600*1 + 4*100.0/3600*2},
		},
		{
			name: "single site refuses what only fits across two sites",
			fcs: []forecast.Forecast{
				mkSite("a", []forecast.Node{nd("n1", 4, 1)}, sl("n1", 4, 0, 1000, 1)),
				mkSite("b", []forecast.Node{nd("m1", 4, 1)}, sl("m1", 4, 0, 1000, 2)),
			},
			job:   func() forecast.JobRequest { j := jb("j", 8, 100, 2); j.MaxSites = 1; return j }(),
			error: NoFitCapacity,
		},
		{
			name: "faster tier finishes earlier despite starting later",
			fcs: []forecast.Forecast{mkSite("a", []forecast.Node{nd("slow", 4, 1), nd("fast", 4, 4)},
				sl("slow", 4, 0, 10000, 1), sl("fast", 4, 500, 10000, 1))},
			job: func() forecast.JobRequest {
				j := jb("j", 4, 4000, 1)
				j.Criterion = forecast.EarliestFinish
				return j
			}(),
			want: forecast.Allocation{Job: "j", Start: 500, End: 1500, Parts: []forecast.Part{{Site: "a", Node: "fast", Procs: 4}}, Cost: 4 * 1000.0 / 3600},
		},
		{
			name: "earliest-start takes the slow node at once",
			fcs: []forecast.Forecast{mkSite("a", []forecast.Node{nd("slow", 4, 1), nd("fast", 4, 4)},
				sl("slow", 4, 0, 10000, 1), sl("fast", 4, 500, 10000, 1))},
			job: func() forecast.JobRequest {
				j := jb("j", 4, 4000, 1)
				j.Criterion = forecast.EarliestStart
				return j
			}(),
			want: forecast.Allocation{Job: "j", Start: 0, End: 4000, Parts: []forecast.Part{{Site: "a", Node: "slow", Procs: 4}}, Cost: 4 * 4000.0 / 3600},
		},
		{
			name: "multi-site factor and staging delay lengthen a spanning hold",
			fcs: []forecast.Forecast{
				mkSite("a", []forecast.Node{nd("n1", 4, 1)}, sl("n1", 4, 0, 1000, 1)),
				mkSite("b", []forecast.Node{nd("m1", 4, 1)}, sl("m1", 4, 0, 1000, 1)),
			},
			job:  jb("j", 8, 100, 1),
			opts: Options{MultiSiteFactor: 1.5, StagingDelay: 30},
			want: forecast.Allocation{Job: "j", Start: 0, End: 180, Parts: []forecast.Part{{Site: "a", Node: "n1", Procs: 4}, {Site: "b", Node: "m1", Procs: 4}}, Cost: 8 * 180.0 / 3600},
		},
		{
			name:  "features nobody has",
			fcs:   []forecast.Forecast{mkSite("a", []forecast.Node{nd("n1", 4, 1, "ib")}, sl("n1", 4, 0, 1000, 1))},
			job:   func() forecast.JobRequest { j := jb("j", 1, 10, 1); j.Features = []string{"gpu"}; return j }(),
			error: NoFitRequirements,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewPool(c.fcs, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			got := p.Place(c.job)
			if c.error != "" {
				if got.Error != c.error {
					t.Fatalf("got %+v, want error %q", got, c.error)
				}
				return
			}
			if crit := p.criterion(c.job); !strings.HasPrefix(got.Why, crit+": ") {
				t.Fatalf("why %q does not name the criterion %s", got.Why, crit)
			}
			got.Why = ""
			var sum float64
			for i := range got.Parts {
				sum += got.Parts[i].Cost
				got.Parts[i].Cost = 0
			}
			if !costEqual(sum, got.Cost) {
				t.Fatalf("parts cost %v in all, the allocation %v", sum, got.Cost)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestPlaceRemovesWhatItUsed(t *testing.T) {
	fcs := []forecast.Forecast{mkSite("a", []forecast.Node{nd("n1", 4, 1)}, sl("n1", 4, 0, 300, 1))}
	p, err := NewPool(fcs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a1 := p.Place(jb("j1", 3, 100, 1))
	a2 := p.Place(jb("j2", 2, 100, 1))
	a3 := p.Place(jb("j3", 1, 100, 1))
	if a1.Start != 0 || a2.Start != 100 || a3.Start != 0 {
		t.Fatalf("starts %d %d %d, want 0 100 0", a1.Start, a2.Start, a3.Start)
	}
	if a4 := p.Place(jb("j4", 4, 200, 1)); !strings.HasPrefix(a4.Error, "no-fit:") {
		t.Fatalf("j4 placed %+v on a full node", a4)
	}
}
