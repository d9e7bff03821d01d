package replay

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"lookahead/forecast"
)

// randomTrace is a small deterministic workload: n jobs, widths up to
// maxW, run times up to maxRun, walltimes at or above the run time for most
// jobs and below it for some (killed at the walltime).
func randomTrace(seed uint64, n, maxW int, maxRun int64) []TraceJob {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]TraceJob, n)
	var t int64
	for i := range out {
		t += r.Int64N(300)
		run := 1 + r.Int64N(maxRun)
		wall := run + r.Int64N(maxRun)
		if r.IntN(10) == 0 {
			wall = max(1, run/2)
		}
		out[i] = TraceJob{ID: fmt.Sprint(i + 1), Submit: t, Run: run, Walltime: wall, Procs: 1 + r.IntN(maxW)}
	}
	return out
}

func smallScenario() Scenario {
	return Scenario{
		Name: "small", Seed: 3, Start: 1000,
		Sites: []SiteSpec{
			{Name: "a", Nodes: 8, PPN: 2, Speed: 1, Price: 1},
			{Name: "b", Nodes: 4, PPN: 2, Speed: 0.5, Price: 2, Policy: "conservative"},
			{Name: "c", Nodes: 6, PPN: 1, Speed: 2, Price: 1},
		},
		Local:    LocalSpec{Trace: "t"},
		Grid:     GridSpec{Share: 0.3, Payment: PaymentSpec{Min: 1, Max: 8}},
		Forecast: ForecastSpec{Period: 600, Horizon: 4 * 3600},
		Broker:   BrokerSpec{Cycle: 60, CommitLead: 300, MultiSiteFactor: 1.2, StagingDelay: 30},
		Policies: StrategyNames()[:0],
	}
}

func TestEveryStrategyConserves(t *testing.T) {
	in := Inputs{Traces: map[string][]TraceJob{"t": randomTrace(1, 80, 24, 3000)}}
	sc := smallScenario()
	sc.Policies = []string{NameLookahead, NameLookaheadFinish, NameSingleSite, NameGreedy, NameMCT, NameMCTSort}
	for _, res := range conservedStudy(t, sc, in) {
		m := res.Metrics
		if m.Grid.Jobs+m.Unplaced == 0 || m.Local.Jobs == 0 {
			t.Errorf("%s: grid %d (+%d unplaced), local %d jobs", res.Policy, m.Grid.Jobs, m.Unplaced, m.Local.Jobs)
		}
		t.Logf("%-22s grid %3d AWRT %8.0f local %3d AWRT %8.0f unplaced %d util %.2f stats %+v", res.Policy, m.Grid.Jobs, m.Grid.AWRT, m.Local.Jobs, m.Local.AWRT, m.Unplaced, m.Utilization, res.Stats)
	}
}

// TestCTCSliceConserves replays a slice of the real CTC trace on seed 002's
// three sites under every strategy and both local policies, with the
// conservation checks on.
func TestCTCSliceConserves(t *testing.T) {
	in := Inputs{Traces: map[string][]TraceJob{"ctc": ctcSlice(t)}}
	sc := seed002(100)
	sc.NoBaseline = false
	sc.Grid.Deadline = 2 * 86400
	sc.Broker.MultiSiteFactor = 1.2
	sc.Broker.StagingDelay = 60
	sc.Sweep = SweepSpec{Heterogeneity: [][]float64{{1.4, 1, 0.6}}, SitePolicy: []string{"easy", "conservative"}}
	sc.Policies = StrategyNames()
	rep, err := Study(sc, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range rep.Results {
		m := res.Metrics
		if res.Checks.Count > 0 {
			t.Errorf("%s %s: %v", res.Policy, res.Label, res.Checks.Violations)
		}
		if m.Grid.Jobs+m.Unplaced == 0 || m.Local.Jobs == 0 || res.Stats.Clipped > 0 {
			t.Errorf("%s %s: grid %d+%d local %d clipped %d", res.Policy, res.Label, m.Grid.Jobs, m.Unplaced, m.Local.Jobs, res.Stats.Clipped)
		}
	}
}

func TestNoGridJobsMeansNoExtraWait(t *testing.T) {
	in := Inputs{Traces: map[string][]TraceJob{"ctc": ctcSlice(t)}}
	sc := seed002(120)
	sc.Grid.Share, sc.Grid.Redraw = 0, nil
	sc.NoBaseline = false
	rep, err := Study(sc, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Results[0].Metrics
	if m.Local.Jobs == 0 || m.LocalExtraWait != 0 || m.LocalExtraAWWT != 0 {
		t.Fatalf("local %d jobs, extra wait %v / %v without grid jobs", m.Local.Jobs, m.LocalExtraWait, m.LocalExtraAWWT)
	}
}

// TestHoldFree: broker.hold_free reserves plans on free time however far
// ahead they start, and only those; a plan that buys a queued local job's
// time waits for the commit lead.
func TestHoldFree(t *testing.T) {
	fc := forecast.Forecast{Site: "a", FreePrice: 1, Slots: []forecast.Slot{
		{Node: "n1", Procs: 4, Start: 0, End: 1000, Price: 1},
		{Node: "n1", Procs: 4, Start: 1000, End: 2000, Price: 3},
	}}
	alloc := func(start, end int64) forecast.Allocation {
		return forecast.Allocation{Job: "g", Start: start, End: end, Parts: []forecast.Part{{Site: "a", Node: "n1", Procs: 2}}}
	}
	if !onFreeTime([]forecast.Forecast{fc}, alloc(100, 900)) {
		t.Error("an allocation on idle time is not on free time")
	}
	if onFreeTime([]forecast.Forecast{fc}, alloc(900, 1100)) {
		t.Error("an allocation that buys queued time counts as free time")
	}
	in := Inputs{Traces: map[string][]TraceJob{"t": randomTrace(1, 80, 24, 3000)}}
	sc := smallScenario()
	sc.Policies = []string{NameLookahead, "lookahead[hold_free=true]"}
	for _, res := range conservedStudy(t, sc, in) {
		held := res.Stats.HeldEarly
		if (held > 0) != (res.Policy != NameLookahead) {
			t.Errorf("%s: %d plans reserved before the commit lead", res.Policy, held)
		}
	}
}

// conservedStudy runs the study and reports every conservation check that
// failed; it returns the results.
func conservedStudy(t *testing.T, sc Scenario, in Inputs) []Result {
	t.Helper()
	rep, err := Study(sc, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range rep.Results {
		if res.Checks.Count > 0 {
			t.Errorf("%s: %d violations: %v", res.Policy, res.Checks.Count, res.Checks.Violations)
		}
	}
	return rep.Results
}
