package broker

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"lookahead/forecast"
	"lookahead/wire"
)

// State is the grid queue: every job the broker knows and what it has
// charged. It changes only through Apply, so replaying the event stream
// rebuilds it exactly. Not safe for concurrent use.
type State struct {
	jobs     map[string]*Job
	requests map[string]string // client request id → job id
	seq      uint64            // submissions so far
	// spent is what forgotten jobs spent, per budget holder (see Forget).
	spent map[holder]float64
	// order is every job in submission order (seq ascending).
	order []*Job
	// ledger is each budget holder's active jobs and spend, kept as
	// events apply (ledger.go).
	ledger ledger
}

// NewState returns an empty queue.
func NewState() *State {
	return &State{jobs: map[string]*Job{}, requests: map[string]string{}, spent: map[holder]float64{}, ledger: ledger{}}
}

// Job returns the job with id, or nil.
func (s *State) Job(id string) *Job { return s.jobs[id] }

// ByRequest returns the job a client request id created, or nil.
func (s *State) ByRequest(requestID string) *Job {
	if requestID == "" {
		return nil
	}
	return s.jobs[s.requests[requestID]]
}

// NextID is the id the next submission without an id of its own gets.
func (s *State) NextID() string {
	for n := s.seq + 1; ; n++ {
		if id := fmt.Sprintf("g%d", n); s.jobs[id] == nil {
			return id
		}
	}
}

// Jobs returns every job in submission order (a new slice; the jobs are
// the state's).
func (s *State) Jobs() []*Job { return slices.Clone(s.order) }

// Len is how many jobs the state holds.
func (s *State) Len() int { return len(s.order) }

// after is the index in s.order of the first job submitted after the
// cursor seq.
func (s *State) after(seq uint64) int {
	return sort.Search(len(s.order), func(i int) bool { return s.order[i].seq > seq })
}

// add takes a new job (its seq past every other's) into the order and
// the ledger.
func (s *State) add(j *Job) {
	s.jobs[j.Req.ID] = j
	s.order = append(s.order, j)
	s.ledger.add(j, shareOf(j), +1)
}

// InState returns the jobs in the given state, in submission order.
func (s *State) InState(state string) []*Job {
	var out []*Job
	for _, j := range s.order {
		if j.State == state {
			out = append(out, j)
		}
	}
	return out
}

// Apply changes the state by one event. An event that does not fit the
// job's state (e.g. an outcome with no intent) is refused with an error and
// changes nothing.
func (s *State) Apply(e Event) error {
	if e.Kind == EvSubmitted {
		return s.submit(e)
	}
	j := s.jobs[e.Job]
	if j == nil {
		return fmt.Errorf("%s event for unknown job %q", e.Kind, e.Job)
	}
	before := shareOf(j)
	err := applyToJob(j, e)
	s.ledger.moved(j, before)
	if err != nil {
		return fmt.Errorf("%s event for job %s in state %s: %w", e.Kind, e.Job, j.State, err)
	}
	j.Updated = e.Time
	return nil
}

func (s *State) submit(e Event) error {
	if e.Request == nil || e.Job == "" || e.Request.ID != e.Job {
		return fmt.Errorf("submitted event without a request for job %q", e.Job)
	}
	if s.jobs[e.Job] != nil {
		return fmt.Errorf("submitted event for existing job %q", e.Job)
	}
	s.seq++
	j := &Job{
		Req: *e.Request, RequestID: e.RequestID, Actor: e.Actor,
		State: wire.JobWaiting, WorstCost: WorstCost(*e.Request),
		Updated: e.Time, seq: s.seq, Script: e.Script,
	}
	if math.IsInf(j.WorstCost, 0) || math.IsNaN(j.WorstCost) {
		// Admitted by an older broker: it would hold an infinite amount of
		// budget and break every status reply. Cancel it on replay.
		j.State, j.WorstCost = wire.JobCancelled, 0
		j.Message = "cancelled: max_price × procs × walltime is not a finite number; resubmit with a lower max_price"
	}
	s.add(j)
	if e.RequestID != "" {
		s.requests[e.RequestID] = e.Job
	}
	return nil
}

func applyToJob(j *Job, e Event) error {
	switch e.Kind {
	case EvCancelled:
		return applyCancel(j, e)
	case EvIntent:
		return applyIntent(j, e)
	case EvOutcome:
		return applyOutcome(j, e)
	case EvReleased:
		if _, owed := j.PendingRelease[e.Site]; !owed {
			return fmt.Errorf("no release owed on site %q", e.Site)
		}
		delete(j.PendingRelease, e.Site)
		return nil
	case EvSite:
		return applySite(j, e)
	case EvExpired:
		if j.State != wire.JobReserved {
			return fmt.Errorf("only a reserved job can expire")
		}
		j.State, j.Message = wire.JobExpired, e.Message
		owe(j, e.Release, e.ReleaseAfter)
		return nil
	case EvRepaired:
		return applyRepair(j, e)
	case EvDispatched:
		return applyDispatched(j, e)
	case EvConcluded:
		return applyConcluded(j, e)
	case EvStopped:
		return applyStopped(j, e)
	}
	return fmt.Errorf("unknown event kind")
}

func applyCancel(j *Job, e Event) error {
	if !j.Active() {
		return fmt.Errorf("job is not active")
	}
	if j.State == wire.JobCommitting {
		return fmt.Errorf("a commit is in progress")
	}
	if j.State == wire.JobReserved {
		j.Cost = 0 // refunded
	}
	if j.State == wire.JobDispatched || j.State == wire.JobRunning {
		j.Cost = e.Cost // the time held until the cancel (see Charge)
	}
	oweStop(j, e.Stop, e.Time)
	j.State, j.Message = wire.JobCancelled, e.Message
	owe(j, e.Release, e.ReleaseAfter)
	return nil
}

func applyIntent(j *Job, e Event) error {
	if j.State != wire.JobWaiting {
		return fmt.Errorf("only a waiting job can be committed")
	}
	if e.Alloc == nil || !e.Alloc.Placed() {
		return fmt.Errorf("intent without a placed allocation")
	}
	a := *e.Alloc
	j.State, j.Alloc, j.Revisions = wire.JobCommitting, &a, e.Revisions
	j.Attempts++
	j.Message = ""
	return nil
}

func applyOutcome(j *Job, e Event) error {
	if j.State != wire.JobCommitting {
		return fmt.Errorf("no commit in progress")
	}
	if e.OK {
		j.State, j.Reservations, j.Cost = wire.JobReserved, e.Reservations, e.Cost
		j.Message = e.Message
		initParts(j)
		return nil
	}
	j.State, j.Alloc, j.Revisions, j.Reservations = wire.JobWaiting, nil, nil, nil
	j.Message = e.Message
	owe(j, e.Release, e.ReleaseAfter)
	return nil
}

func applySite(j *Job, e Event) error {
	if ok, err := applyNotice(j, e); ok {
		return err
	}
	if j.Dispatched() {
		return applyPart(j, e)
	}
	if j.State != wire.JobReserved && j.State != wire.JobRunning {
		return fmt.Errorf("job holds no reservation")
	}
	if j.SiteStates == nil {
		j.SiteStates = map[string]string{}
	}
	j.SiteStates[e.Site] = e.State
	if e.State == SiteStarted && j.Started == 0 {
		j.Started = e.Time
	}
	j.State = jobStateFromSites(j)
	if j.State == wire.JobFinished || j.State == wire.JobFailed {
		// over: what is left of the reservations (the slack, or the rest
		// of a job that ended early) goes back to the sites
		if e.State == SiteFailed && e.Message != "" {
			j.Message = e.Site + ": " + e.Message
		}
		owe(j, reservedSitesAfter(j, e.Time), e.Time)
	}
	return nil
}

// reservedSitesAfter lists, once each, the sites where one of j's
// reservations lasts past t.
func reservedSitesAfter(j *Job, t int64) []string {
	var out []string
	for _, r := range j.Reservations {
		if r.End > t && !slices.Contains(out, r.Site) {
			out = append(out, r.Site)
		}
	}
	return out
}

// jobStateFromSites: failed if any part failed, finished when every part
// finished, running once any part started.
func jobStateFromSites(j *Job) string {
	sites := allocSites(j)
	finished := 0
	for _, s := range sites {
		switch j.SiteStates[s] {
		case SiteFailed:
			return wire.JobFailed
		case SiteFinished:
			finished++
		}
	}
	if len(sites) > 0 && finished == len(sites) {
		return wire.JobFinished
	}
	return wire.JobRunning
}

func allocSites(j *Job) []string {
	if j.Alloc == nil {
		return nil
	}
	return j.Alloc.Sites()
}

func applyRepair(j *Job, e Event) error {
	if !j.Holds() || j.State == wire.JobCommitting {
		return fmt.Errorf("job holds no reservation")
	}
	var keep []wire.Reservation
	for _, r := range j.Reservations {
		if r.Site != e.Site {
			keep = append(keep, r)
		}
	}
	j.Reservations = append(keep, e.Reservations...)
	return nil
}

func owe(j *Job, sites []string, after int64) {
	if len(sites) == 0 {
		return
	}
	if j.PendingRelease == nil {
		j.PendingRelease = map[string]int64{}
	}
	for _, s := range sites {
		j.PendingRelease[s] = after
	}
}

// OwedReleases lists (job, site) pairs whose release is due at now.
func (s *State) OwedReleases(now int64) []Owed {
	return s.owed(now, func(j *Job) map[string]int64 { return j.PendingRelease })
}

// owed lists the (job, site) pairs of due's map that are due at now, in
// job then site order.
func (s *State) owed(now int64, due func(*Job) map[string]int64) []Owed {
	var out []Owed
	for _, j := range s.order {
		for site, after := range due(j) {
			if now >= after {
				out = append(out, Owed{Job: j.Req.ID, Site: site})
			}
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Job != out[b].Job {
			return out[a].Job < out[b].Job
		}
		return out[a].Site < out[b].Site
	})
	return out
}

// Owed is a release the broker still has to make.
type Owed struct{ Job, Site string }

// Holds returns the allocations that hold slots (committing, reserved,
// running jobs) with the revisions they were planned on.
func (s *State) Holds() []Hold {
	var out []Hold
	for _, j := range s.order {
		if j.Holds() {
			out = append(out, j.Hold())
		}
	}
	return out
}

// Hold is an allocation that keeps its slots.
type Hold struct {
	Alloc     forecast.Allocation
	Revisions map[string]uint64
	// Ends are, per site, where its reservations end past Alloc.End: a
	// site extends a reservation by its slack (docs/agent.md), and until
	// its next forecast shows that, only this keeps the slack from being
	// planned for another job (which the site would refuse as stale).
	Ends map[string]int64
}

// Hold is j's allocation as a hold (j must have one), with the ends of
// its reservations past the allocation's end.
func (j *Job) Hold() Hold {
	h := Hold{Alloc: *j.Alloc, Revisions: j.Revisions}
	for _, r := range j.Reservations {
		if r.End > max(h.Alloc.End, h.Ends[r.Site]) {
			if h.Ends == nil {
				h.Ends = map[string]int64{}
			}
			h.Ends[r.Site] = r.End
		}
	}
	return h
}
