package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"lookahead/forecast"
	"lookahead/internal/cputime"
)

// TestEarlyStopSameSchedule: a pass that stops once no job left fits now
// (laterFits, the queue summary) and whose backfill lists only the jobs
// that fit now from where the pass found the first (fitUntil, bfFrom)
// starts the same jobs, at the same times, on the same nodes, as one that
// goes on (an unbounded pass while a later job asks for no more processors
// than are free; EASY and depth 3 to the depth; backfill walking the whole
// queue) — with FIRSTFIT, BESTFIT and BACKFILLDEPTH, on random workloads whose jobs end before
// their walltime (so every pass is rebuilt), with grid reservations, on
// pool and node clusters.
func TestEarlyStopSameSchedule(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		c := UniformCluster(4+r.IntN(12), 1+r.IntN(8))
		if seed%3 == 0 {
			c = PoolCluster(16 + r.IntN(64))
		}
		var jobs []Job
		for k := range 150 + r.IntN(150) {
			wall := int64(300 + r.IntN(20000))
			j := Job{ID: fmt.Sprint(k), Procs: 1 + r.IntN(24), Walltime: wall, Runtime: int64(r.IntN(int(wall))),
				Submit: int64(k * r.IntN(400))}
			if ppn := []int{1, 2, 4}[r.IntN(3)]; r.IntN(3) == 0 {
				j.PPN, j.Procs = ppn, ppn*(1+r.IntN(6))
			}
			jobs = append(jobs, j)
		}
		var resvs []forecast.Reservation
		for k := range 12 {
			s := int64(r.IntN(40000))
			resvs = append(resvs, forecast.Reservation{ID: fmt.Sprint("g", k), Start: s, End: s + int64(600+r.IntN(7200)),
				Hosts: []forecast.HostProcs{{Node: c.Nodes[r.IntN(len(c.Nodes))].Name, Procs: 1}}})
		}
		for _, p := range []Policy{Conservative, EASY, {Depth: 3}, {Depth: 2, Backfill: BestFit}, {Depth: 1, BFDepth: 2}} {
			fast, full := replayEvents(t, c, p, jobs, resvs, false), replayEvents(t, c, p, jobs, resvs, true)
			if len(fast) == 0 || !slices.Equal(fast, full) {
				t.Fatalf("seed %d, %v: %d events with the early stop, %d without; first difference %s", seed, p, len(fast), len(full), firstDiff(fast, full))
			}
		}
	}
}

func replayEvents(t *testing.T, c Cluster, p Policy, jobs []Job, resvs []forecast.Reservation, noEarlyStop bool) []string {
	t.Helper()
	e := NewEngine(c, p, 0)
	e.noEarlyStop = noEarlyStop
	for _, rv := range resvs {
		_ = e.Reserve(rv) // one overlapping another is refused, in both runs

	}
	for _, j := range jobs {
		e.Submit(j)
	}
	var out []string
	for _, ev := range e.Drain() {
		out = append(out, fmt.Sprintf("%v %d %s %d %v", ev.Kind, ev.Time, ev.Job, ev.Start, ev.Hosts))
	}
	return out
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return a[i] + " / " + b[i]
		}
	}
	return "at the end"
}

// BenchmarkEarlyStop replays a random workload (1,000 jobs, one every 4 minutes, on 256
// one-processor nodes, runtimes below walltimes) with the early stop and,
// as the baseline in the same run, without it (noEarlyStop).
func BenchmarkEarlyStop(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	c := PoolCluster(256)
	var jobs []Job
	for k := range 1000 {
		wall := int64(600 + r.IntN(40000))
		jobs = append(jobs, Job{ID: fmt.Sprint(k), Procs: 1 + r.IntN(64), Walltime: wall, Runtime: int64(r.IntN(int(wall))), Submit: int64(k * 240)})
	}
	for _, p := range []Policy{EASY, Conservative} {
		for _, off := range []bool{true, false} {
			b.Run(fmt.Sprintf("%v/noEarlyStop=%v", p, off), func(b *testing.B) {
				cpu0 := cputime.Used()
				for b.Loop() {
					e := NewEngine(c, p, 0)
					e.noEarlyStop, e.quiet = off, true
					for _, j := range jobs {
						e.Submit(j)
					}
					e.Drain()
				}
				b.ReportMetric((cputime.Used()-cpu0).Seconds()*1000/float64(b.N), "cpu-ms/op")
			})
		}
	}
}
