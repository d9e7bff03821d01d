package broker

import (
	"fmt"
	"time"

	"lookahead/forecast"
	"lookahead/internal/durfmt"
	"lookahead/wire"
)

// Verdict is what a site's message did to the broker's record of it.
type Verdict int

const (
	// Taken: the forecast is the site's new one (or the heartbeat proved
	// the current one alive).
	Taken Verdict = iota
	// Older: an older forecast or heartbeat, delivered late or twice; it
	// changes nothing.
	Older
	// Mismatch: a heartbeat naming a revision the broker does not hold;
	// the site is not refreshed (its forecast may be missing).
	Mismatch
	// Refused: the message breaks a rule; Site.Problem says which.
	Refused
)

// A site's forecasts are ordered by generation time, then Seq: a new
// agent incarnation whose Seq restarted replaces the old one (its forecast
// is generated later), a huge Seq pins nothing, and a copy delivered late
// (the subject and the KV bucket both carry each forecast) is ignored.
func newer(f, cur *forecast.Forecast) bool {
	if f.Generated != cur.Generated {
		return f.Generated > cur.Generated
	}
	return f.Seq > cur.Seq
}

// seenAt is when a message generated at generated and received at
// received proves the site alive: the receive time, but no later than the
// generation time plus the accepted skew, so a stored or delayed message
// is as old as it says.
func seenAt(generated, received, maxSkew int64) int64 { return min(received, generated+maxSkew) }

// TakeForecast decides a valid forecast of site name received at received
// (broker clock). maxSkew bounds how far ahead of the broker's clock the
// site's may be. cur is the site's record so far (nil when new); the
// returned record replaces it.
func TakeForecast(cur *Site, name string, f *forecast.Forecast, received, maxSkew int64) (Site, Verdict) {
	if ahead := f.Generated - received; ahead > maxSkew {
		return Refuse(cur, name, fmt.Sprintf("forecast %d generated %s ahead of the broker's clock (at most %s accepted): check the site's clock",
			f.Seq, durfmt.Seconds(ahead), durfmt.Seconds(maxSkew)), true), Refused
	}
	if cur != nil && cur.Forecast.Site != "" && !newer(f, &cur.Forecast) {
		return *cur, Older
	}
	s := Site{Name: name, Forecast: *f, LastSeen: seenAt(f.Generated, received, maxSkew), Offset: f.Generated - received, OffsetKnown: true}
	if cur != nil { // a forecast proves nothing about answering requests
		s.Unanswered, s.UnansweredSince = cur.Unanswered, cur.UnansweredSince
	}
	return s, Taken
}

// TakeHeartbeat decides a heartbeat of site name: it refreshes the site
// only when it names the revision the broker plans on and is not older
// than that forecast. A site whose heartbeats name another revision goes
// stale unless the forecast they name arrives.
func TakeHeartbeat(cur *Site, name string, hb wire.Heartbeat, received, maxSkew int64) (Site, Verdict) {
	if ahead := hb.Generated - received; ahead > maxSkew {
		return Refuse(cur, name, fmt.Sprintf("heartbeat generated %s ahead of the broker's clock (at most %s accepted): check the site's clock",
			durfmt.Seconds(ahead), durfmt.Seconds(maxSkew)), false), Refused
	}
	if cur == nil || cur.Excluded || cur.Forecast.Site == "" {
		return orEmpty(cur, name), Older
	}
	s := *cur
	if hb.Seq != s.Forecast.Seq {
		s.Problem = fmt.Sprintf("heartbeat names revision %d, the broker holds %d: waiting for that forecast", hb.Seq, s.Forecast.Seq)
		return s, Mismatch
	}
	if hb.Generated < s.Forecast.Generated {
		return s, Older
	}
	if hb.Offline {
		s.Offline, s.Problem = true, fmt.Sprintf("the agent stopped (offline at %s): out of planning until its next forecast",
			time.Unix(hb.Generated, 0).UTC().Format(time.RFC3339))
		return s, Taken
	}
	if hb.Problem != "" {
		s.Offline, s.Problem = true, wire.Clip(fmt.Sprintf("the site cannot forecast (since %s): %s: out of planning until its next forecast",
			time.Unix(hb.Generated, 0).UTC().Format(time.RFC3339), hb.Problem), 300)
		return s, Taken
	}
	s.LastSeen = max(s.LastSeen, seenAt(hb.Generated, received, maxSkew))
	s.Offset, s.OffsetKnown, s.Problem = hb.Generated-received, true, ""
	return s, Taken
}

// Refuse records why a message of site name was refused. With exclude the
// site leaves planning until a good forecast arrives: its latest forecast
// is one the broker cannot use, so the one before no longer describes it.
func Refuse(cur *Site, name, problem string, exclude bool) Site {
	s := orEmpty(cur, name)
	s.Problem = wire.Clip(problem, 300)
	s.Excluded = s.Excluded || exclude
	return s
}

func orEmpty(cur *Site, name string) Site {
	if cur == nil {
		return Site{Name: name}
	}
	return *cur
}
