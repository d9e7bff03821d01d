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

	// Dispatch of jobs submitted with a script (see lifecycle.go).
	EvDispatched = "dispatched" // Site, Part: the site submitted the part (or State failed: refused)
	EvConcluded  = "concluded"  // State finished/failed, Cost (final charge), Stop and Release sites
	EvStopped    = "stopped"    // Site: a stop (qdel of the job's parts) owed there was done
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
	// Script is a submitted job's script (dispatched by the broker).
	Script []byte `json:"script,omitempty"`
	// Part is what a site said of the job's part there (dispatched, site).
	Part *wire.PartStatus `json:"part,omitempty"`
	// Stop lists sites owing a stop: the job's parts there are deleted.
	Stop []string `json:"stop,omitempty"`
}
