package replay

import (
	"fmt"
	"lookahead/broker/coalloc"
	"lookahead/forecast"
	"math"
	"reflect"
	"slices"
	"testing"
)

// TestPerJobSharedSameReplay: the per-job strategies give the same replay
// (every job record, metrics, stats) with pools shared over a cycle as
// with a new pool per job and site set, on seed 002's heterogeneous sites
// with a multi-site factor, where greedy co-allocates and queues build up.
func TestPerJobSharedSameReplay(t *testing.T) {
	sc, w := perJobTestSetup(t)
	for _, pol := range []string{NameSingleSite, NameGreedy, NameCheap, NameMCTSort} {
		t.Run(pol, func(t *testing.T) { sameReplay(t, sc, w, pol) })
	}
}

func perJobTestSetup(t *testing.T) (Scenario, Workload) {
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
	return sc, w
}

// sameReplay runs pol with and without Options.Rebuild and wants the same
// records, metrics and stats.
func sameReplay(t *testing.T, sc Scenario, w Workload, pol string) {
	old, err := RunOnce(sc, w, pol, nil, Options{Rebuild: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := RunOnce(sc, w, pol, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Stats.Commits == 0 || (pol != NameSingleSite && pol != NameCheap && pol != NameMCTSort && got.Stats.MultiSite == 0) {
		t.Fatalf("the slice tests too little: %+v", got.Stats)
	}
	if !reflect.DeepEqual(got.Records, old.Records) {
		t.Errorf("records differ from the rebuilt pools'")
	}
	if !reflect.DeepEqual(got.Metrics, old.Metrics) || got.Stats != old.Stats || got.Checks.Count != 0 {
		t.Errorf("shared: %+v %+v %+v\nrebuilt: %+v %+v", got.Metrics, got.Stats, got.Checks, old.Metrics, old.Stats)
	}
}

const perJobTestJobs = 200

// TestLookaheadKeptSameReplay: the lookahead strategies give the same
// replay keeping last cycle's answers where exact as placing every job
// again every cycle, in FCFS and in price order, and with the free
// window since submission.
func TestLookaheadKeptSameReplay(t *testing.T) {
	sc, w := perJobTestSetup(t)
	for _, order := range []string{OrderFCFS, OrderPriority} {
		sc.Broker.Order = order
		for _, pol := range []string{NameLookahead, NameLookaheadStart} {
			t.Run(order+"/"+pol, func(t *testing.T) { sameReplay(t, sc, w, pol) })
		}
	}
	// free windows that shrink as jobs wait: kept answers expire
	sc.Broker.Order, sc.Broker.FreeWindow = OrderFCFS, coalloc.FreeWindowSinceSubmit
	t.Run("fcfs/since-submit/"+NameLookahead, func(t *testing.T) { sameReplay(t, sc, w, NameLookahead) })
}

// TestKeptAnswersFollowTime: planning again on the same forecasts later
// (some answers of the first cycle now start in the past) gives what
// planning from scratch gives, for every strategy: answers that started
// before now are not kept.
func TestKeptAnswersFollowTime(t *testing.T) {
	var fcs []forecast.Forecast
	for s, nodes := range []int{4, 2, 1} {
		f := forecast.Forecast{Version: 1, Site: fmt.Sprintf("s%d", s), Horizon: 40000}
		for n := range nodes {
			name := fmt.Sprintf("n%d", n)
			f.Nodes = append(f.Nodes, forecast.Node{Name: name, Procs: 4, Speed: []float64{1, 1.5, 0.8}[s]})
			f.Slots = append(f.Slots,
				forecast.Slot{Node: name, Procs: 4, Start: 0, End: 3000 * int64(n+s+1), Price: 1},
				forecast.Slot{Node: name, Procs: 2, Start: 3000 * int64(n+s+1), End: 40000, Price: 1})
		}
		fcs = append(fcs, f)
	}
	var queue []GridJob
	for i := range 12 {
		queue = append(queue, GridJob{Req: forecast.JobRequest{ID: fmt.Sprintf("j%02d", i), Procs: 2 + 3*(i%4),
			Walltime: int64(600 + 900*(i%3)), MaxPrice: 2, Submitted: int64(i)}})
	}
	pools := func(fcs []forecast.Forecast, nb int64) (Pool, error) {
		return coalloc.NewPool(fcs, coalloc.Options{NotBefore: nb, MultiSiteFactor: 1.3, Tolerance: 0.5})
	}
	env := Env{NewPool: pools, Order: queueOrder(coallocOptions(Scenario{Broker: BrokerSpec{Order: OrderFCFS}}))}
	for _, f := range fcs {
		env.Sites = append(env.Sites, SiteInfo{Name: f.Site, Procs: 4 * len(f.Nodes), Speed: f.Nodes[0].Speed, Price: 1})
	}
	for _, name := range StrategyNames() {
		strat, _ := StrategyByName(name)
		kept := env
		kept.memo = &planMemo{}
		first, err := strat.Plan(0, fcs, queue, kept)
		if err != nil {
			t.Fatal(err)
		}
		later := int64(0)
		for _, a := range first {
			later = max(later, a.Start/2)
		}
		got, err := strat.Plan(later, fcs, queue, kept)
		if err != nil {
			t.Fatal(err)
		}
		scratch := env
		scratch.Rebuild = true
		want, err := strat.Plan(later, fcs, queue, scratch)
		if err != nil {
			t.Fatal(err)
		}
		if !sameAllocs(got, want) {
			t.Errorf("%s at %d: kept %+v\nfrom scratch %+v", name, later, got, want)
		}
	}
}

// sameAllocs: the same allocations, costs equal but for rounding (a pool
// given what earlier jobs took cuts a node's window at more edges than
// one rebuilt from the remaining forecasts, so a cost may be summed in
// more pieces: 1.3333333333333335 for 1.3333333333333333).
func sameAllocs(a, b []forecast.Allocation) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		x.Parts, y.Parts = slices.Clone(x.Parts), slices.Clone(y.Parts)
		if !near(x.Cost, y.Cost) || len(x.Parts) != len(y.Parts) {
			return false
		}
		for k := range x.Parts {
			if !near(x.Parts[k].Cost, y.Parts[k].Cost) {
				return false
			}
			x.Parts[k].Cost, y.Parts[k].Cost = 0, 0
		}
		x.Cost, y.Cost = 0, 0
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b)) }

// TestStudiesSameWithWorkers: two seeds' studies give the same reports run
// one at a time and two at a time.
func TestStudiesSameWithWorkers(t *testing.T) {
	sc, _ := perJobTestSetup(t)
	sc.Local.Jobs = 80
	sc.Policies = []string{NameLookahead, NameGreedy}
	sc.NoBaseline = false
	sc.Sweep = SweepSpec{MultiSiteFactor: []float64{1, 1.6}}
	in := Inputs{Traces: map[string][]TraceJob{"ctc": ctcSlice(t)}}
	second := sc
	second.Seed++
	scs := []Scenario{sc, second}
	calls := 0
	one, err := Studies(scs, in, Options{Workers: 1, Progress: func(done, total int) { calls++ }})
	if err != nil {
		t.Fatal(err)
	}
	two, err := Studies(scs, in, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 8 || len(one) != 2 || len(one[0].Results) != 4 {
		t.Fatalf("%d progress calls, %d reports", calls, len(one))
	}
	for k := range one {
		for i := range one[k].Results {
			a, b := one[k].Results[i], two[k].Results[i]
			if a.Policy != b.Policy || a.Label != b.Label || !reflect.DeepEqual(a.Metrics, b.Metrics) || !reflect.DeepEqual(a.Records, b.Records) {
				t.Errorf("study %d result %d (%s %s) differs with two workers", k, i, a.Policy, a.Label)
			}
		}
	}
}
