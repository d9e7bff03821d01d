package broker

import (
	"strings"
	"testing"

	"lookahead/forecast"
	"lookahead/wire"
)

const skew = 60

func fc(seq uint64, generated int64) *forecast.Forecast {
	return &forecast.Forecast{Version: 1, Site: "alpha", Seq: seq, Generated: generated, Horizon: generated + 3600}
}

func take(t *testing.T, cur *Site, f *forecast.Forecast, received int64, want Verdict) Site {
	t.Helper()
	s, v := TakeForecast(cur, "alpha", f, received, skew)
	if v != want {
		t.Fatalf("forecast seq %d generated %d: verdict %d, want %d (%s)", f.Seq, f.Generated, v, want, s.Problem)
	}
	return s
}

func hb(seq uint64, generated int64) wire.Heartbeat {
	return wire.Heartbeat{Type: wire.TypeHeartbeat, Site: "alpha", Seq: seq, Generated: generated}
}

// Issue 12.3: an agent restarted 21 minutes later starts again at seq 1;
// its forecast replaces the old incarnation's, and the old revision's
// heartbeats no longer exist to keep the old forecast alive.
func TestNewIncarnationReplacesOldForecast(t *testing.T) {
	s := take(t, nil, fc(57, 1000), 1000, Taken)
	s = take(t, &s, fc(1, 2260), 2261, Taken)
	if s.Forecast.Seq != 1 || s.LastSeen != 2261 {
		t.Fatalf("site %+v, want the new incarnation's seq 1 seen at 2261", s)
	}
	// The old incarnation's last forecast, delivered late through the
	// bucket, changes nothing.
	take(t, &s, fc(57, 1000), 2262, Older)
	// A heartbeat naming revision 1 keeps it fresh; one naming 57 does not.
	s2, v := TakeHeartbeat(&s, "alpha", hb(57, 2300), 2300, skew)
	if v != Mismatch || s2.LastSeen != 2261 || !strings.Contains(s2.Problem, "revision 57") {
		t.Fatalf("heartbeat of another revision: %d %+v", v, s2)
	}
	s3, v := TakeHeartbeat(&s, "alpha", hb(1, 2320), 2321, skew)
	if v != Taken || s3.LastSeen != 2321 {
		t.Fatalf("heartbeat of the revision in use: %d %+v", v, s3)
	}
}

// Issue 15.7: a huge seq pins nothing; a far-future generation time is
// refused and keeps nobody fresh; freshness is the broker's receive time.
func TestFreshnessIsTheBrokersReceiveTime(t *testing.T) {
	s := take(t, nil, fc(1<<62, 1000), 1000, Taken)
	s = take(t, &s, fc(2, 1060), 1060, Taken)
	if s.Forecast.Seq != 2 {
		t.Fatalf("a huge seq pinned the forecast: %+v", s.Forecast)
	}
	far := int64(4_000_000_000)
	if r := take(t, &s, fc(3, far), 1100, Refused); !r.Excluded || !strings.Contains(r.Problem, "ahead of the broker's clock") {
		t.Fatalf("far-future forecast: %+v", r)
	}
	r, v := TakeHeartbeat(&s, "alpha", hb(2, far), 1100, skew)
	if v != Refused || r.LastSeen != 1060 || r.Excluded {
		t.Fatalf("far-future heartbeat: %d %+v", v, r)
	}
	if !r.Stale(1060+301, 300) {
		t.Fatal("a far-future heartbeat kept the site fresh")
	}
	// Within the skew a site's clock may lead, but it is seen when the
	// broker received the message, not when the site says.
	r, v = TakeHeartbeat(&s, "alpha", hb(2, 1150), 1100, skew)
	if v != Taken || r.LastSeen != 1100 || r.Offset != 50 {
		t.Fatalf("heartbeat 50 s ahead: %d %+v", v, r)
	}
	// A stored forecast read long after it was made is as old as it says.
	old := take(t, nil, fc(9, 1000), 5000, Taken)
	if old.LastSeen != 1000+skew || !old.Stale(5000, 300) {
		t.Fatalf("forecast generated at 1000 received at 5000: seen %d", old.LastSeen)
	}
}

func TestRefusedForecastExcludesUntilAGoodOne(t *testing.T) {
	s := take(t, nil, fc(5, 1000), 1000, Taken)
	s = Refuse(&s, "alpha", "nodes[0].procs: 1000000000000000000, at most 16777216 supported", true)
	fresh, stale, excluded := Fresh([]Site{s, {Name: "beta", Forecast: forecast.Forecast{Site: "beta"}, LastSeen: 1000}}, 1001, 300)
	if len(fresh) != 1 || fresh[0].Site != "beta" || len(stale) != 0 || len(excluded) != 1 || excluded[0] != "alpha" {
		t.Fatalf("fresh %v stale %v excluded %v", fresh, stale, excluded)
	}
	st := SiteStatuses([]Site{s}, 1001, 300)[0]
	if !st.Excluded || !st.Stale || !strings.Contains(st.Problem, "16777216") {
		t.Fatalf("status %+v", st)
	}
	// Heartbeats of the refused revision do not bring it back; a late
	// copy of the forecast before it does not either.
	if _, v := TakeHeartbeat(&s, "alpha", hb(5, 1010), 1010, skew); v == Taken {
		t.Fatal("heartbeat revived an excluded site")
	}
	take(t, &s, fc(5, 1000), 1020, Older)
	good := take(t, &s, fc(1, 1030), 1030, Taken)
	if good.Excluded || good.Problem != "" {
		t.Fatalf("good forecast left the site excluded: %+v", good)
	}
}

func TestRefusalIsClipped(t *testing.T) {
	s := Refuse(nil, "alpha", strings.Repeat("x", 1<<20), true)
	if len(s.Problem) > 400 || s.Name != "alpha" {
		t.Fatalf("problem of %d bytes", len(s.Problem))
	}
}

// A stopping agent's offline heartbeat takes its site out of planning at
// once, a later plain heartbeat does not bring it back, and the next
// forecast (the agent started again) does.
func TestOfflineHeartbeatTakesTheSiteOut(t *testing.T) {
	s := take(t, nil, fc(3, 1000), 1000, Taken)
	off := hb(3, 1010)
	off.Offline = true
	s, v := TakeHeartbeat(&s, "alpha", off, 1010, skew)
	if v != Taken || !s.Stale(1011, 300) || !strings.Contains(s.Problem, "agent stopped") {
		t.Fatalf("after the offline notice: %d %+v", v, s)
	}
	if s2, _ := TakeHeartbeat(&s, "alpha", hb(3, 1020), 1020, skew); !s2.Stale(1021, 300) {
		t.Fatalf("a heartbeat brought an offline site back: %+v", s2)
	}
	old := hb(2, 1010)
	old.Offline = true
	if s3, v := TakeHeartbeat(&s, "alpha", old, 1010, skew); v != Mismatch {
		t.Fatalf("an offline notice of another revision: %d %+v", v, s3)
	}
	s = take(t, &s, fc(1, 1100), 1100, Taken)
	if s.Stale(1101, 300) || s.Problem != "" {
		t.Fatalf("a new forecast did not bring the site back: %+v", s)
	}
}

// An agent that cannot build a forecast (its scheduler does not answer)
// says so in a heartbeat: the site leaves planning at once with the
// agent's reason as its problem, until its next forecast.
func TestProblemHeartbeatTakesTheSiteOut(t *testing.T) {
	s := take(t, nil, fc(3, 1000), 1000, Taken)
	down := hb(3, 1010)
	down.Problem = "slurm: slurmctld does not answer (scontrol ping: Slurmctld(primary) at vm is DOWN)"
	s, v := TakeHeartbeat(&s, "alpha", down, 1010, skew)
	if v != Taken || !s.Stale(1011, 300) || !strings.Contains(s.Problem, "cannot forecast") || !strings.Contains(s.Problem, "is DOWN") {
		t.Fatalf("after the problem: %d %+v", v, s)
	}
	fresh, _, _ := Fresh([]Site{s}, 1011, 300)
	if st := SiteStatuses([]Site{s}, 1011, 300)[0]; len(fresh) != 0 || !st.Stale || !strings.Contains(st.Problem, "is DOWN") {
		t.Fatalf("planned on, or shown without its problem: %+v", st)
	}
	s = take(t, &s, fc(4, 1100), 1100, Taken)
	if s.Stale(1101, 300) || s.Problem != "" {
		t.Fatalf("the next forecast did not bring the site back: %+v", s)
	}
}

// docs/formats.md, "An empty forecast means no capacity": a site whose
// nodes are all down publishes a forecast with no slots; it replaces the
// last one and the site stays fresh, offering nothing.
func TestEmptyForecastIsAFreshSiteWithNoCapacity(t *testing.T) {
	full := fc(1, 1000)
	full.Nodes = []forecast.Node{{Name: "vm", Procs: 8}}
	full.Slots = []forecast.Slot{{Node: "vm", Procs: 8, Start: 1000, End: 4600, Price: 1}}
	s := take(t, nil, full, 1000, Taken)
	empty := fc(2, 1060)
	empty.Nodes = []forecast.Node{{Name: "vm", Procs: 8}}
	s = take(t, &s, empty, 1060, Taken)
	if s.Forecast.Seq != 2 || len(s.Forecast.Slots) != 0 || s.LastSeen != 1060 || s.Problem != "" {
		t.Fatalf("site %+v, want the empty forecast in use, fresh at 1060", s)
	}
}
