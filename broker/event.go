package broker

import (
	"lookahead/forecast"
	"lookahead/wire"
)

// Event kinds: every change of the grid queue is one of these, appended to
// the job stream before it takes effect.
const (
	EvSubmitted = "submitted" // Request, RequestID, Actor
	EvCancelled = "cancelled" // Actor; Release lists sites owing a release
	EvIntent    = "intent"    // Alloc, Revisions: reserve requests are about to go out
	EvOutcome   = "outcome"   // OK + Reservations + Cost, or !OK + Release
	EvReleased  = "released"  // Site: a release owed there was done
	EvSite      = "site"      // Site reported State (started, finished, failed)
	EvExpired   = "expired"   // reserved job never started; Release lists sites
	EvRepaired  = "repaired"  // Site: Reservations replace the job's ones there
)

// Site-reported states of a grid job's part (wire.JobEvent.State).
const (
	SiteStarted  = "started"
	SiteFinished = "finished"
	SiteFailed   = "failed"
)

// Event is one durable change of the grid queue. Time is when it happened
// (the broker's clock, Unix seconds).
type Event struct {
	Kind         string               `json:"kind"`
	Time         int64                `json:"time"`
	Job          string               `json:"job"`
	Request      *forecast.JobRequest `json:"request,omitempty"`
	RequestID    string               `json:"request_id,omitempty"`
	Actor        string               `json:"actor,omitempty"`
	Alloc        *forecast.Allocation `json:"alloc,omitempty"`
	Revisions    map[string]uint64    `json:"revisions,omitempty"`
	OK           bool                 `json:"ok,omitempty"`
	Reservations []wire.Reservation   `json:"reservations,omitempty"`
	Cost         float64              `json:"cost,omitempty"`
	Release      []string             `json:"release,omitempty"`
	// ReleaseAfter delays the owed releases until this time (a recovered
	// commit waits out the reserve deadline first).
	ReleaseAfter int64  `json:"release_after,omitempty"`
	Site         string `json:"site,omitempty"`
	State        string `json:"state,omitempty"`
	Message      string `json:"message,omitempty"`
}
