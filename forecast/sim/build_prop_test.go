package sim

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"lookahead/forecast"
	"lookahead/internal/cputime"
)

// randomSnapshot makes a busy cluster: nodes of 1–8 processors (some down),
// running jobs packed onto them, queued jobs, grid reservations.
func randomSnapshot(r *rand.Rand, nodes, queued int, now int64) forecast.Snapshot {
	s := forecast.Snapshot{Site: "rnd", Taken: now}
	free := make([]int, nodes)
	for i := range nodes {
		st := []string{forecast.NodeFree}
		if r.IntN(20) == 0 {
			st = []string{forecast.NodeDown}
		}
		procs := []int{1, 2, 4, 8}[r.IntN(4)]
		s.Nodes = append(s.Nodes, forecast.SnapshotNode{Name: fmt.Sprintf("c%04d", i), Procs: procs, State: st, Speed: 1})
		free[i] = procs
	}
	queues := []string{"low", "batch", "urgent"}
	for k := 0; k < nodes; k++ { // running jobs
		i := r.IntN(nodes)
		if free[i] == 0 || !s.Nodes[i].Usable() {
			continue
		}
		p := 1 + r.IntN(free[i])
		free[i] -= p
		s.Jobs = append(s.Jobs, forecast.LocalJob{ID: fmt.Sprintf("r%d", k), State: forecast.JobRunning, Procs: p,
			Walltime: int64(600 + r.IntN(86400)), Started: now - int64(r.IntN(3600)), Queue: queues[r.IntN(3)],
			Hosts: []forecast.HostProcs{{Node: s.Nodes[i].Name, Procs: p}}})
	}
	for k := range queued {
		s.Jobs = append(s.Jobs, forecast.LocalJob{ID: fmt.Sprintf("q%d", k), State: forecast.JobQueued,
			Procs: 1 + r.IntN(16), Walltime: int64(600 + r.IntN(2*86400)), Submitted: now - int64(r.IntN(7200)),
			Priority: int64(r.IntN(3) * 100), Queue: queues[r.IntN(3)]})
	}
	for k := 0; k < nodes/10; k++ {
		i := r.IntN(nodes)
		if !s.Nodes[i].Usable() || free[i] == 0 {
			continue
		}
		free[i]--
		st := now + int64(r.IntN(86400))
		s.Reservations = append(s.Reservations, forecast.Reservation{ID: fmt.Sprintf("g%d.0", k), Start: st, End: st + int64(600+r.IntN(7200)),
			Hosts: []forecast.HostProcs{{Node: s.Nodes[i].Name, Procs: 1}}})
	}
	return s
}

// usage is processors on one node over [start, end).
type usage struct {
	start, end int64
	procs      int
	price      float64
	priced     bool
}

func at(us []usage, t int64, keep func(usage) bool) int {
	n := 0
	for _, u := range us {
		if u.start <= t && t < u.end && keep(u) {
			n += u.procs
		}
	}
	return n
}

func TestBuildProperties(t *testing.T) {
	const now, horizon = 1_000_000, 1_000_000 + 3*86400
	pricing := testPricing()
	for seed := range uint64(30) {
		r := rand.New(rand.NewPCG(seed, 7))
		snap := randomSnapshot(r, 12+r.IntN(20), 10+r.IntN(60), now)
		for _, pol := range []Policy{EASY, Conservative, FCFS} {
			f, preds, err := Build(snap, now, horizon, pol, pricing)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Validate(); err != nil {
				t.Fatalf("seed %d %v: %v", seed, pol, err)
			}
			checkForecast(t, fmt.Sprintf("seed %d %v", seed, pol), snap, f, preds, pricing)
		}
	}
}

func checkForecast(t *testing.T, name string, snap forecast.Snapshot, f forecast.Forecast, preds []forecast.Prediction, pricing forecast.Pricing) {
	t.Helper()
	jobs := map[string]forecast.LocalJob{}
	for _, j := range snap.Jobs {
		jobs[j.ID] = j
	}
	held := map[string][]usage{}   // running, reservations, unoffered predictions
	queued := map[string][]usage{} // predicted queued jobs
	for _, r := range snap.Reservations {
		for _, h := range r.Hosts {
			held[h.Node] = append(held[h.Node], usage{r.Start, r.End, h.Procs, 0, false})
		}
	}
	for _, p := range preds {
		j := jobs[p.Job]
		if j.Waiting() && p.Start < f.Generated {
			t.Errorf("%s: %s predicted to start at %d before now", name, p.Job, p.Start)
		}
		price, ok := pricing.Price(j)
		for _, h := range p.Hosts {
			u := usage{p.Start, p.End, h.Procs, price, ok}
			if j.Running() || !ok {
				held[h.Node] = append(held[h.Node], u)
			} else {
				queued[h.Node] = append(queued[h.Node], u)
			}
		}
	}
	slots := map[string][]usage{}
	for _, s := range f.Slots {
		slots[s.Node] = append(slots[s.Node], usage{s.Start, s.End, s.Procs, s.Price, true})
	}
	all := func(usage) bool { return true }
	for _, n := range snap.Nodes {
		if !n.Usable() {
			if len(slots[n.Name]) > 0 {
				t.Errorf("%s: down node %s has slots", name, n.Name)
			}
			continue
		}
		var times []int64
		for _, group := range [][]usage{held[n.Name], queued[n.Name], slots[n.Name]} {
			for _, u := range group {
				times = append(times, u.start, u.end-1)
			}
		}
		for _, tm := range times {
			if tm < f.Generated || tm >= f.Horizon {
				continue
			}
			h, q, s := at(held[n.Name], tm, all), at(queued[n.Name], tm, all), at(slots[n.Name], tm, all)
			if h+q > n.Procs {
				t.Fatalf("%s: node %s over capacity at %d: held %d + queued %d > %d", name, n.Name, tm, h, q, n.Procs)
			}
			if h+s > n.Procs {
				t.Fatalf("%s: node %s at %d: slots %d overlap running/reserved %d (procs %d)", name, n.Name, tm, s, h, n.Procs)
			}
			if want := n.Procs - h; s != want {
				t.Fatalf("%s: node %s at %d: slots offer %d, want %d", name, n.Name, tm, s, want)
			}
			for _, u := range queued[n.Name] {
				if u.start <= tm && tm < u.end {
					same := func(v usage) bool { return v.price == u.price }
					if got := at(slots[n.Name], tm, same); got < at(queued[n.Name], tm, same) {
						t.Fatalf("%s: node %s at %d: queued jobs at price %v hold more than the slots priced so", name, n.Name, tm, u.price)
					}
				}
			}
		}
	}
}

func BenchmarkBuild1000Nodes5000Jobs(b *testing.B) {
	const now = 1_000_000
	r := rand.New(rand.NewPCG(1, 2))
	snap := randomSnapshot(r, 1000, 5000, now)
	// depth=4: a site's RESERVATIONDEPTH 4 (node-level reservations by
	// Maui's range code), against EASY in the same run
	for _, pol := range []Policy{EASY, Conservative, {Depth: 4}} {
		b.Run(pol.String(), func(b *testing.B) { benchBuild(b, snap, pol, nil) })
	}
	// the baseline in the same run: the passes walking the whole queue,
	// without their shortcuts (noEarlyStop; TestEarlyStopSameSchedule
	// checks both give the same schedules)
	b.Run("easy/walk", func(b *testing.B) {
		benchBuild(b, snap, EASY, func(e *Engine) { e.noEarlyStop = true })
	})
}

func benchBuild(b *testing.B, snap forecast.Snapshot, pol Policy, tune func(*Engine)) {
	now := snap.Taken
	cpu0 := cputime.Used()
	for b.Loop() {
		if _, _, err := build(snap, now, now+7*86400, pol, forecast.DefaultPricing(), tune); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cputime.Used()-cpu0).Seconds()*1000/float64(b.N), "cpu-ms/op")
}
