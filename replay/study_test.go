package replay

import (
	"math"
	"testing"
)

// The per-class breakdown adds up to the grid stream: every grid job is in
// one class, and Σ WorkResponse / Σ Work over the classes is the AWRT.
// Users pay for the share of their reservation they held: at most what the
// reservations cost, less where jobs ended early, and the owners' earnings
// add up to it. A grid job no horizon can hold is refused, not left
// waiting.
func TestClassesChargesAndRefusals(t *testing.T) {
	sc := seed002(200)
	sc.Policies = []string{NameLookahead, NameSingleSite}
	sc.Forecast.Horizon = 6 * 3600 // shorter than some CTC walltimes
	in := Inputs{Traces: map[string][]TraceJob{"ctc": ctcSlice(t)}}
	rep, err := Study(sc, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		m := r.Metrics
		jobs, work, wr := 0, 0.0, 0.0
		for _, c := range m.GridClasses {
			jobs, work, wr = jobs+c.Jobs, work+c.Work, wr+c.WorkResponse
		}
		if jobs != m.Grid.Jobs || math.Abs(wr/work-m.Grid.AWRT) > 1e-6*m.Grid.AWRT {
			t.Errorf("%s: classes hold %d jobs, AWRT %v; the stream %d jobs, AWRT %v", r.Policy, jobs, wr/work, m.Grid.Jobs, m.Grid.AWRT)
		}
		earned := 0.0
		for _, e := range m.SiteEarnings {
			earned += e
		}
		if !(m.Credits < m.Committed) || math.Abs(earned-m.Credits) > 1e-6*m.Credits {
			t.Errorf("%s: paid %v of %v reserved (jobs that end early pay less), owners earned %v", r.Policy, m.Credits, m.Committed, earned)
		}
		if m.Refused == 0 || m.Unplaced != 0 {
			t.Errorf("%s: %d refused, %d unplaced: a walltime past every 6 h horizon is refused at submit", r.Policy, m.Refused, m.Unplaced)
		}
	}
}

// StudyPoints compares every broker with the better simple one and splits
// lookahead's difference by class.
func TestStudyPoints(t *testing.T) {
	res := func(policy string, awrt, wait float64, classes ...ClassMetrics) Result {
		return Result{Policy: policy, Label: "p", Metrics: Metrics{Grid: StreamMetrics{AWRT: awrt}, LocalExtraWait: wait, GridClasses: classes}}
	}
	classes := func(wr1, wr2 float64) []ClassMetrics {
		cs := make([]ClassMetrics, len(Classes()))
		for i, c := range Classes() {
			cs[i] = ClassMetrics{Width: c[0], Run: c[1]}
		}
		cs[0] = ClassMetrics{Width: WidthNarrow, Run: RunShort, Jobs: 2, Work: 10, WorkResponse: wr1}
		cs[8] = ClassMetrics{Width: WidthWide, Run: RunLong, Jobs: 1, Work: 10, WorkResponse: wr2}
		return cs
	}
	reps := []Report{
		{Scenario: "s", Results: []Result{res(NameSingleSite, 120, 100), res(NameGreedy, 100, 200, classes(500, 500)...),
			res(NameLookahead, 110, 90, classes(500, 700)...)}},
		{Scenario: "s", Results: []Result{res(NameSingleSite, 140, 300), res(NameGreedy, 100, 200, classes(500, 500)...),
			res(NameLookahead, 130, 110, classes(600, 700)...)}},
	}
	pts := StudyPoints(reps)
	if len(pts) != 1 || pts[0].Best != NameGreedy {
		t.Fatalf("points %+v, want one with greedy the best simple broker", pts)
	}
	la := pts[0].Brokers[2]
	if la.Policy != NameLookahead || la.VsBest != 1.2 || la.VsSingle != 0.5 || la.GridAWRT.Min != 110 || la.GridAWRT.Max != 130 {
		t.Fatalf("lookahead %+v: want 1.2 × greedy's AWRT, half single-site's local wait", la)
	}
	c := pts[0].Classes
	if c[0].Share != 0.2 || c[8].Share != 0.8 || c[8].AWRT != 70 || c[8].BestAWRT != 50 || c[0].Jobs != 2 {
		t.Fatalf("classes %+v: want the wide long jobs to carry 80%% of the difference", c)
	}
}
