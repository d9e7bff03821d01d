package web

import (
	"fmt"

	"lookahead/internal/durfmt"
	"lookahead/wire"
)

// JobView is one row of the grid queue.
type JobView struct {
	ID       string   `json:"id"`
	State    string   `json:"state"`
	User     string   `json:"user"`
	Account  string   `json:"account"`
	Procs    int      `json:"procs"`
	Walltime int64    `json:"walltime"`
	MaxPrice float64  `json:"max_price"`
	Sites    []string `json:"sites"`
	Start    int64    `json:"start,omitempty"`
	End      int64    `json:"end,omitempty"`
	// StartKind says what Start is: "planned" (a waiting or committing
	// job's plan), "reserved" (its reservations' start) or "started" (when
	// the job started, as the sites reported).
	StartKind string   `json:"start_kind,omitempty"`
	Reserved  bool     `json:"reserved"`
	Cost      float64  `json:"cost"`
	WorstCost float64  `json:"worst_cost"`
	Attempts  int      `json:"attempts"`
	Submitted int64    `json:"submitted"`
	Updated   int64    `json:"updated"`
	Why       string   `json:"why,omitempty"`
	Message   string   `json:"message,omitempty"`
	Releasing []string `json:"releasing,omitempty"`
	// Queue is a waiting job's place in the last cycle's queue order, as
	// `lookahead status` says it (absent for other jobs, and for one
	// submitted since the cycle).
	Queue *wire.QueuePlace `json:"queue,omitempty"`
}

// held are the states whose plan is backed by reservations.
var held = map[string]bool{wire.JobReserved: true, wire.JobRunning: true, wire.JobDispatched: true}

// ViewJob is the queue row of st as of now: where it is (or is planned),
// and, for a waiting job, why it is not placed yet.
func ViewJob(st wire.JobStatus, stale []string, now int64) JobView {
	j := st.Job
	v := JobView{ID: j.ID, State: st.State, User: j.User, Account: j.Account, Procs: j.Procs, Walltime: j.Walltime,
		MaxPrice: j.MaxPrice, Sites: []string{}, Cost: st.Cost, WorstCost: st.WorstCost, Attempts: st.Attempts,
		Submitted: j.Submitted, Updated: st.Updated, Message: st.Message, Releasing: st.Releasing, Reserved: held[st.State], Queue: st.Queue}
	if p := st.Plan; p != nil && p.Placed() {
		v.Sites, v.Start, v.End, v.StartKind = p.Sites(), p.Start, p.End, "reserved"
		if st.State == wire.JobWaiting || st.State == wire.JobCommitting {
			v.StartKind = "planned"
		}
	}
	if st.Started > 0 {
		v.Start, v.StartKind = st.Started, "started"
	}
	if st.State == wire.JobWaiting {
		v.Why = whyWaiting(st, stale, now)
	}
	return v
}

// whyWaiting says why a waiting job holds nothing yet: the broker's why
// for it when it has one (the plan's Why, which Broker.Jobs fills in as
// `lookahead status JOB` says it: what was short, what would help, or why
// it is planned later), else the planner's no-fit (what did not fit), a
// refused commit (the job's message: over budget, a stale forecast, a
// site's refusal), not yet planned, or planned but not yet within the
// commit lead time. A placed job adds its last refused commit.
func whyWaiting(st wire.JobStatus, stale []string, now int64) string {
	p := st.Plan
	why := ""
	switch {
	case p != nil && p.Why != "":
		why = p.Why
	case p != nil && p.Error != "":
		why = p.Error
		if len(stale) > 0 {
			why += fmt.Sprintf(" (stale sites out of planning: %v)", stale)
		}
	case p == nil && st.Message != "":
		return st.Message
	case p == nil:
		return "not planned yet: waiting for the next planning cycle"
	default:
		why = fmt.Sprintf("planned to start in %s: reserved when the start is within the commit lead time", durfmt.Seconds(max(0, p.Start-now)))
	}
	if p.Placed() && st.Message != "" {
		why += "; last attempt: " + st.Message
	}
	return why
}

// HoldsOn lists the grid's holds on site: reservations of reserved,
// running and dispatched jobs, the allocation a committing job is
// reserving, and waiting jobs' planned parts.
func HoldsOn(site string, jobs []wire.JobStatus) []Hold {
	var out []Hold
	for _, st := range jobs {
		switch {
		case held[st.State] && len(st.Reservations) > 0:
			for _, r := range st.Reservations {
				if r.Site != site {
					continue
				}
				for _, n := range r.Nodes {
					out = append(out, Hold{Bar: Bar{Job: r.Job, State: st.State, Start: r.Start, End: r.End, Procs: n.Procs}, Node: n.Node})
				}
			}
		case st.State == wire.JobWaiting || st.State == wire.JobCommitting || held[st.State]:
			out = append(out, planHolds(site, st)...)
		}
	}
	return out
}

func planHolds(site string, st wire.JobStatus) []Hold {
	p := st.Plan
	if p == nil || !p.Placed() {
		return nil
	}
	state := st.State
	if state == wire.JobWaiting {
		state = "planned"
	}
	var out []Hold
	for _, part := range p.Parts {
		if part.Site == site {
			out = append(out, Hold{Bar: Bar{Job: st.Job.ID, State: state, Start: p.Start, End: p.End, Procs: part.Procs}, Node: part.Node})
		}
	}
	return out
}
