package web

import (
	"strings"

	"lookahead/broker"
	"lookahead/wire"
)

// SiteView is one row of the Sites view.
type SiteView struct {
	wire.SiteStatus
	// State is fresh, stale, offline or excluded; Reason says why a site
	// is not fresh.
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	// ForecastAge is now minus the forecast's generation time; HeartbeatAge
	// is now minus the last time the site proved its forecast current.
	ForecastAge  int64    `json:"forecast_age"`
	HeartbeatAge int64    `json:"heartbeat_age"`
	Unmodelled   []string `json:"unmodelled"`
}

// ViewSites joins the sites endpoint's summaries with what only the
// forecasts hold (offline, the unmodelled policy settings).
func ViewSites(rep wire.SitesReply, held []broker.Site) []SiteView {
	by := make(map[string]broker.Site, len(held))
	for _, s := range held {
		by[s.Name] = s
	}
	out := make([]SiteView, 0, len(rep.Sites))
	for _, st := range rep.Sites {
		s := by[st.Site]
		v := SiteView{SiteStatus: st, ForecastAge: rep.Now - st.Generated, HeartbeatAge: st.Age,
			Unmodelled: append([]string{}, s.Forecast.Unmodelled...), State: "fresh"}
		switch {
		case st.Excluded:
			v.State, v.Reason = "excluded", st.Problem
		case s.Offline:
			v.State, v.Reason = "offline", st.Problem // the agent stopped, or cannot forecast: why
			if v.Reason == "" {
				v.Reason = "its agent said it stopped; out of planning until its next forecast"
			}
		case st.Stale:
			v.State, v.Reason = "stale", "silent longer than the site TTL"
			if st.Problem != "" {
				v.Reason += "; last refusal: " + st.Problem
			}
		default:
			v.Reason = st.Problem
		}
		out = append(out, v)
	}
	return out
}

// AuditView is the latest audit records per origin (a site, or
// "broker") and the repair log.
type AuditView struct {
	Origins map[string][]wire.AuditRecord `json:"origins"`
	Repairs []wire.AuditRecord            `json:"repairs"`
	Read    int                           `json:"read"`
}

// ViewAudit keeps, newest first, the last perOrigin records of each
// origin, and every repair record among recs (oldest first in recs): the
// broker's audits run with repair and what a repair did.
func ViewAudit(recs []wire.AuditRecord, perOrigin int) AuditView {
	v := AuditView{Origins: map[string][]wire.AuditRecord{}, Repairs: []wire.AuditRecord{}, Read: len(recs)}
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		if len(v.Origins[r.Origin]) < perOrigin {
			v.Origins[r.Origin] = append(v.Origins[r.Origin], r)
		}
		if isRepair(r) {
			v.Repairs = append(v.Repairs, r)
		}
	}
	return v
}

func isRepair(r wire.AuditRecord) bool {
	return (r.Action == "audit" && strings.Contains(r.Message, "repair=true")) ||
		strings.Contains(r.Message, "audit repair") || strings.Contains(r.Actor, "(audit repair)")
}
