package broker

import (
	"fmt"

	"lookahead/wire"
)

// Site-reported states that do not change a part's progress.
const (
	// SiteLost: the site's scheduler lost the job's reservation (a Maui
	// restart) and refused to re-create it.
	SiteLost = "lost"
	// SiteForeign: a local job that is not the job's part runs in its
	// reservation there (it may take the part's processors).
	SiteForeign = "foreign"
	// SiteRebound: the site re-created the job's reservations after a
	// scheduler restart bound to another account than its parts were
	// told (the old one is taken); the event's Reservations are the ones
	// there now.
	SiteRebound = "rebound"
)

// applyNotice applies a lost, foreign or rebound report; ok is false for
// other states. A rebound reservation replaces the job's ones on that site
// (status then gives the submit options that get in) and is told to the
// grid user (the job's message: a part already queued with the old
// options no longer gets in). A foreign job is told to the grid user (the job's message) and
// is never the part; when it holds the processors of a dispatched part
// that has not started, until when is kept on the part (BlockedUntil):
// the part's start grace counts from then (lifecycle.go). A lost reservation sends a
// job that has not started back to waiting, owing a release on every site
// of its allocation, so the next cycle plans it again; a job whose part
// already runs keeps going (the reservation only protected its start).
func applyNotice(j *Job, e Event) (bool, error) {
	switch e.State {
	case SiteForeign:
		if !j.Holds() {
			return true, fmt.Errorf("job holds no reservation")
		}
		j.Message = e.Site + ": " + e.Message
		if p := j.Parts[e.Site]; p != nil && e.Part != nil && !startedPart(*p) {
			p.BlockedUntil = max(p.BlockedUntil, e.Part.BlockedUntil)
		}
		return true, nil
	case SiteLost:
		return true, applyLost(j, e)
	case SiteRebound:
		if len(e.Reservations) > 0 {
			if err := applyRepair(j, e); err != nil {
				return true, err
			}
		} else if !j.Holds() {
			return true, fmt.Errorf("job holds no reservation")
		}
		j.Message = e.Site + ": " + e.Message
		return true, nil
	}
	return false, nil
}

func applyLost(j *Job, e Event) error {
	if !j.Holds() || j.State == wire.JobCommitting {
		return fmt.Errorf("job holds no reservation")
	}
	if j.State != wire.JobReserved {
		j.Message = e.Site + ": " + e.Message
		return nil
	}
	owe(j, allocSites(j), e.Time)
	j.State, j.Alloc, j.Revisions, j.Reservations, j.SiteStates, j.Parts = wire.JobWaiting, nil, nil, nil, nil, nil
	j.Message = "planned again: reservation lost on " + e.Site + ": " + e.Message
	return nil
}

// startedPart reports whether a part has started (or ended).
func startedPart(p wire.PartStatus) bool {
	return p.State != wire.PartPending && p.State != wire.PartDispatched
}
