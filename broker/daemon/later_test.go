package daemon

import (
	"strings"
	"testing"
	"time"

	"lookahead/broker/coalloc"
	"lookahead/forecast"
	"lookahead/internal/cputime"
	"lookahead/internal/durfmt"
)

// laterSites is the black-box run's grid: delta's three 4-processor nodes
// with 9 free now (a local job holds 2 of n3 for 2 h) and beta's two
// nodes, all free, at price 1; n3's 2 held processors are offered at
// dearPrice until the local job ends (0: not offered).
func laterSites(now int64, dearPrice float64) []forecast.Forecast {
	h, free := now+6*3600, now+2*3600
	node := func(n string) forecast.Node { return forecast.Node{Name: n, Procs: 4, Speed: 1, MemMB: 2000} }
	delta := forecast.Forecast{Version: 1, Site: "delta", Seq: 1, Generated: now, Horizon: h,
		Nodes: []forecast.Node{node("n1"), node("n2"), node("n3")},
		Slots: []forecast.Slot{{Node: "n1", Procs: 3, Start: now, End: h, Price: 1}, {Node: "n2", Procs: 4, Start: now, End: h, Price: 1},
			{Node: "n3", Procs: 2, Start: now, End: h, Price: 1}, {Node: "n3", Procs: 2, Start: free, End: h, Price: 1}}}
	if dearPrice > 0 {
		delta.Slots = append(delta.Slots, forecast.Slot{Node: "n3", Procs: 2, Start: now, End: free, Price: dearPrice})
	}
	beta := forecast.Forecast{Version: 1, Site: "beta", Seq: 1, Generated: now, Horizon: h,
		Nodes: []forecast.Node{node("b1"), node("b2")},
		Slots: []forecast.Slot{{Node: "b1", Procs: 4, Start: now, End: h, Price: 1}, {Node: "b2", Procs: 4, Start: now, End: h, Price: 1}}}
	return []forecast.Forecast{delta, beta}
}

// An 18-processor job with 17 free now is planned when delta frees a node;
// its why says what is short now (17 of 18, by site), what would let it
// start now, which of its sites gains processors by its start (delta, as
// n3's local job ends; not beta), and when it is planned — not only how
// the plan was chosen.
func TestExplainLaterSaysWhatIsShortNow(t *testing.T) {
	now := time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC).Unix()
	job := forecast.JobRequest{ID: "j18", Procs: 18, Walltime: 3600, MaxPrice: 2}
	for _, tc := range []struct {
		name string
		dear float64
		want []string
	}{
		{"busy cores not offered", 0, []string{"cannot start now: at max_price 2 only 17 of its 18 processors are free together now for its walltime of 1h (delta 9, beta 8)",
			"; by 06:00 UTC its processors free together at max_price 2 grow on delta from 9 to 11 (local jobs or reservations end there on the forecasts); planned at 06:00 UTC (in 2h) on delta "}},
		{"busy cores dearer", 3, []string{"only 17 of its 18", "max_price 3 would let it start now",
			"; by 06:00 UTC its processors free together at max_price 2 grow on delta from 9 to 11 (local"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fcs := laterSites(now, tc.dear)
			p := NewPlanner(PlannerOptions{})
			allocs, err := p.Plan(fcs, []forecast.JobRequest{job}, now)
			if err != nil || len(allocs) != 1 || !allocs[0].Placed() || allocs[0].Start != now+2*3600 {
				t.Fatalf("plan %+v %v, want the job placed when n3 frees, 2h from now", allocs, err)
			}
			why := p.ExplainLater(fcs, job, allocs[0], now)
			for _, w := range tc.want {
				if !strings.Contains(why, w) {
					t.Errorf("why %q\nwant it to contain %q", why, w)
				}
			}
			if strings.Contains(why, "beta from") {
				t.Errorf("why %q\nnames beta as gaining processors: it has 8 free throughout", why)
			}
			if got := p.ExplainLater(fcs, job, allocs[0], allocs[0].Start); got != "" {
				t.Errorf("why at its planned start %q, want none (it starts then)", got)
			}
		})
	}
}

// Only the plan's sites that gain processors by its start are named:
// delta gains two as n3's local job ends, beta has 8 throughout, and a
// plan on beta alone names none.
func TestFreedByNamesThePlansSitesThatGain(t *testing.T) {
	now := time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC).Unix()
	fcs := laterSites(now, 0)
	job := forecast.JobRequest{ID: "j18", Procs: 18, Walltime: 3600, MaxPrice: 2, Criterion: forecast.EarliestStart}
	opts := coalloc.Options{NotBefore: now}
	free := freeBySite(fcs, job, opts)
	part := func(site, node string) forecast.Part { return forecast.Part{Site: site, Node: node, Procs: 4} }
	for _, tc := range []struct {
		name  string
		parts []forecast.Part
		want  string
	}{
		{"both sites", []forecast.Part{part("delta", "n3"), part("beta", "b1")}, "delta from 9 to 11"},
		{"beta alone", []forecast.Part{part("beta", "b1")}, ""},
	} {
		a := forecast.Allocation{Job: job.ID, Start: now + 2*3600, End: now + 3*3600, Parts: tc.parts}
		if got := freedBy(fcs, job, a, opts, free); got != tc.want {
			t.Errorf("%s: %q, want %q (now %v)", tc.name, got, tc.want, free)
		}
	}
}

// A job planned later is reserved in the first cycle from its start less
// the commit lead (broker.Due); its why says when, or that it is due.
func TestReservedWhenSaysWhenTheLeadReachesTheStart(t *testing.T) {
	now := time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC).Unix()
	a := forecast.Allocation{Job: "j", Start: now + 2*3600, End: now + 3*3600,
		Parts: []forecast.Part{{Site: "delta", Node: "n1", Procs: 4}}}
	for _, tc := range []struct {
		lead time.Duration
		want string
	}{
		{10 * time.Minute, "it is reserved at 05:50 UTC, the commit lead (10m) before its start; until then the plan may move"},
		{25 * time.Minute, "it is reserved at 05:35 UTC, the commit lead (25m) before its start; until then the plan may move"},
		{2 * time.Hour, "its start is within the commit lead (2h): it is due to be reserved, and each cycle tries until its reservations hold"},
	} {
		if got := reservedWhen(a, now, tc.lead); got != tc.want {
			t.Errorf("lead %v: %q\nwant %q", tc.lead, got, tc.want)
		}
	}
}

// BenchmarkExplainLater is one why of a job that cannot start now
// (planned later) on synthetic's 10 sites × 100 nodes: part=all is the
// whole explainLater (what status JOB computes), part=grow only the
// search its sites' growth by the planned start added (freeBySite at the
// start, on the plan's sites), so all less grow is the why before it.
func BenchmarkExplainLater(b *testing.B) {
	fcs, _ := synthetic(10, 100, 0)
	now := fcs[0].Generated
	p := NewPlanner(benchPlanner)
	var job forecast.JobRequest
	var a forecast.Allocation
	for procs := 64; ; procs += 64 { // the smallest job the forecasts put later
		job = forecast.JobRequest{ID: "j", Procs: procs, Walltime: 4 * 3600, MaxPrice: 2, Criterion: forecast.EarliestStart}
		allocs, err := p.Plan(fcs, []forecast.JobRequest{job}, now)
		if err != nil || !allocs[0].Placed() {
			b.Fatalf("%d procs: %+v %v", procs, allocs, err)
		}
		if a = allocs[0]; a.Start > now {
			break
		}
	}
	if why := p.ExplainLater(fcs, job, a, now); !strings.Contains(why, " grow on ") {
		b.Fatalf("why %q: want what grows by the start", why)
	}
	free := freeBySite(fcs, job, coalloc.Options{NotBefore: now, Order: benchPlanner.Order})
	b.Logf("%d procs planned %s later on %d of %d sites", job.Procs, durfmt.Seconds(a.Start-now), len(a.Sites()), len(fcs))
	for _, part := range []struct {
		name string
		run  func()
	}{
		{"all", func() { p.ExplainLater(fcs, job, a, now) }},
		{"grow", func() { freedBy(fcs, job, a, p.opts, free) }},
	} {
		b.Run("part="+part.name, func(b *testing.B) {
			c0 := cputime.Used()
			for range b.N {
				part.run()
			}
			b.ReportMetric(float64(cputime.Used()-c0)/float64(b.N), "cpu-ns/op")
		})
	}
}
