package web

import (
	"fmt"
	"strings"

	"lookahead/broker"
	"lookahead/broker/client"
	"lookahead/internal/durfmt"
	"lookahead/wire"
)

// SiteView is one row of the Sites view.
type SiteView struct {
	wire.SiteStatus
	// State is client.SiteState's (fresh, silent, excluded, offline,
	// stale); Reason says why a site is not fresh.
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	// ForecastAge is now minus the forecast's generation time; HeartbeatAge
	// is now minus the last time the site proved its forecast current.
	ForecastAge  int64    `json:"forecast_age"`
	HeartbeatAge int64    `json:"heartbeat_age"`
	Unmodelled   []string `json:"unmodelled"`
	// Parts is client.RunsParts's: whether the site's agent runs grid
	// jobs' parts (yes, no, ? not said), as `lookahead sites` PARTS.
	Parts string `json:"parts"`
}

// ViewSites joins the sites endpoint's summaries with what only the
// forecasts hold (the unmodelled policy settings).
func ViewSites(rep wire.SitesReply, held []broker.Site) []SiteView {
	by := make(map[string]broker.Site, len(held))
	for _, s := range held {
		by[s.Name] = s
	}
	out := make([]SiteView, 0, len(rep.Sites))
	for _, st := range rep.Sites {
		v := SiteView{SiteStatus: st, ForecastAge: rep.Now - st.Generated, HeartbeatAge: st.Age,
			Unmodelled: append([]string{}, by[st.Site].Forecast.Unmodelled...), State: client.SiteState(st), Parts: client.RunsParts(st)}
		v.Reason = siteReason(v.State, st, rep.Now)
		out = append(out, v)
	}
	return out
}

// siteReason says why a site in state is out of planning (or what its
// last refused message was).
func siteReason(state string, st wire.SiteStatus, now int64) string {
	switch state {
	case client.SiteSilent:
		why := st.Unanswered
		if st.UnansweredSince > 0 {
			why += fmt.Sprintf(" (for %s)", durfmt.Seconds(max(0, now-st.UnansweredSince)))
		}
		return why
	case client.SiteOffline:
		if st.Problem == "" {
			return "its agent said it stopped; out of planning until its next forecast"
		}
	case client.SiteStale:
		why := "silent longer than the site TTL"
		if st.Problem != "" {
			why += "; last refusal: " + st.Problem
		}
		return why
	}
	return st.Problem
}

// AuditView is the latest audit records per origin (a site, or
// "broker") and the repair log.
type AuditView struct {
	Origins map[string][]AuditLine `json:"origins"`
	Repairs []AuditLine            `json:"repairs"`
	Read    int                    `json:"read"`
}

// AuditLine is one audit record and its Tone (AuditTone).
type AuditLine struct {
	wire.AuditRecord
	Tone string `json:"tone"`
}

// ViewAudit keeps, newest first, the last perOrigin records of each
// origin, and every repair record among recs (oldest first in recs): the
// broker's audits run with repair and what a repair did.
func ViewAudit(recs []wire.AuditRecord, perOrigin int) AuditView {
	v := AuditView{Origins: map[string][]AuditLine{}, Repairs: []AuditLine{}, Read: len(recs)}
	for i := len(recs) - 1; i >= 0; i-- {
		r := AuditLine{recs[i], AuditTone(recs[i])}
		if len(v.Origins[r.Origin]) < perOrigin {
			v.Origins[r.Origin] = append(v.Origins[r.Origin], r)
		}
		if isRepair(r.AuditRecord) {
			v.Repairs = append(v.Repairs, r)
		}
	}
	return v
}

// The tones of an audit record: it went as asked (ok, a job finished);
// the machinery failed, a part failed, or the record's body disagrees
// with its subject; or an answer to note (a refusal with a stable code —
// stale, no capacity, over budget —, a cancel, an expiry, a finding).
const (
	ToneGood = "good"
	ToneBad  = "bad"
	ToneNote = "note"
)

// badCodes are the codes of a failure, not of a refusal.
var badCodes = map[string]bool{wire.CodeInternal: true, wire.CodeSchedulerEr: true, wire.JobFailed: true,
	wire.CodeFenced: true, wire.CodeForbidden: true, wire.CodeInvalid: true}

// AuditTone is how the Audit tab colours r.
func AuditTone(r wire.AuditRecord) string {
	switch {
	case r.Mismatch != "" || badCodes[r.Code]:
		return ToneBad
	case r.Code == wire.CodeOK || r.Code == wire.JobFinished:
		return ToneGood
	}
	return ToneNote
}

func isRepair(r wire.AuditRecord) bool {
	return (r.Action == "audit" && strings.Contains(r.Message, "repair=true")) ||
		strings.Contains(r.Message, "audit repair") || strings.Contains(r.Actor, "(audit repair)")
}
