package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"lookahead/broker"
	"lookahead/broker/client"
	"lookahead/forecast"
	"lookahead/wire"
)

// BrokerView says which broker answers and its role: active, or a
// standby (Why says which broker is active; a standby holds no queue and
// plans nothing, so its page shows no sites or jobs) or one starting or
// stepped down. Leader is the active broker as this one knows it.
type BrokerView struct {
	Name    string           `json:"name"`
	Version string           `json:"version"`
	Active  bool             `json:"active"`
	Role    string           `json:"role"`
	Why     string           `json:"why,omitempty"`
	Leader  *wire.Leadership `json:"leader,omitempty"`
}

// ViewBroker is the header's broker as its HA status says.
func ViewBroker(st wire.HAStatus, version string) BrokerView {
	return BrokerView{Name: st.Name, Version: version, Active: st.Role == wire.RoleActive, Role: st.Role, Why: st.Message, Leader: st.Leader}
}

// Overview is /api/overview: the broker, its sites (those the query
// keeps, in its order: Total and Counts are of every site, Names every
// site's name sorted) and its last cycle.
type Overview struct {
	Now    int64          `json:"now"`
	TTL    int64          `json:"ttl"`
	Broker BrokerView     `json:"broker"`
	Sites  []SiteView     `json:"sites"`
	Total  int            `json:"total"`
	Counts map[string]int `json:"counts"`
	Names  []string       `json:"names"`
	Cycle  CycleView      `json:"cycle"`
}

// CycleView is the last planning cycle in short: Jobs is how many jobs
// it planned.
type CycleView struct {
	Cycle    uint64   `json:"cycle"`
	Time     int64    `json:"time"`
	Micros   int64    `json:"micros"`
	Jobs     int      `json:"jobs"`
	Stale    []string `json:"stale"`
	Excluded []string `json:"excluded"`
	Commit   []string `json:"commit"`
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// siteQuery reads the Sites tab's sort, state (a comma list) and match.
func siteQuery(q url.Values) (client.SiteQuery, error) {
	sq := client.SiteQuery{Sort: q.Get("sort"), Match: q.Get("match")}
	if st := q.Get("state"); st != "" {
		sq.States = strings.Split(st, ",")
	}
	return sq, sq.Check("sort", "state")
}

func (s *Server) apiOverview(w http.ResponseWriter, r *http.Request) {
	sq, err := siteQuery(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rep := s.b.Sites()
	p := s.b.Plan()
	o := Overview{Now: rep.Now, TTL: rep.TTL, Broker: ViewBroker(s.b.HAStatus(), s.cfg.Version), Total: len(rep.Sites),
		Counts: client.CountSites(rep.Sites), Names: make([]string, 0, len(rep.Sites)),
		Cycle: CycleView{Cycle: p.Cycle, Time: p.Time, Micros: p.Micros, Jobs: len(p.Allocations), Stale: nonNil(p.Stale),
			Excluded: nonNil(p.Excluded), Commit: nonNil(p.Commit)}}
	for _, st := range rep.Sites {
		o.Names = append(o.Names, st.Site)
	}
	rep.Sites = client.SelectSites(rep.Sites, sq)
	o.Sites = ViewSites(rep, s.b.SiteForecasts())
	writeJSON(w, o)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Jobs bounds the queue rows one answer carries: DefaultJobs unless the
// page asks for up to MaxJobs.
const (
	DefaultJobs = 500
	MaxJobs     = 5000
)

func (s *Server) apiJobs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := min(max(int(intParam(q.Get("limit"), DefaultJobs)), 1), MaxJobs)
	jobs, found, total, now := s.b.Jobs(jobFilter(q.Get("state"), q.Get("match")), limit)
	p := s.b.Plan()
	out := JobsView{Now: now, Total: total, Found: found, Order: p.Order, Jobs: make([]JobView, 0, len(jobs))}
	if p.Order != "" {
		out.OrderMeaning = client.OrderMeaning(p.Order)
	}
	for _, j := range jobs {
		out.Jobs = append(out.Jobs, ViewJob(j, p.Stale, now))
	}
	writeJSON(w, out)
}

// JobsView is /api/jobs: the jobs the query keeps (Found of Total), and
// the queue order the broker plans waiting jobs in (the plan's, as each
// waiting job's Queue names it) with what it plans first.
type JobsView struct {
	Now          int64     `json:"now"`
	Total        int       `json:"total"`
	Found        int       `json:"found"`
	Order        string    `json:"order,omitempty"`
	OrderMeaning string    `json:"order_meaning,omitempty"`
	Jobs         []JobView `json:"jobs"`
}

// jobFilter keeps the jobs in one of states (a comma list; "" is every
// state; "active" is every state but the ended ones) whose id, user or
// account contains match (case ignored).
func jobFilter(states, match string) func(*broker.Job, *forecast.Allocation) bool {
	want := map[string]bool{}
	for _, s := range strings.Split(states, ",") {
		if s != "" {
			want[s] = true
		}
	}
	match = strings.ToLower(match)
	return func(j *broker.Job, _ *forecast.Allocation) bool {
		if len(want) > 0 && !want[j.State] && !(want["active"] && !ended[j.State]) {
			return false
		}
		r := j.Req
		return match == "" || strings.Contains(strings.ToLower(r.ID+"\x00"+r.User+"\x00"+r.Account), match)
	}
}

// ended are the states a job does not leave.
var ended = map[string]bool{wire.JobFinished: true, wire.JobFailed: true, wire.JobCancelled: true, wire.JobExpired: true}

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
	recs, err := s.audit.Records(ctx)
	out := struct {
		AuditView
		Error string `json:"error,omitempty"`
	}{AuditView: ViewAudit(recs, PerOrigin)}
	if err != nil {
		out.Error = err.Error()
	}
	writeJSON(w, out)
}
