package broker

import (
	"sort"

	"lookahead/forecast"
	"lookahead/wire"
)

// Job is the broker's record of one grid job. It is built only by applying
// events (see State.Apply); readers must not modify it.
type Job struct {
	Req       forecast.JobRequest
	RequestID string
	Actor     string
	State     string
	// Alloc is the allocation being committed or reserved (nil while
	// waiting).
	Alloc *forecast.Allocation
	// Revisions is the forecast Seq per site the allocation was planned on.
	Revisions    map[string]uint64
	Reservations []wire.Reservation
	Cost         float64
	WorstCost    float64
	// PendingRelease maps a site to the time from which a release is owed
	// there (after a rollback, a cancel or an expiry).
	PendingRelease map[string]int64
	// SiteStates is what each involved site reported (started, finished,
	// failed).
	SiteStates map[string]string
	// Started is when a site first reported the job started (a job whose
	// parts were submitted by hand; a dispatched job's parts keep their
	// own starts).
	Started int64
	// Script is the job's script when the broker dispatches its parts
	// (nil: the user submits them by hand).
	Script []byte
	// Parts are a dispatched job's parts by site (nil for other jobs).
	Parts map[string]*wire.PartStatus
	// PendingStop maps a site to the time from which a stop (deleting the
	// job's parts there) is owed.
	PendingStop map[string]int64
	Attempts    int
	Updated     int64
	Message     string
	// seq orders jobs by submission.
	seq uint64
}

// Active reports whether the job still wants or holds resources.
func (j *Job) Active() bool {
	switch j.State {
	case wire.JobWaiting, wire.JobCommitting, wire.JobReserved, wire.JobDispatched, wire.JobRunning:
		return true
	}
	return false
}

// OwesReleaseOn reports whether a release of the job is still owed on one
// of sites: the job must not be reserved there again before it is done
// (the release would take the new reservation). A release owed elsewhere
// does not hold the job back.
func (j *Job) OwesReleaseOn(sites []string) bool {
	for _, s := range sites {
		if _, owed := j.PendingRelease[s]; owed {
			return true
		}
	}
	return false
}

// Holds reports whether the job's allocation holds slots (the planner must
// not give them to another job).
func (j *Job) Holds() bool {
	return j.Alloc != nil && wire.HoldsReservations(j.State)
}

// Status renders the job for the status endpoint; plan is the last cycle's
// allocation for a waiting job (may be nil).
func (j *Job) Status(plan *forecast.Allocation) wire.JobStatus {
	st := wire.JobStatus{
		Job: j.Req, State: j.State, Reservations: j.Reservations, Cost: j.Cost,
		WorstCost: j.WorstCost, Actor: j.Actor, Updated: j.Updated,
		Message: j.Message, Attempts: j.Attempts,
	}
	st.Plan = plan
	st.ScriptBytes = len(j.Script)
	if j.Parts != nil {
		st.Parts = j.PartList()
	}
	st.Started = j.Started
	for _, p := range st.Parts {
		if p.Start > 0 && (st.Started == 0 || p.Start < st.Started) {
			st.Started = p.Start
		}
	}
	if j.Alloc != nil {
		a := *j.Alloc
		st.Plan = &a
	}
	for site := range j.PendingRelease {
		st.Releasing = append(st.Releasing, site)
	}
	sort.Strings(st.Releasing)
	return st
}

// WorstCost is what a job may cost at most: max_price × procs × walltime,
// in credits (prices are per CPU-hour).
func WorstCost(r forecast.JobRequest) float64 {
	return r.MaxPrice * float64(r.Procs) * float64(r.Walltime) / 3600
}
