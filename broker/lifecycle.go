package broker

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"lookahead/forecast"
	"lookahead/internal/durfmt"
	"lookahead/wire"
)

// A grid job submitted with a script runs without its user: once reserved,
// the broker dispatches one part per site into the reservation and follows
// the parts to their end.
//
//	reserved ─(every part submitted)→ dispatched ─(every part started)→ running
//	   └──────────── any part refused, failed, late or lost ─────────────→ failed
//	                                   every part exited 0 → finished
//
// The pure decisions are here; broker/daemon sends the requests.

// PartsOf lists an allocation's parts, one per site in the allocation's
// site order (the part index is the position), with the site's nodes.
func PartsOf(a forecast.Allocation) []wire.PartSpec {
	var out []wire.PartSpec
	index := map[string]int{}
	for _, p := range a.Parts {
		i, ok := index[p.Site]
		if !ok {
			i = len(out)
			index[p.Site] = i
			out = append(out, wire.PartSpec{Site: p.Site})
		}
		out[i].Nodes = addNode(out[i].Nodes, p.Node, p.Procs)
	}
	return out
}

// Dispatches builds one dispatch request per site of a reserved job with a
// script: the part's index and every part (LOOKAHEAD_PARTS), the
// reservation's start and length as the walltime. Sites whose part is no
// longer pending are left out.
func Dispatches(j *Job, actor string) []wire.DispatchRequest {
	if j.Alloc == nil || j.Script == nil {
		return nil
	}
	parts := PartsOf(*j.Alloc)
	var out []wire.DispatchRequest
	for i, p := range parts {
		if ps := j.Parts[p.Site]; ps != nil && ps.State != wire.PartPending {
			continue
		}
		out = append(out, wire.DispatchRequest{Type: wire.TypeDispatch, Job: j.Req.ID, Site: p.Site, Part: i,
			Parts: parts, Start: j.Alloc.Start, Walltime: j.Alloc.End - j.Alloc.Start,
			User: j.Req.User, Account: j.Req.Account, Script: j.Script, RequestedBy: actor})
	}
	return out
}

// initParts gives a job with a script one pending part per site once it
// is reserved.
func initParts(j *Job) {
	if j.Script == nil || j.Alloc == nil {
		return
	}
	j.Parts = map[string]*wire.PartStatus{}
	for i, p := range PartsOf(*j.Alloc) {
		j.Parts[p.Site] = &wire.PartStatus{Part: i, Site: p.Site, State: wire.PartPending}
	}
}

// Dispatched reports whether the job's parts are dispatched by the broker
// (it was submitted with a script).
func (j *Job) Dispatched() bool { return j.Parts != nil }

// PartList is the job's parts in part order.
func (j *Job) PartList() []wire.PartStatus {
	out := make([]wire.PartStatus, 0, len(j.Parts))
	for _, p := range j.Parts {
		out = append(out, *p)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Part < out[b].Part })
	return out
}

func terminal(state string) bool {
	return state == wire.PartFinished || state == wire.PartFailed || state == wire.PartDeleted
}

// applyDispatched records a site's answer to a dispatch: submitted (Part
// carries the local id, user and paths) or refused (State failed).
func applyDispatched(j *Job, e Event) error {
	p, err := livePart(j, e.Site)
	if err != nil {
		return err
	}
	if e.Part == nil {
		return fmt.Errorf("dispatched event without a part")
	}
	if p.State != wire.PartPending {
		// A retry's answer, or the part was seen running first: the state
		// stays, but what only the answer tells (the local user and the
		// output paths) is kept.
		if e.State != wire.PartFailed {
			mergePart(p, wire.PartStatus{LocalID: e.Part.LocalID, LocalUser: e.Part.LocalUser, Output: e.Part.Output, Error: e.Part.Error})
		}
		return nil
	}
	p.LocalID, p.LocalUser, p.Output, p.Error = e.Part.LocalID, e.Part.LocalUser, e.Part.Output, e.Part.Error
	p.State, p.Message = wire.PartDispatched, e.Message
	if e.State == wire.PartFailed {
		p.State = wire.PartFailed
	}
	j.State = stateFromParts(j)
	return nil
}

func livePart(j *Job, site string) (*wire.PartStatus, error) {
	switch j.State {
	case wire.JobReserved, wire.JobDispatched, wire.JobRunning:
	default:
		return nil, fmt.Errorf("job is not reserved or running")
	}
	p := j.Parts[site]
	if p == nil {
		return nil, fmt.Errorf("no part on site %q", site)
	}
	return p, nil
}

// applyPart records what a site saw of a dispatched part: started, or
// ended (finished with its exit status; failed). Reports about a part that
// already ended change nothing.
func applyPart(j *Job, e Event) error {
	p, err := livePart(j, e.Site)
	if err != nil {
		return err
	}
	if terminal(p.State) {
		return nil
	}
	if d := e.Part; d != nil {
		mergePart(p, *d)
	}
	switch e.State {
	case SiteStarted:
		p.State = wire.PartStarted
		if p.Start == 0 {
			p.Start = e.Time
		}
	case SiteFinished, SiteFailed:
		p.State = wire.PartFinished
		if e.State == SiteFailed || p.ExitStatus == nil || *p.ExitStatus != 0 {
			p.State = wire.PartFailed
		}
		if p.End == 0 {
			p.End = e.Time
		}
	default:
		return fmt.Errorf("unknown part state %q", e.State)
	}
	if e.Message != "" {
		p.Message = e.Message
	}
	j.State = stateFromParts(j)
	return nil
}

func mergePart(p *wire.PartStatus, d wire.PartStatus) {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&p.LocalID, d.LocalID)
	set(&p.LocalUser, d.LocalUser)
	set(&p.Output, d.Output)
	set(&p.Error, d.Error)
	if d.Start != 0 {
		p.Start = d.Start
	}
	if d.End != 0 {
		p.End = d.End
	}
	if d.ExitStatus != nil {
		v := *d.ExitStatus
		p.ExitStatus = &v
	}
}

// stateFromParts: reserved until every part is submitted, dispatched until
// every part started, then running. Ends are decided by Conclude.
func stateFromParts(j *Job) string {
	submitted, started := 0, 0
	for _, p := range j.Parts {
		switch p.State {
		case wire.PartDispatched:
			submitted++
		case wire.PartStarted, wire.PartFinished, wire.PartFailed, wire.PartDeleted:
			submitted++
			started++
		}
	}
	switch {
	case started == len(j.Parts):
		return wire.JobRunning
	case submitted == len(j.Parts):
		return wire.JobDispatched
	}
	return wire.JobReserved
}

// Conclude decides whether a dispatched job is over at now: finished when
// every part exited 0; failed when a part was refused, failed, did not
// start within grace of the reservation start, or ran past the
// reservation's end by more than grace without an end reported. The event
// (Kind EvConcluded) owes a stop on every site whose part may still run,
// a release on every site, and sets the final charge (see Charge).
func Conclude(j *Job, now, grace int64) (Event, bool) {
	if !j.Dispatched() || j.Alloc == nil || !slices.Contains([]string{wire.JobReserved, wire.JobDispatched, wire.JobRunning}, j.State) {
		return Event{}, false
	}
	state, why, siteFault := verdict(j, now, grace)
	if state == "" {
		return Event{}, false
	}
	e := Event{Kind: EvConcluded, Time: now, Job: j.Req.ID, State: state, Message: why,
		Release: j.Alloc.Sites(), Cost: Charge(j, now, siteFault)}
	for _, p := range j.PartList() {
		if !terminal(p.State) {
			e.Stop = append(e.Stop, p.Site)
		}
	}
	return e, true
}

// verdict is Conclude's decision: the end state ("" while the job goes
// on), why, and whether the site side is to blame (refused dispatch,
// late start, lost part: the user pays nothing).
func verdict(j *Job, now, grace int64) (state, why string, siteFault bool) {
	parts := j.PartList()
	finished := 0
	for _, p := range parts {
		switch {
		case p.State == wire.PartFailed && p.LocalID == "":
			return wire.JobFailed, fmt.Sprintf("part %d on %s was not dispatched: %s", p.Part, p.Site, p.Message), true
		case p.State == wire.PartFailed:
			return wire.JobFailed, fmt.Sprintf("part %d on %s (%s) failed%s", p.Part, p.Site, p.LocalID, exitNote(p)), false
		case p.State == wire.PartFinished:
			finished++
		}
	}
	if finished == len(parts) {
		return wire.JobFinished, fmt.Sprintf("all %d parts exited 0", len(parts)), false
	}
	if late := notStarted(parts, j.Alloc.Start, now, grace); len(late) > 0 {
		return wire.JobFailed, fmt.Sprintf("%s did not start within %s of the reservation start", strings.Join(late, ", "), durfmt.Seconds(grace)), true
	}
	if now >= j.Alloc.End+grace {
		return wire.JobFailed, fmt.Sprintf("no end reported for %s by %s after the reservation end", strings.Join(running(parts), ", "), durfmt.Seconds(grace)), true
	}
	return "", "", false
}

func exitNote(p wire.PartStatus) string {
	if p.ExitStatus == nil {
		note := " (deleted or aborted, no exit status)"
		if p.Message != "" {
			note = " (" + p.Message + ")"
		}
		return note
	}
	return fmt.Sprintf(" with exit status %d", *p.ExitStatus)
}

// notStarted lists the parts that have not started grace after their
// start: the reservation start, or, when a foreign job held the part's
// processors past it, when that job left at the latest (BlockedUntil).
func notStarted(parts []wire.PartStatus, start, now, grace int64) []string {
	var out []string
	for _, p := range parts {
		if startedPart(p) || now < max(start, p.BlockedUntil)+grace {
			continue
		}
		what := fmt.Sprintf("part %d on %s", p.Part, p.Site)
		if p.BlockedUntil > start {
			what += fmt.Sprintf(" (a foreign job held its processors until %d)", p.BlockedUntil)
		}
		out = append(out, what)
	}
	return out
}

func running(parts []wire.PartStatus) []string {
	var out []string
	for _, p := range parts {
		if !terminal(p.State) {
			out = append(out, fmt.Sprintf("part %d on %s", p.Part, p.Site))
		}
	}
	return out
}

// Charge is what a reserved job pays when it ends at end: the committed
// cost for the share of the reservation it held, (end − start) / (reserved
// end − start), clamped to [0, 1]. A job that ends early (or is cancelled
// while it runs) releases the rest and does not pay for it; a job cancelled
// before its start pays nothing. When the failure is on the site side
// (siteFault: a refused dispatch, a part that did not start in time, a
// part lost) the user pays nothing.
func Charge(j *Job, end int64, siteFault bool) float64 {
	if siteFault || j.Alloc == nil {
		return 0
	}
	return forecast.Charged(j.Cost, j.Alloc.Start, j.Alloc.End, end)
}

// applyConcluded ends a dispatched job: its state, the final charge, and
// the stops and releases owed.
func applyConcluded(j *Job, e Event) error {
	if !j.Dispatched() || !j.Holds() || j.State == wire.JobCommitting {
		return fmt.Errorf("job is not a dispatched job in progress")
	}
	if e.State != wire.JobFinished && e.State != wire.JobFailed {
		return fmt.Errorf("concluded with state %q", e.State)
	}
	j.State, j.Message, j.Cost = e.State, e.Message, e.Cost
	oweStop(j, e.Stop, e.Time)
	owe(j, e.Release, e.ReleaseAfter)
	return nil
}

func oweStop(j *Job, sites []string, at int64) {
	if len(sites) == 0 {
		return
	}
	if j.PendingStop == nil {
		j.PendingStop = map[string]int64{}
	}
	for _, s := range sites {
		j.PendingStop[s] = at
		if p := j.Parts[s]; p != nil && !terminal(p.State) {
			p.State = wire.PartDeleted
			if p.End == 0 && p.Start != 0 {
				p.End = at
			}
		}
	}
}

// applyStopped records that a site deleted the job's parts (or had none).
func applyStopped(j *Job, e Event) error {
	if _, owed := j.PendingStop[e.Site]; !owed {
		return fmt.Errorf("no stop owed on site %q", e.Site)
	}
	delete(j.PendingStop, e.Site)
	return nil
}

// cancelDispatched fills a cancel of a dispatched job: stops on every site
// whose part may run, releases everywhere, and the charge for the time
// held until now.
func cancelDispatched(j *Job, e *Event) {
	e.Release = allocSites(j)
	e.Cost = Charge(j, e.Time, false)
	for _, p := range j.PartList() {
		if !terminal(p.State) {
			e.Stop = append(e.Stop, p.Site)
		}
	}
}

// OwedStops lists (job, site) pairs whose stop is due at now.
func (s *State) OwedStops(now int64) []Owed {
	return s.owed(now, func(j *Job) map[string]int64 { return j.PendingStop })
}
