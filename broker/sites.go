package broker

import (
	"sort"

	"lookahead/forecast"
	"lookahead/wire"
)

// Site is the latest the broker heard from one site: its forecast and when
// the site last proved alive (forecast generated or heartbeat), on the
// broker's clock.
type Site struct {
	Forecast forecast.Forecast
	LastSeen int64
}

// Stale reports whether the site has been silent longer than ttl at now.
func (s Site) Stale(now, ttl int64) bool { return now-s.LastSeen > ttl }

// Fresh splits sites into the forecasts planning may use and the names of
// stale sites, both sorted by site name.
func Fresh(sites []Site, now, ttl int64) (fresh []forecast.Forecast, stale []string) {
	sorted := append([]Site(nil), sites...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a].Forecast.Site < sorted[b].Forecast.Site })
	for _, s := range sorted {
		if s.Stale(now, ttl) {
			stale = append(stale, s.Forecast.Site)
		} else {
			fresh = append(fresh, s.Forecast)
		}
	}
	return fresh, stale
}

// SiteStatuses summarises every site for the sites endpoint, sorted by name.
func SiteStatuses(sites []Site, now, ttl int64) []wire.SiteStatus {
	out := make([]wire.SiteStatus, 0, len(sites))
	for _, s := range sites {
		f := s.Forecast
		st := wire.SiteStatus{
			Site: f.Site, Seq: f.Seq, Generated: f.Generated, LastSeen: s.LastSeen,
			Age: now - s.LastSeen, Horizon: f.Horizon, Nodes: len(f.Nodes),
			Slots: len(f.Slots), Stale: s.Stale(now, ttl),
		}
		for _, n := range f.Nodes {
			st.Procs += n.Procs
		}
		st.FreeProcHours = freeProcHours(f.Slots, now, f.Horizon)
		out = append(out, st)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Site < out[b].Site })
	return out
}

func freeProcHours(slots []forecast.Slot, from, to int64) float64 {
	total := 0.0
	for _, s := range slots {
		a, b := max(s.Start, from), min(s.End, to)
		if b > a {
			total += float64(s.Procs) * float64(b-a) / 3600
		}
	}
	return total
}
