package coalloc

import (
	"fmt"
	"math/rand/v2"

	"lookahead/forecast"
)

const synthNow = 1763780000

// synthForecasts builds about nSlots slots over 32 sites (fewer for small
// pools), shaped like what agents publish: every node is busy with running
// local jobs for up to two days, then alternates free stretches (the
// site's base price) with stretches that queued local jobs are forecast to
// take (priced 1.5–4× base, offered at that price); a quarter of the nodes
// are shared, with two half-node slots that overlap. Node types per site
// mix speeds 0.8–1.6 and 8 or 16 processors.
func synthForecasts(nSlots int, seed uint64) []forecast.Forecast {
	r := rand.New(rand.NewPCG(seed, 7))
	nSites := min(32, max(2, nSlots/500))
	perSite := nSlots / nSites
	speeds := []float64{0.8, 1, 1.25, 1.6}
	var out []forecast.Forecast
	for s := range nSites {
		f := forecast.Forecast{Version: 1, Site: fmt.Sprintf("site%02d", s), Seq: 1,
			Generated: synthNow, Horizon: synthNow + 7*86400}
		base := 0.8 + 1.2*r.Float64()
		types := [2]forecast.Node{
			{Procs: 8, Speed: speeds[r.IntN(4)], MemMB: 32000, Features: []string{"ib"}},
			{Procs: 16, Speed: speeds[r.IntN(4)], MemMB: 64000},
		}
		for n := 0; len(f.Slots) < perSite; n++ {
			node := types[r.IntN(2)]
			node.Name = fmt.Sprintf("n%05d", n)
			f.Nodes = append(f.Nodes, node)
			f.Slots = append(f.Slots, synthNodeSlots(r, node, base, f.Horizon)...)
		}
		out = append(out, f)
	}
	return out
}

func synthNodeSlots(r *rand.Rand, n forecast.Node, base float64, horizon int64) []forecast.Slot {
	var out []forecast.Slot
	t := synthNow + int64(r.Float64()*2*86400)
	shared := r.IntN(4) == 0
	for len(out) < 6 && t < horizon {
		free := int64(r.ExpFloat64()*3*3600) + 600
		end := min(t+free, horizon)
		if shared {
			half := n.Procs / 2
			out = append(out, forecast.Slot{Node: n.Name, Procs: half, Start: t, End: end, Price: base},
				forecast.Slot{Node: n.Name, Procs: half, Start: t + free/3, End: min(end+free/3, horizon), Price: base})
		} else {
			out = append(out, forecast.Slot{Node: n.Name, Procs: n.Procs, Start: t, End: end, Price: base})
		}
		t = end
		queued := int64(r.ExpFloat64()*5*3600) + 600
		if end = min(t+queued, horizon); end > t && r.IntN(3) > 0 {
			out = append(out, forecast.Slot{Node: n.Name, Procs: n.Procs, Start: t, End: end, Price: base * (1.5 + 2.5*r.Float64())})
		}
		t = end + int64(r.IntN(2))*3600 // sometimes a reservation in between
	}
	return out
}

// synthJob is the benchmark's job: 256 processors for 4 h at up to 3
// credits per CPU-hour, any sites.
func synthJob() forecast.JobRequest {
	return forecast.JobRequest{ID: "big", Procs: 256, Walltime: 4 * 3600, MaxPrice: 3, Submitted: synthNow}
}

// synthQueue is a grid queue of n jobs: 8–256 processors, 1–12 h, prices
// 1–5, a few with features, speed floors or site limits, both criteria.
func synthQueue(n int, seed uint64) []forecast.JobRequest {
	r := rand.New(rand.NewPCG(seed, 9))
	jobs := make([]forecast.JobRequest, n)
	for i := range jobs {
		j := forecast.JobRequest{ID: fmt.Sprintf("g%04d", i), Procs: 8 << r.IntN(6),
			Walltime: int64(3600 * (1 + r.IntN(12))), MaxPrice: 1 + 4*r.Float64(),
			Submitted: synthNow + int64(r.IntN(3600)), MaxSites: []int{0, 0, 1, 2}[r.IntN(4)]}
		if r.IntN(5) == 0 {
			j.Features = []string{"ib"}
		}
		if r.IntN(5) == 0 {
			j.MinSpeed = 1
		}
		if r.IntN(2) == 0 {
			j.Criterion = forecast.EarliestFinish
		}
		jobs[i] = j
	}
	return jobs
}
