package coalloc

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"lookahead/forecast"
)

func withCrit(j forecast.JobRequest, c string) forecast.JobRequest { j.Criterion = c; return j }

func submittedAt(j forecast.JobRequest, t int64) forecast.JobRequest { j.Submitted = t; return j }

// TestPriceCases: named cases of the economic model and of the least-held
// criterion, each with the allocation worked out by hand.
func TestPriceCases(t *testing.T) {
	twoSites := func(startA int64) []forecast.Forecast {
		return []forecast.Forecast{
			mkSite("a", []forecast.Node{nd("n1", 8, 1)}, sl("n1", 8, startA, 10000, 1)),
			mkSite("b", []forecast.Node{nd("m1", 4, 1)}, sl("m1", 4, 0, 10000, 1)),
			mkSite("c", []forecast.Node{nd("k1", 4, 1)}, sl("k1", 4, 0, 10000, 1)),
		}
	}
	msf := Options{MultiSiteFactor: 1.5, Tolerance: 0.5}
	// queued: site q's time is a local job's forecast time (price 2) from
	// 0; site f has free time (price 1) from freeAt.
	queued := func(freeAt int64) []forecast.Forecast {
		return []forecast.Forecast{
			mkSite("q", []forecast.Node{nd("n1", 4, 1)}, sl("n1", 4, 0, 10000, 2)),
			mkSite("f", []forecast.Node{nd("m1", 4, 1)}, sl("m1", 4, freeAt, 10000, 1)),
		}
	}
	tol := Options{Tolerance: 0.5, FreeTolerance: 0.5}
	// queuedThenFree: site q's time is a local job's forecast time (price
	// 2) from 0; site r's too until 50, then free (price 1).
	queuedThenFree := func() []forecast.Forecast {
		return []forecast.Forecast{
			mkSite("q", []forecast.Node{nd("n1", 4, 1)}, sl("n1", 4, 0, 10000, 2)),
			mkSite("r", []forecast.Node{nd("m1", 4, 1)}, sl("m1", 4, 0, 50, 2), sl("m1", 4, 50, 10000, 1)),
		}
	}
	withDeadline := func(j forecast.JobRequest, d int64) forecast.JobRequest {
		j.Deadline = d
		return j
	}
	// ownerPriced states the first forecast's free price (its owner's base)
	ownerPriced := func(fcs []forecast.Forecast, free float64) []forecast.Forecast {
		fcs[0].FreePrice = free
		return fcs
	}
	// live: the live check of 2026-11-29 in small: vm (its owner's base 1)
	// is held by a queued local job (its forecast time, price 2) until 300,
	// beta (base 1.5) is idle from now.
	live := func() []forecast.Forecast {
		vm := mkSite("vm", []forecast.Node{nd("n1", 8, 1)}, sl("n1", 8, 0, 300, 2), sl("n1", 8, 300, 10000, 1))
		beta := mkSite("beta", []forecast.Node{nd("m1", 8, 1)}, sl("m1", 8, 0, 10000, 1.5))
		vm.FreePrice, beta.FreePrice = 1, 1.5
		return []forecast.Forecast{vm, beta}
	}
	cases := []struct {
		name  string
		fcs   []forecast.Forecast
		job   forecast.JobRequest
		opts  Options
		start int64
		end   int64
		parts string
		cost  float64
	}{
		{
			name: "two prices: the cheaper of two equal sites, listed second",
			fcs: []forecast.Forecast{
				mkSite("dear", []forecast.Node{nd("n1", 4, 1)}, sl("n1", 4, 0, 1000, 2)),
				mkSite("cheap", []forecast.Node{nd("m1", 4, 1)}, sl("m1", 4, 0, 1000, 1)),
			},
			job: jb("j", 4, 100, 2), start: 0, end: 100, parts: "cheap/m1:4", cost: 4 * 100.0 / 3600,
		},
		{
			name: "two prices across sites: of the sets of two sites, the cheaper, not the two largest",
			fcs: []forecast.Forecast{
				mkSite("big", []forecast.Node{nd("n1", 6, 1)}, sl("n1", 6, 0, 1000, 3)),
				mkSite("mid", []forecast.Node{nd("m1", 5, 1)}, sl("m1", 5, 0, 1000, 4)),
				mkSite("low", []forecast.Node{nd("k1", 4, 1)}, sl("k1", 4, 0, 1000, 1)),
			},
			job: jb("j", 9, 100, 4), opts: msf, start: 0, end: 150, parts: "big/n1:5 low/k1:4",
			cost: (5*3 + 4*1) * 150.0 / 3600,
		},
		{
			name: "two prices, speeds that hold alike: earliest-finish takes the cheaper site though its nodes are slower",
			fcs: []forecast.Forecast{
				mkSite("fast", []forecast.Node{nd("n1", 4, 2)}, sl("n1", 4, 0, 1000, 3)),
				mkSite("slow", []forecast.Node{nd("m1", 4, 1.99)}, sl("m1", 4, 0, 1000, 1)),
			},
			// 99 s at speed 2 or 1.99 both hold 50 s (rounded up)
			job: withCrit(jb("j", 4, 99, 3), forecast.EarliestFinish), start: 0, end: 50, parts: "slow/m1:4",
			cost: 4 * 50.0 / 3600,
		},
		{
			name: "two prices, speeds that hold alike: earliest-start takes the cheaper node though it is slower",
			fcs: []forecast.Forecast{mkSite("a", []forecast.Node{nd("fast", 4, 2), nd("slow", 4, 1.99)},
				sl("fast", 4, 0, 1000, 3), sl("slow", 4, 0, 1000, 1))},
			job: withCrit(jb("j", 4, 99, 3), forecast.EarliestStart), start: 0, end: 50, parts: "a/slow:4",
			cost: 4 * 50.0 / 3600,
		},
		{
			name: "two prices on one site: parts take the cheaper node",
			fcs: []forecast.Forecast{mkSite("a", []forecast.Node{nd("n1", 4, 1), nd("n2", 4, 1)},
				sl("n1", 4, 0, 1000, 5), sl("n2", 4, 0, 1000, 1))},
			job: jb("j", 4, 100, 5), start: 0, end: 100, parts: "a/n2:4", cost: 4 * 100.0 / 3600,
		},
		{
			name: "two prices on one node: the cheaper level first",
			fcs: []forecast.Forecast{mkSite("a", []forecast.Node{nd("n1", 8, 1)},
				sl("n1", 4, 0, 1000, 3), sl("n1", 4, 0, 1000, 1))},
			job: jb("j", 6, 100, 3), start: 0, end: 100, parts: "a/n1:6", cost: (4*1 + 2*3) * 100.0 / 3600,
		},
		{
			name: "price over time: a hold across a price change pays each price for its time",
			fcs: []forecast.Forecast{mkSite("a", []forecast.Node{nd("n1", 4, 1)},
				sl("n1", 4, 0, 60, 1), sl("n1", 4, 60, 1000, 2))},
			job: jb("j", 4, 100, 2), start: 0, end: 100, parts: "a/n1:4", cost: 4 * (60*1 + 40*2) / 3600.0,
		},
		{
			name: "price over time: a lower max_price waits for the cheap hours",
			fcs: []forecast.Forecast{mkSite("a", []forecast.Node{nd("n1", 4, 1)},
				sl("n1", 4, 0, 500, 3), sl("n1", 4, 500, 1000, 1))},
			job: jb("j", 4, 100, 1), start: 500, end: 600, parts: "a/n1:4", cost: 4 * 100.0 / 3600,
		},
		{
			name: "price over time: paying more starts at once",
			fcs: []forecast.Forecast{mkSite("a", []forecast.Node{nd("n1", 4, 1)},
				sl("n1", 4, 0, 500, 3), sl("n1", 4, 500, 1000, 1))},
			job: jb("j", 4, 100, 3), start: 0, end: 100, parts: "a/n1:4", cost: 4 * 300.0 / 3600,
		},
		{
			name: "least-held: one site 10 s later rather than two at 1.5x",
			fcs:  twoSites(60), job: jb("j", 8, 100, 1), opts: msf,
			start: 60, end: 160, parts: "a/n1:8", cost: 8 * 100.0 / 3600,
		},
		{
			name: "least-held: beyond the tolerance, the earliest finish",
			fcs:  twoSites(120), job: jb("j", 8, 100, 1), opts: msf,
			start: 0, end: 150, parts: "b/m1:4 c/k1:4", cost: 8 * 150.0 / 3600,
		},
		{
			name: "earliest-finish spreads where least-held waits",
			fcs:  twoSites(60), job: withCrit(jb("j", 8, 100, 1), forecast.EarliestFinish), opts: msf,
			start: 0, end: 150, parts: "b/m1:4 c/k1:4", cost: 8 * 150.0 / 3600,
		},
		{
			name: "free-first: free time 40 s later rather than a local job's time now",
			fcs:  queued(40), job: withCrit(jb("j", 4, 100, 2), forecast.FreeFirst), opts: tol,
			start: 40, end: 140, parts: "f/m1:4", cost: 4 * 100.0 / 3600,
		},
		{
			name: "free-first: beyond the tolerance, a local job's time",
			fcs:  queued(60), job: withCrit(jb("j", 4, 100, 2), forecast.FreeFirst), opts: tol,
			start: 0, end: 100, parts: "q/n1:4", cost: 4 * 100.0 * 2 / 3600,
		},
		{
			name: "free-first: a dearer owner's idle time now rather than the cheapest owner's 40 s later",
			fcs:  ownerPriced(queued(40), 2), job: withCrit(jb("j", 4, 100, 2), forecast.FreeFirst), opts: tol,
			start: 0, end: 100, parts: "q/n1:4", cost: 4 * 100.0 * 2 / 3600,
		},
		{
			name: "free-first: an owner's idle time, not a cheaper owner's queued time",
			fcs: []forecast.Forecast{
				ownerPriced([]forecast.Forecast{mkSite("idle", []forecast.Node{nd("n1", 4, 1)}, sl("n1", 4, 30, 10000, 2))}, 2)[0],
				ownerPriced([]forecast.Forecast{mkSite("busy", []forecast.Node{nd("m1", 4, 1)}, sl("m1", 4, 0, 10000, 2))}, 1)[0],
			},
			job: withCrit(jb("j", 4, 100, 2), forecast.FreeFirst), opts: tol,
			start: 30, end: 130, parts: "idle/n1:4", cost: 4 * 100.0 * 2 / 3600,
		},
		{
			name: "cheapest: free time 40 s later, within the free window",
			fcs:  queued(40), job: withCrit(jb("j", 4, 100, 2), forecast.Cheapest), opts: tol,
			start: 40, end: 140, parts: "f/m1:4", cost: 4 * 100.0 / 3600,
		},
		{
			name: "cheapest: free time would miss the deadline, so a local job's time",
			fcs:  queued(40), job: withDeadline(withCrit(jb("j", 4, 100, 2), forecast.Cheapest), 120), opts: tol,
			start: 0, end: 100, parts: "q/n1:4", cost: 4 * 100.0 * 2 / 3600,
		},
		{
			name: "cheapest: a far deadline waits for free time past the free window",
			fcs:  queued(90), job: withDeadline(withCrit(jb("j", 4, 100, 2), forecast.Cheapest), 1000), opts: tol,
			start: 90, end: 190, parts: "f/m1:4", cost: 4 * 100.0 / 3600,
		},
		{
			name: "cheapest: the cheaper owner's idle time after a local job, within the deadline",
			fcs:  live(), job: withDeadline(withCrit(jb("j", 8, 600, 3), forecast.Cheapest), 3600), opts: tol,
			start: 300, end: 900, parts: "vm/n1:8", cost: 8 * 600.0 / 3600,
		},
		{
			name: "cheapest: the cheaper owner's idle time would miss the deadline, so the dearer owner's now",
			fcs:  live(), job: withDeadline(withCrit(jb("j", 8, 600, 3), forecast.Cheapest), 800), opts: tol,
			start: 0, end: 600, parts: "beta/m1:8", cost: 8 * 600.0 * 1.5 / 3600,
		},
		{
			// the cut below 2.5 finds the later start (on y, 1.9 throughout,
			// as x's price rises to 3 within the window); at that start x
			// costs less: 0.5 for 50 s, then 3
			name: "cheapest: a later start found under a lower price, then its cheapest processors at max_price",
			fcs: func() []forecast.Forecast {
				now := mkSite("now", []forecast.Node{nd("n", 1, 1)}, sl("n", 1, 0, 10000, 2.5))
				later := mkSite("later", []forecast.Node{nd("x", 1, 1), nd("y", 1, 1)},
					sl("x", 1, 100, 150, 0.5), sl("x", 1, 150, 10000, 3), sl("y", 1, 100, 10000, 1.9))
				now.FreePrice, later.FreePrice = 3, 3 // no free pass: every price is the owners' base
				return []forecast.Forecast{now, later}
			}(),
			job: withDeadline(withCrit(jb("j", 1, 100, 3), forecast.Cheapest), 1000), opts: tol,
			start: 100, end: 200, parts: "later/x:1", cost: (50*0.5 + 50*3) / 3600.0,
		},
		{
			name: "free-first: free time 40 s later is past a free wait of 30 s",
			fcs:  queued(40), job: withCrit(jb("j", 4, 100, 2), forecast.FreeFirst), opts: Options{Tolerance: 0.5, FreeTolerance: 2, FreeWait: 30},
			start: 0, end: 100, parts: "q/n1:4", cost: 4 * 100.0 * 2 / 3600,
		},
		{
			name: "free-first, window from submission: free time 40 s later, nothing waited of 50 s",
			fcs:  queued(1040), job: submittedAt(withCrit(jb("j", 4, 100, 2), forecast.FreeFirst), 1000),
			opts:  Options{Tolerance: 0.5, FreeTolerance: 0.5, FreeWindow: FreeWindowSinceSubmit, NotBefore: 1000},
			start: 1040, end: 1140, parts: "f/m1:4", cost: 4 * 100.0 / 3600,
		},
		{
			name: "free-first, window from submission: 20 s waited leave 30 s, free time 40 s later is past it",
			fcs:  queued(1040), job: submittedAt(withCrit(jb("j", 4, 100, 2), forecast.FreeFirst), 980),
			opts:  Options{Tolerance: 0.5, FreeTolerance: 0.5, FreeWindow: FreeWindowSinceSubmit, NotBefore: 1000},
			start: 1000, end: 1100, parts: "q/n1:4", cost: 4 * 100.0 * 2 / 3600,
		},
		{
			name: "free-first, window after each earliest finish: 20 s waited do not count",
			fcs:  queued(1040), job: submittedAt(withCrit(jb("j", 4, 100, 2), forecast.FreeFirst), 980),
			opts:  Options{Tolerance: 0.5, FreeTolerance: 0.5, NotBefore: 1000},
			start: 1040, end: 1140, parts: "f/m1:4", cost: 4 * 100.0 / 3600,
		},
		{
			name: "free-first, free time past its window: least-held finishes first, buying 50 s of the local job's time",
			fcs:  queuedThenFree(), job: withCrit(jb("j", 4, 100, 2), forecast.FreeFirst),
			opts:  Options{Tolerance: 0.5, FreeTolerance: 0.3, FreeFallback: FreeFallbackLeastHeld},
			start: 0, end: 100, parts: "r/m1:4", cost: 4 * (50*2 + 50*1.0) / 3600,
		},
		{
			name: "free-first, free time past its window: the cheapest within the tolerance, the free time 50 s later",
			fcs:  queuedThenFree(), job: withCrit(jb("j", 4, 100, 2), forecast.FreeFirst),
			opts:  Options{Tolerance: 0.5, FreeTolerance: 0.3, FreeFallback: FreeFallbackCheapest},
			start: 50, end: 150, parts: "r/m1:4", cost: 4 * 100.0 / 3600,
		},
		{
			name: "free-first: free time only until the deadline",
			fcs:  queued(40), job: withDeadline(withCrit(jb("j", 4, 100, 2), forecast.FreeFirst), 120), opts: tol,
			start: 0, end: 100, parts: "q/n1:4", cost: 4 * 100.0 * 2 / 3600,
		},
		{
			name: "least-held buys a local job's time to finish first",
			fcs:  queued(40), job: withCrit(jb("j", 4, 100, 2), forecast.LeastHeld), opts: tol,
			start: 0, end: 100, parts: "q/n1:4", cost: 4 * 100.0 * 2 / 3600,
		},
		{
			name: "free-first: free time on two sites rather than one site's queued time",
			fcs: []forecast.Forecast{
				mkSite("q", []forecast.Node{nd("n1", 8, 1)}, sl("n1", 8, 0, 10000, 2)),
				mkSite("f", []forecast.Node{nd("m1", 4, 1)}, sl("m1", 4, 0, 10000, 1)),
				mkSite("g", []forecast.Node{nd("k1", 4, 1)}, sl("k1", 4, 0, 10000, 1)),
			},
			job: withCrit(jb("j", 8, 100, 2), forecast.FreeFirst), opts: Options{MultiSiteFactor: 1.5, FreeTolerance: 0.5},
			start: 0, end: 150, parts: "f/m1:4 g/k1:4", cost: 8 * 150.0 / 3600,
		},
		{
			name: "least-held, spreading for free: one dear site rather than two sites' cheaper processors (fewer sites, then cost)",
			fcs: []forecast.Forecast{
				mkSite("one", []forecast.Node{nd("n1", 8, 1)}, sl("n1", 8, 0, 10000, 2)),
				mkSite("two", []forecast.Node{nd("m1", 4, 1)}, sl("m1", 4, 0, 10000, 1)),
				mkSite("three", []forecast.Node{nd("k1", 4, 1)}, sl("k1", 4, 0, 10000, 1)),
			},
			job: withCrit(jb("j", 8, 100, 2), forecast.LeastHeld), opts: tol, start: 0, end: 100, parts: "one/n1:8", cost: 8 * 100.0 * 2 / 3600,
		},
		{
			name: "least-held: the fast node later rather than the slow one now",
			fcs: []forecast.Forecast{mkSite("a", []forecast.Node{nd("slow", 4, 1), nd("fast", 4, 2)},
				sl("slow", 4, 0, 10000, 1), sl("fast", 4, 40, 10000, 1))},
			job: jb("j", 4, 200, 1), opts: Options{Tolerance: 0.5}, start: 40, end: 140, parts: "a/fast:4", cost: 4 * 100.0 / 3600,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewPool(c.fcs, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			a := p.Place(c.job)
			if a.Start != c.start || a.End != c.end || partsOf(a) != c.parts || !costEqual(a.Cost, c.cost) {
				t.Fatalf("got [%d,%d) %s cost %v (%s)\nwant [%d,%d) %s cost %v", a.Start, a.End, partsOf(a), a.Cost, a.Why,
					c.start, c.end, c.parts, c.cost)
			}
		})
	}
}

func partsOf(a forecast.Allocation) string {
	s := ""
	for i, p := range a.Parts {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%s/%s:%d", p.Site, p.Node, p.Procs)
	}
	return s
}

// TestHigherPriceNeverLater: for one job planned alone, raising its max
// price only adds slots, so the earliest completion available never gets
// later (earliest-finish), nor the earliest start (earliest-start), and a
// least-held allocation always finishes within the tolerance of the
// earliest completion at the lower price.
func TestHigherPriceNeverLater(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	checked := 0
	for inst := range 1500 {
		fcs, opts := randInstance(r)
		job := randJob(r, 0)
		var prevStart, prevEnd int64
		prevOK := false
		for _, price := range []float64{1, 1.5, 2, 3} {
			job.MaxPrice = price
			got := map[string]forecast.Allocation{}
			for _, c := range []string{forecast.EarliestStart, forecast.EarliestFinish, forecast.LeastHeld} {
				p, err := NewPool(fcs, opts)
				if err != nil {
					t.Fatal(err)
				}
				got[c] = p.Place(withCrit(job, c))
			}
			es, ef, lh := got[forecast.EarliestStart], got[forecast.EarliestFinish], got[forecast.LeastHeld]
			if ef.Placed() != lh.Placed() || ef.Placed() != es.Placed() {
				t.Fatalf("instance %d price %v: criteria disagree on fitting: %+v %+v %+v", inst, price, es, ef, lh)
			}
			if !ef.Placed() {
				if prevOK {
					t.Fatalf("instance %d: fits at a lower price, not at %v", inst, price)
				}
				continue
			}
			slack := int64(opts.Tolerance * float64(job.Walltime))
			if prevOK && (es.Start > prevStart || ef.End > prevEnd || lh.End > prevEnd+slack) {
				t.Fatalf("instance %d price %v: start %d end %d least-held end %d, at the lower price start %d end %d (slack %d)",
					inst, price, es.Start, ef.End, lh.End, prevStart, prevEnd, slack)
			}
			prevStart, prevEnd, prevOK = es.Start, ef.End, true
			checked++
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d placed checks", checked)
	}
}
