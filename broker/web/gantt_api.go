package web

import (
	"net/http"
	"slices"

	"lookahead/broker"
	"lookahead/forecast"
	"lookahead/wire"
)

// DefaultRows is the rows a Gantt has when the page does not say.
const DefaultRows = 200

// BarJob is what a bar's tooltip says of its job: who, how big, at what
// price (its max price, and its charge once reserved), its state and span.
type BarJob struct {
	User     string  `json:"user"`
	Account  string  `json:"account"`
	Procs    int     `json:"procs"`
	MaxPrice float64 `json:"max_price"`
	Cost     float64 `json:"cost"`
	State    string  `json:"state"`
}

// GanttView is /api/gantt: the site's Gantt, the broker's now and the
// jobs its bars show.
type GanttView struct {
	Now int64 `json:"now"`
	Gantt
	Jobs map[string]BarJob `json:"jobs"`
}

// apiGantt draws one site: over [from, to) when the page says, else over
// the window where the grid's work on the site sits (WorkWindow).
func (s *Server) apiGantt(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	site := q.Get("site")
	var f *forecast.Forecast
	for _, h := range s.b.SiteForecasts() {
		if h.Name == site {
			f = &h.Forecast
		}
	}
	if f == nil {
		http.Error(w, "no such site", http.StatusNotFound)
		return
	}
	jobs, _, _, now := s.b.Jobs(onSite(site), 0)
	holds := HoldsOn(site, jobs)
	from, to := WorkWindow(now, f.Horizon, holds)
	if q.Has("from") || q.Has("to") {
		from = intParam(q.Get("from"), now)
		to = intParam(q.Get("to"), max(f.Horizon, from+3600))
	}
	if to <= from {
		http.Error(w, "to must be after from", http.StatusBadRequest)
		return
	}
	g := BuildGantt(*f, holds, from, to, int(intParam(q.Get("rows"), DefaultRows)))
	writeJSON(w, GanttView{Now: now, Gantt: g, Jobs: barJobs(g, jobs)})
}

// onSite keeps the jobs that may hold something on site: not ended, with
// a reservation there or an allocation (being reserved, or planned) with
// a part there.
func onSite(site string) func(*broker.Job, *forecast.Allocation) bool {
	has := func(a *forecast.Allocation) bool {
		return a != nil && slices.ContainsFunc(a.Parts, func(p forecast.Part) bool { return p.Site == site })
	}
	return func(j *broker.Job, plan *forecast.Allocation) bool {
		if ended[j.State] {
			return false
		}
		return has(plan) || has(j.Alloc) || slices.ContainsFunc(j.Reservations, func(r wire.Reservation) bool { return r.Site == site })
	}
}

// barJobs describes the jobs g's bars show.
func barJobs(g Gantt, jobs []wire.JobStatus) map[string]BarJob {
	shown := map[string]bool{}
	for _, r := range g.Rows {
		for _, b := range r.Bars {
			shown[b.Job] = true
		}
	}
	out := make(map[string]BarJob, len(shown))
	for _, j := range jobs {
		if r := j.Job; shown[r.ID] {
			out[r.ID] = BarJob{User: r.User, Account: r.Account, Procs: r.Procs, MaxPrice: r.MaxPrice, Cost: j.Cost, State: j.State}
		}
	}
	return out
}
