package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"lookahead/forecast"
	"lookahead/wire"
)

// BrokerView says which broker answers. Active is always true today (one
// broker per grid); a standby of a highly available pair would say false.
type BrokerView struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Active  bool   `json:"active"`
	Role    string `json:"role"`
}

// Overview is /api/overview: the broker, its sites and its last cycle.
type Overview struct {
	Now    int64      `json:"now"`
	TTL    int64      `json:"ttl"`
	Broker BrokerView `json:"broker"`
	Sites  []SiteView `json:"sites"`
	Cycle  CycleView  `json:"cycle"`
}

// CycleView is the last planning cycle in short.
type CycleView struct {
	Cycle    uint64   `json:"cycle"`
	Time     int64    `json:"time"`
	Micros   int64    `json:"micros"`
	Stale    []string `json:"stale"`
	Excluded []string `json:"excluded"`
	Commit   []string `json:"commit"`
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func (s *Server) apiOverview(w http.ResponseWriter, r *http.Request) {
	rep := s.b.Sites()
	p := s.b.Plan()
	writeJSON(w, Overview{Now: rep.Now, TTL: rep.TTL,
		Broker: BrokerView{Name: s.b.Name(), Version: s.cfg.Version, Active: true, Role: "active (the only broker)"},
		Sites:  ViewSites(rep, s.b.SiteForecasts()),
		Cycle: CycleView{Cycle: p.Cycle, Time: p.Time, Micros: p.Micros, Stale: nonNil(p.Stale),
			Excluded: nonNil(p.Excluded), Commit: nonNil(p.Commit)}})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// allJobs is every job the broker holds, finished ones within retention
// included, as an operator sees them.
func (s *Server) allJobs() wire.StatusReply {
	return s.b.Status(wire.StatusRequest{Type: wire.TypeStatus, All: true})
}

func (s *Server) apiJobs(w http.ResponseWriter, r *http.Request) {
	st := s.allJobs()
	stale := s.b.Plan().Stale
	out := struct {
		Now  int64     `json:"now"`
		Jobs []JobView `json:"jobs"`
	}{Now: st.Now, Jobs: make([]JobView, 0, len(st.Jobs))}
	for _, j := range st.Jobs {
		out.Jobs = append(out.Jobs, ViewJob(j, stale, st.Now))
	}
	writeJSON(w, out)
}

func (s *Server) apiJobEvents(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !forecast.IsPlainName(id) {
		http.Error(w, "job id must be a plain name", http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	events, err := s.streams.JobEvents(ctx, id)
	out := struct {
		Job    string `json:"job"`
		Events any    `json:"events"`
		Error  string `json:"error,omitempty"`
	}{Job: id, Events: events}
	if err != nil {
		out.Error = err.Error()
	}
	writeJSON(w, out)
}

// DefaultRows is the rows a Gantt has when the page does not say.
const DefaultRows = 200

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
	now := s.b.Sites().Now
	from := intParam(q.Get("from"), now)
	to := intParam(q.Get("to"), max(f.Horizon, from+3600))
	if to <= from {
		http.Error(w, "to must be after from", http.StatusBadRequest)
		return
	}
	g := BuildGantt(*f, HoldsOn(site, s.allJobs().Jobs), from, to, int(intParam(q.Get("rows"), DefaultRows)))
	writeJSON(w, struct {
		Now int64 `json:"now"`
		Gantt
	}{now, g})
}

func intParam(v string, def int64) int64 {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n
	}
	return def
}

// AuditTailRecords is how many of the latest audit records are read;
// PerOrigin how many of them are shown per site.
const (
	AuditTailRecords = 2000
	PerOrigin        = 20
)

func (s *Server) apiAudit(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	recs, err := s.streams.AuditTail(ctx, AuditTailRecords)
	out := struct {
		AuditView
		Error string `json:"error,omitempty"`
	}{AuditView: ViewAudit(recs, PerOrigin)}
	if err != nil {
		out.Error = err.Error()
	}
	writeJSON(w, out)
}
