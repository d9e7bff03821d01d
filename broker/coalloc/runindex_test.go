package coalloc

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRunSweepOpensTheListsItCanUse: over random instances (three speeds,
// three prices, runs in every length class), every sweep of every job
// opens exactly the lists that may hold a run it can use: none of a
// shorter length class, of a speed group with no node as fast as its
// tier, or of a price group above its cut (what the finer index saves),
// every other one that is not empty, and none that it leaves holds a
// usable run (what keeps the answers).
func TestRunSweepOpensTheListsItCanUse(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 2))
	sweeps := 0
	for inst := range 300 {
		p, jobs := randRunPool(t, r, inst, 4)
		x := &p.runs
		var speeds []float64
		for _, c := range p.classes {
			speeds = append(speeds, c.speed)
		}
		slices.Sort(speeds)
		for _, job := range jobs {
			for _, tier := range slices.Compact(speeds) {
				for _, sp := range p.specs(job, tier) {
					sp.limit = math.MaxInt64
					p.sweepRuns(sp)
					sweeps++
					opened := map[int]bool{}
					for _, c := range p.sc.runs.lists {
						opened[c.k] = true
					}
					for k := range x.lists {
						class, v, g := k/(x.speeds*x.groups), k/x.groups%x.speeds, k%x.groups
						may := sp.maxRank >= 0 && class >= x.lengthClass(sp.dur) && x.top[v] >= sp.tier && g <= x.group(sp.maxRank)
						if opened[k] && !may {
							t.Fatalf("instance %d job %s tier %v dur %d cut %d: opened list %d (class %d, speeds up to %v, price group %d)",
								inst, job.ID, tier, sp.dur, sp.maxRank, k, class, x.top[v], g)
						}
						if may && x.lists[k].n > 0 && !opened[k] {
							t.Fatalf("instance %d job %s tier %v dur %d cut %d: list %d (class %d, speeds up to %v, price group %d) not opened",
								inst, job.ID, tier, sp.dur, sp.maxRank, k, class, x.top[v], g)
						}
						if may || x.lists[k].n == 0 {
							continue
						}
						x.lists[k].all(func(s stretch) {
							if s.usable(sp.rankAt(s.site), p.sc.classOK, sp.dur) {
								t.Fatalf("instance %d job %s tier %v dur %d: list %d not opened holds usable run %+v",
									inst, job.ID, tier, sp.dur, k, s)
							}
						})
					}
				}
			}
		}
	}
	t.Logf("%d sweeps checked", sweeps)
}
