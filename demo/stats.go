package demo

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"lookahead/broker"
	"lookahead/broker/client"
	"lookahead/wire"
)

// Summary is what the demo did.
type Summary struct {
	RealSeconds    float64 `json:"real_seconds"`
	SimulatedHours float64 `json:"simulated_hours"`
	Sites          int     `json:"sites"`
	LocalJobs      int     `json:"local_jobs"`
	Submitted      int     `json:"grid_jobs_submitted"`
	Refused        int     `json:"grid_jobs_refused"`
	Placed         int     `json:"grid_jobs_placed"` // reserved at some point: reserved, running, finished, expired
	MultiSite      int     `json:"multi_site_jobs"`
	// CrossKind of them span a Slurm site and a Torque/Maui site.
	CrossKind     int      `json:"cross_kind_jobs"`
	CrossKindJobs []string `json:"cross_kind,omitempty"`
	Finished      int      `json:"finished"`
	Running       int      `json:"running"`
	Waiting       int      `json:"still_waiting"`
	Expired       int      `json:"expired"`
	// Scripted jobs were submitted with a script: the broker dispatched
	// their parts; Failed of them failed (a part failed, its others were
	// deleted).
	Scripted int `json:"with_script"`
	Failed   int `json:"failed"`
	// MeanWaitMinutes is the simulated time from submission to the reserved
	// start, over placed jobs.
	MeanWaitMinutes float64 `json:"mean_wait_minutes"`
	Cost            float64 `json:"cost_credits"`
	Rollbacks       int     `json:"rollbacks"`
	Cycles          int     `json:"cycles"`
	MeanCycleMicros float64 `json:"mean_cycle_micros"`
	AuditChecked    int     `json:"audit_reservations_checked"`
	AuditFindings   int     `json:"audit_findings"`
	AuditErrors     int     `json:"audit_sites_unanswered"`
	// AuditDetail says what each finding and unanswered site was.
	AuditDetail []string `json:"audit_detail,omitempty"`
}

// stats collects counts from the live stream. Safe for concurrent use.
type stats struct {
	mu        sync.Mutex
	localJobs int
	skipped   int
	submits   int
	scripted  int
	refused   int
	rollbacks int
	cycles    int
	micros    int64
}

func newStats() *stats { return &stats{} }

func (s *stats) submitted(gj GridJob, reply wire.SubmitReply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.submits++
	switch {
	case reply.Code != wire.CodeOK:
		s.refused++
	case gj.Script != nil:
		s.scripted++
	}
}

func (s *stats) event(e broker.Event) {
	if e.Kind == broker.EvOutcome && !e.OK {
		s.mu.Lock()
		s.rollbacks++
		s.mu.Unlock()
	}
}

func (s *stats) plan(p wire.Plan) {
	s.mu.Lock()
	s.cycles++
	s.micros += p.Micros
	s.mu.Unlock()
}

// finish audits every site against the broker and builds the summary
// from the broker's own records.
func (r *run) finish(_ *client.Client) Summary {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	audit := r.b.Audit(ctx, false)
	st := r.b.Status(wire.StatusRequest{All: true})
	s := r.stats
	s.mu.Lock()
	defer s.mu.Unlock()
	el := time.Since(r.clock.Origin())
	sum := Summary{RealSeconds: el.Seconds(), SimulatedHours: el.Hours() * r.o.Speed, Sites: len(Sites),
		LocalJobs: s.localJobs, Submitted: s.submits, Refused: s.refused, Scripted: s.scripted, Rollbacks: s.rollbacks, Cycles: s.cycles,
		AuditChecked: audit.Checked, AuditFindings: len(audit.Findings), AuditErrors: len(audit.Errors)}
	for _, f := range audit.Findings {
		sum.AuditDetail = append(sum.AuditDetail, strings.TrimSpace(fmt.Sprintf("%s on %s: job %s, reservation %s %s",
			f.Kind, f.Site, f.Job, f.Reservation, strings.Join(f.Fields, ","))))
	}
	for _, e := range audit.Errors {
		sum.AuditDetail = append(sum.AuditDetail, "no answer: "+e)
	}
	if s.cycles > 0 {
		sum.MeanCycleMicros = float64(s.micros) / float64(s.cycles)
	}
	var wait float64
	for _, j := range st.Jobs {
		tally(&sum, j, &wait)
	}
	if sum.Placed > 0 {
		sum.MeanWaitMinutes = wait / float64(sum.Placed) / 60
	}
	return sum
}

func tally(sum *Summary, j wire.JobStatus, wait *float64) {
	switch j.State {
	case wire.JobWaiting, wire.JobCommitting:
		sum.Waiting++
		return
	case wire.JobCancelled:
		return
	case wire.JobFinished:
		sum.Finished++
	case wire.JobRunning:
		sum.Running++
	case wire.JobFailed:
		sum.Failed++
	case wire.JobExpired:
		sum.Expired++
	}
	if j.Plan == nil || !j.Plan.Placed() {
		return
	}
	sum.Placed++
	sum.Cost += j.Cost
	*wait += float64(j.Plan.Start - j.Job.Submitted)
	if len(j.Plan.Sites()) > 1 {
		sum.MultiSite++
	}
	kinds := map[string]bool{}
	for _, s := range j.Plan.Sites() {
		kinds[kindOf(s)] = true
	}
	if len(kinds) > 1 {
		sum.CrossKind++
		sum.CrossKindJobs = append(sum.CrossKindJobs, j.Job.ID+" on "+strings.Join(j.Plan.Sites(), "+"))
	}
}
