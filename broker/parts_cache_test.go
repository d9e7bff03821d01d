package broker

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"lookahead/forecast"
)

// cacheWorld is a grid as the broker's cycles see it: sites whose
// forecasts come, change and go, and a queue whose jobs with a script
// come and go.
type cacheWorld struct {
	rng      *rand.Rand
	sites    map[string]*forecast.Forecast // a new value for each forecast taken
	version  map[string]int                // counts each site's forecasts taken
	jobs     []forecast.JobRequest
	scripted map[string]bool
	nextJob  int
}

// nodes is a new node list of 0-4 nodes, some with features of their own
// (partsFeature among them: a site's own feature of that name).
func (w *cacheWorld) nodes(site string) []forecast.Node {
	out := make([]forecast.Node, w.rng.IntN(5))
	feats := [][]string{nil, {"x86"}, {"gpu", "x86"}, {partsFeature}}
	for i := range out {
		out[i] = forecast.Node{Name: fmt.Sprintf("%s-n%d", site, i), Procs: 1 + w.rng.IntN(16), Speed: 1,
			Features: slices.Clone(feats[w.rng.IntN(len(feats))])}
	}
	return out
}

func (w *cacheWorld) runsParts() *bool {
	switch w.rng.IntN(3) {
	case 0:
		return nil
	case 1:
		return yesNo(true)
	}
	return yesNo(false)
}

// take replaces a site's forecast with f, as the daemon takes one.
func (w *cacheWorld) take(f forecast.Forecast) {
	w.sites[f.Site] = &f
	w.version[f.Site]++
}

// step changes the world one way and says which.
func (w *cacheWorld) step() string {
	names := make([]string, 0, len(w.sites))
	for name := range w.sites {
		names = append(names, name)
	}
	slices.Sort(names)
	op := []string{"same", "revision", "restart", "decoded-again", "parts-flag", "leave", "join",
		"script-in", "script-out", "plain-in"}[w.rng.IntN(10)]
	if len(names) == 0 && op != "script-in" && op != "script-out" && op != "plain-in" {
		op = "join"
	}
	var cur forecast.Forecast
	if len(names) > 0 {
		cur = *w.sites[names[w.rng.IntN(len(names))]]
	}
	switch op {
	case "revision": // a new revision, with another node list or the same nodes decoded again
		cur.Seq++
		cur.Generated += 60
		cur.Nodes = w.nodes(cur.Site)
		w.take(cur)
	case "restart": // a restarted agent numbers its revisions afresh
		cur.Seq = 1
		cur.Generated += 30
		cur.Nodes, cur.RunsParts = w.nodes(cur.Site), w.runsParts()
		w.take(cur)
	case "decoded-again": // same site, seq, generation and horizon; another list
		cur.Nodes = w.nodes(cur.Site)
		w.take(cur)
	case "parts-flag": // the same node list, the agent's dispatch turned on or off
		cur.RunsParts = w.runsParts()
		w.take(cur)
	case "leave":
		delete(w.sites, cur.Site)
	case "join": // a new site, or one that left coming back
		name := fmt.Sprintf("s%d", w.rng.IntN(6))
		w.take(forecast.Forecast{Site: name, Seq: 1, Generated: 1000, Horizon: 90000,
			Nodes: w.nodes(name), RunsParts: w.runsParts()})
	case "script-in", "plain-in":
		j := forecast.JobRequest{ID: fmt.Sprintf("g%d", w.nextJob), Procs: 1, Features: [][]string{nil, {"x86"}}[w.rng.IntN(2)]}
		w.nextJob++
		w.jobs = append(w.jobs, j)
		if op == "script-in" {
			w.scripted[j.ID] = true
		}
	case "script-out": // a job with a script leaves the queue (placed, cancelled)
		for i, j := range w.jobs {
			if w.scripted[j.ID] {
				w.jobs = slices.Delete(w.jobs, i, i+1)
				delete(w.scripted, j.ID)
				break
			}
		}
	}
	return op
}

// forecasts lists the sites' forecasts, in a shuffled order.
func (w *cacheWorld) forecasts() []forecast.Forecast {
	var out []forecast.Forecast
	for _, f := range w.sites {
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b forecast.Forecast) int { return cmp.Compare(a.Site, b.Site) })
	w.rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// The cache answers what ForParts does, cycle after cycle, over random
// sequences of forecasts: new revisions, restarted agents, a forecast
// decoded again under the same revision with another node list, dispatch
// turned on or off, sites leaving and coming back, jobs with a script
// appearing and leaving. A site whose forecast did not change since the
// last cycle that marked lists gets the same list back (the cache is
// used, and the planner may know the list as the same one).
func TestPartsCacheAnswersAsForParts(t *testing.T) {
	marked := map[string]int{} // steps followed by a cycle that marked lists, by kind
	for seed := range uint64(20) {
		w := &cacheWorld{rng: rand.New(rand.NewPCG(seed, 3)), sites: map[string]*forecast.Forecast{},
			version: map[string]int{}, scripted: map[string]bool{}}
		var c PartsCache
		last := map[string]int{}             // each site's version at the last marking cycle
		lists := map[string]*forecast.Node{} // and its list then
		for i := range 120 {
			op := w.step()
			fcs := w.forecasts()
			jobs := slices.Clone(w.jobs)
			gotF, gotJ, gotOff := c.ForParts(fcs, jobs, w.scripted)
			wantF, wantJ, wantOff := ForParts(fcs, jobs, w.scripted)
			if !reflect.DeepEqual(gotF, wantF) || !reflect.DeepEqual(gotJ, wantJ) || !reflect.DeepEqual(gotOff, wantOff) {
				t.Fatalf("seed %d step %d (%s): cached\n%+v\n%+v %v\nForParts\n%+v\n%+v %v", seed, i, op,
					gotF, gotJ, gotOff, wantF, wantJ, wantOff)
			}
			if len(gotOff) == 0 || !slices.ContainsFunc(jobs, func(j forecast.JobRequest) bool { return w.scripted[j.ID] }) {
				continue // nothing marked: the input comes back as it is
			}
			marked[op]++
			now, nowLists := map[string]int{}, map[string]*forecast.Node{}
			for _, f := range gotF {
				now[f.Site] = w.version[f.Site]
				if len(f.Nodes) > 0 {
					nowLists[f.Site] = &f.Nodes[0]
				}
				if v, ok := last[f.Site]; ok && v == now[f.Site] && nowLists[f.Site] != lists[f.Site] {
					t.Fatalf("seed %d step %d (%s): site %s's forecast did not change, its list was marked again", seed, i, op, f.Site)
				}
			}
			last, lists = now, nowLists
		}
	}
	for _, op := range []string{"same", "revision", "restart", "decoded-again", "parts-flag", "leave", "join", "script-in", "script-out"} {
		if marked[op] == 0 {
			t.Errorf("no %s step was followed by a marking cycle: the sequences do not cover it", op)
		}
	}
}

// A forecast decoded again under the same site, revision, generation and
// horizon (a restarted agent's, a site forgotten and back) with another
// node list, or the same list whose agent turned dispatch on, must not be
// planned on the list of the forecast before.
func TestPartsCacheServesNoStaleList(t *testing.T) {
	alpha := partsSite("alpha", 8, 1, yesNo(false))
	beta := partsSite("beta", 8, 2, yesNo(true))
	jobs := []forecast.JobRequest{req("g1", 8, 3600, 5)}
	scripted := map[string]bool{"g1": true}
	var c PartsCache
	check := func(step string, fcs ...forecast.Forecast) {
		t.Helper()
		got, _, _ := c.ForParts(fcs, jobs, scripted)
		want, _, _ := ForParts(fcs, jobs, scripted)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: planned on\n%+v\nnot\n%+v", step, got, want)
		}
	}
	check("first", alpha, beta)
	check("again", alpha, beta)
	again := beta
	again.Nodes = []forecast.Node{{Name: "beta1", Procs: 16, Speed: 1, MemMB: 1000}, {Name: "beta2", Procs: 8, Speed: 2}}
	check("beta decoded again, same seq and generation, other nodes", alpha, again)
	check("beta's first list again", alpha, beta)
	on := alpha
	on.RunsParts = yesNo(true)
	gamma := partsSite("gamma", 4, 1, yesNo(false)) // some site must stay off for lists to be marked
	check("alpha's dispatch on, same list and seq", on, beta, gamma)
	check("alpha's dispatch off again", alpha, beta, gamma)
	check("beta gone", alpha, gamma)
	if _, kept := c.sites["beta"]; kept {
		t.Fatal("a site gone stays in the cache")
	}
}
