package maui

// Batch is a run of Iters iterations of one Step that Maui makes without
// stopping (one `schedctl -S Iters`, one pass of its client loop).
type Batch struct {
	Step  int64
	Iters int64
}

// IterationsPerStop is what a batch costs in iterations. Running through
// its stops (sim_free.go), a batch costs Maui one pass serving four
// commands and this side four client processes, an iteration of the sim5
// workload about 4 ms of Maui's CPU early in the window; measured on
// sim5 (500 jobs), merging at 30 (176 batches, 324 extra iterations)
// cost 1.2 s more Maui CPU than at 1 (199 batches) and was slower, so
// batches are merged only where that adds at most one iteration per stop
// saved.
const IterationsPerStop = 1

// maxMerge bounds how many stops one batch may cover (and the search).
const maxMerge = 64

// MergeStops groups the stops after t (ascending) into batches: a batch
// of step g lands on every stop it covers (all are on its grid from its
// start), and its other iterations fall where the plan says nothing
// starts. It minimises batches + extra iterations / perStop. Pure.
func MergeStops(t int64, stops []int64, perStop int64) []Batch {
	p := []int64{t}
	for _, s := range stops {
		if s > p[len(p)-1] {
			p = append(p, s)
		}
	}
	n := len(p) - 1
	if n == 0 {
		return nil
	}
	perStop = max(perStop, 1)
	// cost in 1/perStop units of a stop: a batch perStop, an extra iteration 1.
	cost := make([]int64, n+1)
	from := make([]int, n+1)
	step := make([]int64, n+1)
	for j := 1; j <= n; j++ {
		cost[j] = -1
		g := int64(0)
		for i := j - 1; i >= 0 && j-i <= maxMerge; i-- {
			g = gcd(g, p[i+1]-p[i])
			iters := (p[j] - p[i]) / g
			extra := iters - int64(j-i)
			if extra > perStop*int64(j-i) {
				continue // never cheaper than stopping at each
			}
			if c := cost[i] + perStop + extra; cost[j] < 0 || c < cost[j] {
				cost[j], from[j], step[j] = c, i, g
			}
		}
	}
	var out []Batch
	for j := n; j > 0; j = from[j] {
		out = append(out, Batch{Step: step[j], Iters: (p[j] - p[from[j]]) / step[j]})
	}
	for i, k := 0, len(out)-1; i < k; i, k = i+1, k-1 {
		out[i], out[k] = out[k], out[i]
	}
	return out
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
