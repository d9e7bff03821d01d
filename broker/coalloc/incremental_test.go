package coalloc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"testing"

	"lookahead/broker"
	"lookahead/forecast"
)

// criteria lists every criterion the forecast package defines
// (forecast.Criteria) plus "" (the default), so a criterion added there is
// tested here without an edit.
func criteria(t testing.TB) []string {
	t.Helper()
	out := append([]string{""}, forecast.Criteria()...)
	if len(out) < 3 {
		t.Fatalf("found criteria %q: expected the default and at least two", out)
	}
	return out
}

// world is the input of one random sequence of cycles.
type world struct {
	r      *rand.Rand
	fcs    []forecast.Forecast
	jobs   []forecast.JobRequest
	now    int64
	next   int
	crit   []string
	last   []forecast.Allocation
	opts   Options
	counts map[string]int
	away   []forecast.Forecast // sites that left (stale, say)
}

// siteComesOrGoes takes a site out of planning or brings one back, at any
// place in the list.
func (w *world) siteComesOrGoes() {
	if len(w.away) > 0 && (len(w.fcs) == 1 || w.r.IntN(2) == 0) {
		w.counts["site back"]++
		f := w.away[0]
		w.away = w.away[1:]
		w.fcs = slices.Insert(slices.Clone(w.fcs), w.r.IntN(len(w.fcs)+1), f)
		return
	}
	if len(w.fcs) > 1 {
		w.counts["site gone"]++
		i := w.r.IntN(len(w.fcs))
		w.away = append(w.away, w.fcs[i])
		w.fcs = slices.Delete(slices.Clone(w.fcs), i, i+1)
	}
}

// step changes the world by one random event, as a broker sees them
// between cycles.
func (w *world) step() {
	switch k := w.r.IntN(10); {
	case k < 2:
		w.revise()
	case k < 5:
		for range 1 + w.r.IntN(3) {
			w.arrive()
		}
	case k < 6 && len(w.jobs) > 0:
		w.counts["cancel"]++
		i := w.r.IntN(len(w.jobs))
		w.jobs = slices.Delete(w.jobs, i, i+1)
	case k < 8:
		w.commit()
	case k < 9 && w.r.IntN(2) == 0:
		w.siteComesOrGoes()
	default:
		w.counts["time"]++
		w.now += int64(w.r.IntN(12))
	}
	if w.r.IntN(3) == 0 {
		w.now += int64(w.r.IntN(6)) // time passes between most cycles
	}
}

func (w *world) arrive() {
	w.counts["arrive"]++
	j := randJob(w.r, w.next)
	w.next++
	j.Criterion = w.crit[w.r.IntN(len(w.crit))]
	if w.opts.FreeWindow == FreeWindowSinceSubmit { // submitted a little before now: the wait spent counts
		j.Submitted = max(1, w.now-int64(w.next%7)*10)
	}
	w.jobs = append(w.jobs, j)
}

// revise replaces one node's slots on one site (a new forecast revision);
// rarely the site's nodes change too.
func (w *world) revise() {
	w.counts["revise"]++
	f := &w.fcs[w.r.IntN(len(w.fcs))]
	f.Seq++
	n := f.Nodes[w.r.IntN(len(f.Nodes))]
	slots := slices.DeleteFunc(slices.Clone(f.Slots), func(s forecast.Slot) bool { return s.Node == n.Name })
	for range w.r.IntN(4) {
		st := int64(10 * w.r.IntN(8))
		slots = append(slots, forecast.Slot{Node: n.Name, Procs: 1 + w.r.IntN(n.Procs),
			Start: st, End: st + int64(10*(1+w.r.IntN(5))), Price: float64(1 + w.r.IntN(3))})
	}
	f.Slots = slots
	if w.r.IntN(15) == 0 {
		w.counts["nodes"]++
		f.Nodes = slices.Clone(f.Nodes)
		f.Nodes[0].MemMB += 100
	}
}

// commit takes a placed job out of the queue and its allocation out of
// the forecasts, as the broker's holds do.
func (w *world) commit() {
	for i, a := range w.last {
		if !a.Placed() || i >= len(w.jobs) || w.jobs[i].ID != a.Job {
			continue
		}
		w.counts["commit"]++
		h := broker.Hold{Alloc: a, Revisions: map[string]uint64{}}
		for _, f := range w.fcs {
			h.Revisions[f.Site] = f.Seq
		}
		w.fcs = broker.ApplyHolds(w.fcs, []broker.Hold{h}, w.now)
		w.jobs = slices.Delete(w.jobs, i, i+1)
		return
	}
}

// TestIncrementalSameAnswers runs random sequences of cycles (forecast
// revisions, arrivals, cancels, commits, time passing) for every
// criterion and checks that every cycle the incremental planner answers
// exactly as planning from scratch does, and that it did reuse answers.
// The one exception allowed is a rounding tie (see roundingTie), at most
// once in a thousand cycles; it is counted and logged.
func TestIncrementalSameAnswers(t *testing.T) {
	crit := criteria(t)
	for ci, c := range crit {
		t.Run(fmt.Sprintf("criterion=%q", c), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(ci)+11, 5))
			var total Stats
			counts := map[string]int{}
			ties, maxDiff, cycles := 0, 0.0, 0
			var dbgNow int64
			var dbgFcs []forecast.Forecast
			var dbgJobs []forecast.JobRequest
			var dbgGot []forecast.Allocation
			for seq := range sequences() {
				fcs, opts := randInstance(r)
				if r.IntN(3) == 0 { // more sites: allocations over several of them
					more, _ := randInstance(r)
					for i := range more {
						more[i].Site = fmt.Sprintf("x%d", i)
					}
					fcs = append(fcs, more...)
				}
				if r.IntN(4) == 0 {
					opts.Tiers = []float64{1.7} // coarse tiers: no floors
				}
				if seq%2 == 1 { // free windows that shrink with time
					opts.FreeWindow = FreeWindowSinceSubmit
				}
				in, err := NewIncremental(opts)
				if err != nil {
					t.Fatal(err)
				}
				// mostly this criterion, sometimes any other
				mix := []string{c, c, c, crit[r.IntN(len(crit))]}
				w := &world{r: r, fcs: fcs, now: opts.NotBefore, crit: mix, opts: opts, counts: counts}
				for range 1 + r.IntN(6) {
					w.arrive()
				}
				for cycle := range 12 {
					opts.NotBefore = w.now
					want, err := PlanEach(w.fcs, w.jobs, opts)
					if err != nil {
						t.Fatal(err)
					}
					got, st, err := in.Plan(w.fcs, w.jobs, w.now)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) {
						d, ok := roundingTie(got, want, w.jobs)
						if !ok {
							t.Logf("DEBUG prev now %d fcs %+v\nprev jobs %+v\nprev got %+v\nnow %d events %v", dbgNow, dbgFcs, dbgJobs, dbgGot, w.now, counts)
							t.Fatalf("sequence %d cycle %d (%+v): incremental\n%+v\nfrom scratch\n%+v\njobs %+v\nforecasts %+v",
								seq, cycle, st, got, want, w.jobs, w.fcs)
						}
						// a kept answer and the from-scratch one cost the same but
						// for rounding: count it and start the planner afresh
						ties++
						maxDiff = max(maxDiff, d)
						in, _ = NewIncremental(opts)
					}
					dbgNow, dbgFcs, dbgJobs, dbgGot = w.now, slices.Clone(w.fcs), slices.Clone(w.jobs), got
					cycles++
					addStats(&total, st)
					w.last = want
					w.step()
				}
			}
			t.Logf("events %v; %+v; %d of %d cycles differed by a rounding tie (largest relative cost difference %.2g)",
				counts, total, ties, cycles, maxDiff)
			if ties*1000 > cycles {
				t.Fatalf("rounding ties in %d of %d cycles: more than one in a thousand", ties, cycles)
			}
			if total.Reused < total.Jobs/3 || total.Changed == 0 || total.Time == 0 || total.Skipped == 0 || total.Unreached == 0 {
				t.Fatalf("the sequences did not exercise the cache: %+v", total)
			}
		})
	}
}

// roundingTie reports whether the first job (in priority order) whose
// answers differ got the same start, end and answer kind with costs equal
// but for floating-point rounding (relative difference under 1e-9), and
// that relative difference: two choices that cost the same, where the
// rounding of sums over differently cut pieces picked the other one. The
// jobs after it plan on what it took, so they are not compared.
func roundingTie(got, want []forecast.Allocation, jobs []forecast.JobRequest) (float64, bool) {
	order := slices.Clone(jobs)
	Options{}.SortQueue(order)
	for _, j := range order {
		i := slices.IndexFunc(jobs, func(x forecast.JobRequest) bool { return x.ID == j.ID })
		a, b := got[i], want[i]
		if reflect.DeepEqual(a, b) {
			continue
		}
		d := math.Abs(a.Cost-b.Cost) / max(math.Abs(b.Cost), 1e-300)
		return d, a.Start == b.Start && a.End == b.End && a.Error == b.Error && a.Placed() && d < 1e-9
	}
	return 0, false
}

// sequences is how many random sequences per criterion: 300, or 3000
// with LOOKAHEAD_LONG=1 (about 10 s more).
func sequences() int {
	if os.Getenv("LOOKAHEAD_LONG") != "" {
		return 3000
	}
	return 300
}

func addStats(t *Stats, s Stats) {
	t.Jobs += s.Jobs
	t.Reused += s.Reused
	t.New += s.New
	t.Time += s.Time
	t.Changed += s.Changed
	t.Full += s.Full
	t.Skipped += s.Skipped
	t.Differ += s.Differ
	t.Unreached += s.Unreached
}

// TestSameJobComparesEveryField: sameJob must look at every field of a
// job request (a field added to forecast.JobRequest must be added there).
func TestSameJobComparesEveryField(t *testing.T) {
	base := forecast.JobRequest{ID: "a", Procs: 1, Walltime: 1, MaxPrice: 1, MinSpeed: 1, MemMB: 1,
		Features: []string{"x"}, Criterion: "c", MaxSites: 1, User: "u", Account: "a", Submitted: 1}
	v := reflect.ValueOf(&base).Elem()
	for i := range v.NumField() {
		changed := base
		changed.Features = slices.Clone(base.Features)
		f := reflect.ValueOf(&changed).Elem().Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(f.String() + "!")
		case reflect.Int, reflect.Int64:
			f.SetInt(f.Int() + 1)
		case reflect.Float64:
			f.SetFloat(f.Float() + 1)
		case reflect.Slice:
			f.Set(reflect.ValueOf([]string{"y"}))
		default:
			t.Fatalf("field %s: kind %s not handled", v.Type().Field(i).Name, f.Kind())
		}
		if sameJob(base, changed) {
			t.Errorf("sameJob ignores field %s", v.Type().Field(i).Name)
		}
	}
}

// TestIncrementalSitesRankedByCapacity: an allocation over several sites
// takes the largest sites first, so a node it does not use on a site it
// uses can change the answer by losing processors (site b falls behind
// site c). The cached answer must not be kept.
func TestIncrementalSitesRankedByCapacity(t *testing.T) {
	site := func(name string, procs ...int) forecast.Forecast {
		f := forecast.Forecast{Version: 1, Site: name, Horizon: 1000}
		for i, p := range procs {
			n := fmt.Sprintf("%s%d", name, i)
			f.Nodes = append(f.Nodes, forecast.Node{Name: n, Procs: p, Speed: 1, MemMB: 1000})
			f.Slots = append(f.Slots, forecast.Slot{Node: n, Procs: p, Start: 0, End: 1000, Price: 1})
		}
		return f
	}
	fcs := []forecast.Forecast{site("a", 8), site("b", 4, 3), site("c", 6)}
	jobs := []forecast.JobRequest{{ID: "j", Procs: 12, Walltime: 100, MaxPrice: 1}}
	in, err := NewIncremental(Options{})
	if err != nil {
		t.Fatal(err)
	}
	first, _, err := in.Plan(fcs, jobs, 0)
	if err != nil {
		t.Fatal(err)
	}
	next := slices.Clone(fcs)
	next[1].Slots = next[1].Slots[:1] // b1 (unused by the answer) loses its slot
	got, st, err := in.Plan(next, jobs, 0)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := PlanEach(next, jobs, Options{})
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after b1 lost its slot (%+v): incremental %+v, from scratch %+v (first %+v)", st, got, want, first)
	}
	if reflect.DeepEqual(first, want) {
		t.Fatalf("the case does not change the answer: %+v", want)
	}
}

// TestIncrementalLeastHeldKeepsWhatAChangeCannotReach: a least-held job
// whose slots lost processors before the windows its searches judged
// starts on keeps its answer without a new search; one that lost inside a
// window is planned again. Both answers are the from-scratch ones.
func TestIncrementalLeastHeldKeepsWhatAChangeCannotReach(t *testing.T) {
	const h = 3600
	// f (speed 1) is free from 3 h; s (speed 0.5) for the first hour and
	// from 5 h. An 8-processor 2 h job: the fast tier starts at 3 h on f
	// over [3 h, 5 h), the slow one at 3 h on f over [3 h, 7 h).
	fc := func(sFirstEnd, fStart int64) []forecast.Forecast {
		return []forecast.Forecast{{Version: 1, Site: "a", Horizon: 20 * h,
			Nodes: []forecast.Node{{Name: "f", Procs: 8, Speed: 1, MemMB: 1000}, {Name: "s", Procs: 8, Speed: 0.5, MemMB: 1000}},
			Slots: []forecast.Slot{{Node: "f", Procs: 8, Start: fStart, End: 20 * h, Price: 1},
				{Node: "s", Procs: 8, Start: 0, End: sFirstEnd, Price: 1},
				{Node: "s", Procs: 8, Start: 5 * h, End: 20 * h, Price: 1}}}}
	}
	jobs := []forecast.JobRequest{{ID: "j", Procs: 8, Walltime: 2 * h, MaxPrice: 1, Criterion: forecast.LeastHeld}}
	in, err := NewIncremental(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := in.Plan(fc(h, 3*h), jobs, 0); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		fcs       []forecast.Forecast
		unreached int
	}{
		{"s loses half an hour before every window", fc(h/2, 3*h), 1},
		{"f loses the first half hour of both windows", fc(h/2, 3*h+h/2), 0},
	} {
		got, st, err := in.Plan(c.fcs, jobs, 0)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := PlanEach(c.fcs, jobs, Options{})
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s (%+v): incremental %+v, from scratch %+v", c.name, st, got, want)
		}
		if st.Unreached != c.unreached || st.Changed != 1-c.unreached {
			t.Fatalf("%s: %+v, want %d kept as unreached", c.name, st, c.unreached)
		}
	}
}

// TestIncrementalFreePriceChange: a free-first answer rests on the lowest
// price anywhere in the forecasts, also beyond what its searches read. A
// cheaper slot far in the future makes free time scarcer, and the job is
// planned again (the answer of planning from scratch), not kept; a
// least-held job elsewhere keeps its answer (no full re-plan).
func TestIncrementalFreePriceChange(t *testing.T) {
	// q's n1 is a local job's forecast time (price 2) from 0; f's m1 is
	// free (price 1) from 40; q's n2 has one slot at 5,000.
	fc := func(farPrice float64) []forecast.Forecast {
		return []forecast.Forecast{
			mkSite("q", []forecast.Node{nd("n1", 4, 1), nd("n2", 1, 1)},
				sl("n1", 4, 0, 10000, 2), sl("n2", 1, 5000, 6000, farPrice)),
			mkSite("f", []forecast.Node{nd("m1", 4, 1)}, sl("m1", 4, 40, 10000, 1)),
			mkSite("z", []forecast.Node{nd("k1", 2, 1, "ib")}, sl("k1", 2, 0, 10000, 1)),
		}
	}
	k := withCrit(jb("k", 2, 100, 1), forecast.LeastHeld)
	k.Features = []string{"ib"} // only z's node: the far slot is none of its business
	jobs := []forecast.JobRequest{withCrit(jb("j", 4, 100, 2), forecast.FreeFirst), k}
	opts := Options{Tolerance: 0.5, FreeTolerance: 0.5}
	in, err := NewIncremental(opts)
	if err != nil {
		t.Fatal(err)
	}
	first, _, err := in.Plan(fc(3), jobs, 0)
	if err != nil {
		t.Fatal(err)
	}
	if partsOf(first[0]) != "f/m1:4" || partsOf(first[1]) != "z/k1:2" {
		t.Fatalf("first cycle: %+v, want free time on f", first[0])
	}
	got, st, err := in.Plan(fc(0.5), jobs, 0)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := PlanEach(fc(0.5), jobs, opts)
	if !reflect.DeepEqual(got, want) || reflect.DeepEqual(got, first) {
		t.Fatalf("%+v: incremental %+v, from scratch %+v (first cycle %+v)", st, got, want, first)
	}
	if st.FullWhy != "" || st.Changed != 1 || st.Reused != 1 {
		t.Fatalf("stats %+v: want the free-first job planned again and the least-held one kept", st)
	}
}

// An owner that states a new free price changes what is free time at its
// site: free-first answers are planned again though no slot within their
// reach changed (here q's queued-time price 2 becomes its owner's free
// price, so its time now is free), and the answers are those from scratch.
func TestIncrementalOwnerFreePriceChange(t *testing.T) {
	fc := func(qFree float64) []forecast.Forecast {
		fcs := []forecast.Forecast{
			mkSite("q", []forecast.Node{nd("n1", 4, 1)}, sl("n1", 4, 0, 10000, 2)),
			mkSite("f", []forecast.Node{nd("m1", 4, 1)}, sl("m1", 4, 40, 10000, 1)),
		}
		fcs[0].FreePrice, fcs[1].FreePrice = qFree, 1
		return fcs
	}
	jobs := []forecast.JobRequest{withCrit(jb("j", 4, 100, 2), forecast.FreeFirst)}
	opts := Options{Tolerance: 0.5, FreeTolerance: 0.5}
	in, err := NewIncremental(opts)
	if err != nil {
		t.Fatal(err)
	}
	first, _, err := in.Plan(fc(1), jobs, 0)
	if err != nil {
		t.Fatal(err)
	}
	if partsOf(first[0]) != "f/m1:4" {
		t.Fatalf("first cycle: %+v, want f's free time (q's is queued time)", first[0])
	}
	got, st, err := in.Plan(fc(2), jobs, 0)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := PlanEach(fc(2), jobs, opts)
	if !reflect.DeepEqual(got, want) || partsOf(got[0]) != "q/n1:4" {
		t.Fatalf("%+v: incremental %+v, from scratch %+v, want q's idle time now", st, got, want)
	}
}

// With the free window since submission a free-time answer expires while
// nothing else changes: q's processors are a local job's forecast time
// from 1100, f's free from 1140; a 100 s job submitted at 1000 with a
// free window of 50 s takes f (40 s after the earliest finish). At 1050
// no start was lost (the earliest is 1100) and no slot changed, but the
// 50 s waited leave no window: the job is planned again (for time) and
// buys q's time, as from scratch.
func TestIncrementalFreeWindowExpires(t *testing.T) {
	fcs := []forecast.Forecast{
		mkSite("q", []forecast.Node{nd("n1", 4, 1)}, sl("n1", 4, 1100, 10000, 2)),
		mkSite("f", []forecast.Node{nd("m1", 4, 1)}, sl("m1", 4, 1140, 10000, 1)),
	}
	fcs[0].FreePrice, fcs[1].FreePrice = 1, 1
	jobs := []forecast.JobRequest{submittedAt(withCrit(jb("j", 4, 100, 2), forecast.FreeFirst), 1000)}
	opts := Options{Tolerance: 0.5, FreeTolerance: 0.5, FreeWindow: FreeWindowSinceSubmit}
	in, err := NewIncremental(opts)
	if err != nil {
		t.Fatal(err)
	}
	first, _, err := in.Plan(fcs, jobs, 1000)
	if err != nil || partsOf(first[0]) != "f/m1:4" {
		t.Fatalf("at 1000: %+v (%v), want free time on f", first, err)
	}
	got, st, err := in.Plan(fcs, jobs, 1050)
	if err != nil {
		t.Fatal(err)
	}
	opts.NotBefore = 1050
	want, _ := PlanEach(fcs, jobs, opts)
	if !reflect.DeepEqual(got, want) || partsOf(got[0]) != "q/n1:4" {
		t.Fatalf("at 1050 (%+v): incremental %+v, from scratch %+v, want q's time", st, got, want)
	}
	if st.Time != 1 {
		t.Fatalf("stats %+v: want the job planned again for time", st)
	}
}
