package coalloc

import (
	"fmt"
	"reflect"
	"testing"

	"lookahead/forecast"
)

// byteSource turns fuzz input into small numbers; it yields zeros once the
// input runs out.
type byteSource struct{ b []byte }

func (s *byteSource) n(k int) int {
	if len(s.b) == 0 {
		return 0
	}
	v := int(s.b[0]) % k
	s.b = s.b[1:]
	return v
}

// fuzzInstance decodes an instance like randInstance's, driven by bytes.
func fuzzInstance(s *byteSource) ([]forecast.Forecast, []forecast.JobRequest, Options) {
	var fcs []forecast.Forecast
	for si := range 1 + s.n(3) {
		f := forecast.Forecast{Version: 1, Site: fmt.Sprintf("s%d", si), Horizon: 1000}
		for ni := range 1 + s.n(3) {
			node := forecast.Node{Name: fmt.Sprintf("n%d", ni), Procs: 1 + s.n(4),
				Speed: []float64{1, 1.5, 2, 0.5}[s.n(4)], MemMB: int64(500 * (1 + s.n(2)))}
			if s.n(2) == 1 {
				node.Features = []string{"ib"}
			}
			f.Nodes = append(f.Nodes, node)
			for range 1 + s.n(4) {
				st := int64(5 * s.n(16))
				f.Slots = append(f.Slots, forecast.Slot{Node: node.Name, Procs: 1 + s.n(node.Procs),
					Start: st, End: st + int64(5*(1+s.n(10))), Price: float64(1 + s.n(3))})
			}
		}
		fcs = append(fcs, f)
	}
	opts := Options{NotBefore: int64(5 * s.n(4)), MultiSiteFactor: []float64{0, 1, 1.25, 2}[s.n(4)],
		StagingDelay: int64(3 * s.n(3))}
	var jobs []forecast.JobRequest
	for i := range 1 + s.n(4) {
		j := forecast.JobRequest{ID: fmt.Sprintf("j%d", i), Procs: 1 + s.n(10), Walltime: int64(1 + s.n(60)),
			MaxPrice: float64(s.n(4)), MaxSites: s.n(4), Submitted: int64(s.n(3)),
			Criterion: []string{"", forecast.EarliestStart, forecast.EarliestFinish}[s.n(3)]}
		if s.n(4) == 0 {
			j.MinSpeed = 1.5
		}
		if s.n(4) == 0 {
			j.Features = []string{"ib"}
		}
		if s.n(4) == 0 {
			j.MemMB = 800
		}
		jobs = append(jobs, j)
	}
	return fcs, jobs, opts
}

// FuzzPlace: on any small instance the fuzzer builds, every answer agrees
// with the brute-force oracle (as in TestAgainstOracle), and the naive
// baseline plans identically.
func FuzzPlace(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{2, 2, 3, 0, 1, 3, 4, 5, 1, 2, 7, 3, 2, 9, 9, 9, 1, 0, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte("abutting slots and overlapping ones across three sites"))
	f.Fuzz(func(t *testing.T, in []byte) {
		fcs, jobs, opts := fuzzInstance(&byteSource{b: in})
		Options{}.SortQueue(jobs)
		p, err := NewPool(fcs, opts)
		if err != nil {
			t.Fatal(err)
		}
		naive, _ := NewPool(fcs, opts)
		naive.useNaive()
		for _, job := range jobs {
			before := p.Remaining()
			start, finish, ok := oracle(before, job, opts)
			a := p.Place(job)
			if b := naive.Place(job); !reflect.DeepEqual(a, b) {
				t.Fatalf("sweep %+v, naive %+v", a, b)
			}
			after := p.Remaining()
			if !ok {
				if a.Error == "" || !reflect.DeepEqual(before, after) {
					t.Fatalf("oracle finds no fit, planner: %+v", a)
				}
				continue
			}
			if err := checkAlloc(before, after, job, a, opts); err != nil {
				t.Fatalf("%v: job %+v alloc %+v", err, job, a)
			}
			crit := job.CriterionOrDefault()
			if crit == forecast.EarliestStart && a.Start != start || crit == forecast.EarliestFinish && a.End != finish {
				t.Fatalf("%s: got [%d,%d), oracle start %d finish %d", crit, a.Start, a.End, start, finish)
			}
		}
	})
}
