package broker

import (
	"sort"

	"lookahead/forecast"
	"lookahead/wire"
)

// Site is the latest the broker heard from one site, on the broker's
// clock: the forecast it plans on and when the site last proved that
// forecast current.
type Site struct {
	// Name is the site's name: the subject or KV key it spoke on.
	Name     string
	Forecast forecast.Forecast
	// LastSeen is when the forecast arrived or a heartbeat naming its
	// revision did, never later than its generation time plus the clock
	// skew accepted (a replayed or delayed message is as old as it says).
	LastSeen int64
	// Offset is the site's clock minus the broker's at its last message;
	// OffsetKnown says it was measured (a stored forecast read at start
	// says nothing of the site's clock).
	Offset      int64
	OffsetKnown bool
	// Problem says why the site's latest message was refused; Excluded
	// when that leaves the site out of planning until a good forecast.
	Problem  string
	Excluded bool
	// Offline: the site's agent said it stopped, or that it cannot
	// forecast (Problem says why); the site is out of planning until its
	// next forecast.
	Offline bool
	// Unanswered says why the site is out of planning although it may
	// publish forecasts: its agent did not answer a reserve or release
	// request (no responders, or silence until the timeout). It is kept
	// across forecasts and heartbeats, and cleared only when the site
	// answers a request again (see Answered). Since is when it began.
	Unanswered      string
	UnansweredSince int64
}

// Stale reports whether the site is out of planning at now: excluded,
// unanswered, offline, or silent longer than ttl.
func (s Site) Stale(now, ttl int64) bool {
	return s.Out() || s.Offline || now-s.LastSeen > ttl
}

// Out reports whether the site is excluded from planning whatever its
// forecast's age: its latest forecast was refused, or it does not answer
// requests.
func (s Site) Out() bool { return s.Excluded || s.Unanswered != "" }

// NotAnswering records that site name did not answer a request at now
// (why: which request, and the transport's error). The first silence
// dates the record; later ones only update the reason.
func NotAnswering(cur *Site, name, why string, now int64) Site {
	s := orEmpty(cur, name)
	if s.Unanswered == "" {
		s.UnansweredSince = now
	}
	s.Unanswered = wire.Clip("does not answer its requests: "+why, 300)
	return s
}

// Answered records that the site answered a request (any reply, even a
// refusal): it is back in planning as far as answering goes.
func Answered(cur Site) Site {
	cur.Unanswered, cur.UnansweredSince = "", 0
	return cur
}

// Fresh splits sites into the forecasts planning may use, the names of
// stale sites and of excluded ones, all sorted by site name.
func Fresh(sites []Site, now, ttl int64) (fresh []forecast.Forecast, stale, excluded []string) {
	sorted := append([]Site(nil), sites...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a].Name < sorted[b].Name })
	for _, s := range sorted {
		switch {
		case s.Out():
			excluded = append(excluded, s.Name)
		case s.Stale(now, ttl):
			stale = append(stale, s.Name)
		default:
			fresh = append(fresh, s.Forecast)
		}
	}
	return fresh, stale, excluded
}

// SiteStatuses summarises every site for the sites endpoint, sorted by name.
func SiteStatuses(sites []Site, now, ttl int64) []wire.SiteStatus {
	out := make([]wire.SiteStatus, 0, len(sites))
	for _, s := range sites {
		f := s.Forecast
		st := wire.SiteStatus{
			Site: s.Name, Seq: f.Seq, Generated: f.Generated, LastSeen: s.LastSeen,
			Horizon: f.Horizon, Nodes: len(f.Nodes),
			Slots: len(f.Slots), Stale: s.Stale(now, ttl), ClockOffset: s.Offset,
			Problem: s.Problem, Excluded: s.Out(),
			Unanswered: s.Unanswered, UnansweredSince: s.UnansweredSince, Offline: s.Offline,
			RunsParts: f.RunsParts,
		}
		if s.LastSeen > 0 { // 0: no forecast of the site was ever taken
			st.Age = now - s.LastSeen
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
