package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/wire"
)

func testConfig(site string) agent.Config {
	return agent.Config{Site: site, Debounce: 10 * time.Millisecond, Refresh: 2 * time.Minute, ForecastTTL: 5 * time.Minute}
}

func TestChangeProducesNewForecastInKV(t *testing.T) {
	fx := runSimAgent(t, testConfig("alpha"))
	f1 := waitForecast(t, fx.kv, "alpha", 1)
	if f1.Site != "alpha" || f1.Generated != t0 || len(f1.Nodes) != 4 || len(f1.Slots) == 0 {
		t.Fatalf("first forecast: site %s generated %d, %d nodes, %d slots", f1.Site, f1.Generated, len(f1.Nodes), len(f1.Slots))
	}
	// Job 3 arrives at t0+600 and backfills: the cluster changed.
	fx.clock.Set(t0 + 700)
	fx.agent.Notify("test")
	f2 := waitForecast(t, fx.kv, "alpha", 2)
	if f2.Generated != t0+700 {
		t.Fatalf("second forecast generated at %d, want %d", f2.Generated, t0+700)
	}
	if agent.Fingerprint(f1) == agent.Fingerprint(f2) {
		t.Fatal("the cluster changed but the forecast did not")
	}
	// The status is updated just after the KV put.
	for deadline := time.Now().Add(10 * time.Second); fx.agent.Status().Forecasts < 2 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if got := fx.agent.Status(); got.Revision != 2 || got.Forecasts != 2 {
		t.Fatalf("status %+v, want revision 2 after 2 forecasts", got)
	}
}

func TestUnchangedForecastSendsHeartbeat(t *testing.T) {
	fx := runSimAgent(t, testConfig("beta"))
	sub, err := fx.nc.SubscribeSync(wire.ForecastSubject("beta"))
	if err != nil {
		t.Fatal(err)
	}
	fx.nc.Flush()
	// Time passes, nothing starts or ends: same forecast, a heartbeat.
	fx.clock.Set(t0 + 60)
	fx.agent.Notify("test")
	msg := nextMsg(t, sub)
	// The first forecast is put in KV before it is published on the subject,
	// so it may reach this subscription; skip it, and only it.
	if msg.Header.Get(wire.HeaderType) == wire.TypeForecast {
		if f, err := wire.DecodeForecast(msg.Data); err != nil || f.Seq != 1 {
			t.Fatalf("forecast %+v (%v) where a heartbeat was due", f, err)
		}
		msg = nextMsg(t, sub)
	}
	if got := msg.Header.Get(wire.HeaderType); got != wire.TypeHeartbeat {
		t.Fatalf("message type %q, want heartbeat", got)
	}
	var hb wire.Heartbeat
	if err := json.Unmarshal(msg.Data, &hb); err != nil || hb.Seq != 1 || hb.Site != "beta" || hb.Generated != t0+60 {
		t.Fatalf("heartbeat %+v (%v), want seq 1 of beta at t0+60", hb, err)
	}
	// Half the TTL after the last full publication the forecast is put
	// again, so the KV entry of a live site never expires.
	fx.clock.Set(t0 + 150)
	fx.agent.Notify("test")
	msg = nextMsg(t, sub)
	if got := msg.Header.Get(wire.HeaderType); got != wire.TypeForecast {
		t.Fatalf("message type %q, want forecast", got)
	}
	if f, err := wire.DecodeForecast(msg.Data); err != nil || f.Seq != 2 {
		t.Fatalf("forecast %v (%v), want seq 2", f, err)
	}
}

// nextMsg returns the next message after the first forecast (which is
// put in KV before it is published, so it may reach a subscription made
// after the KV entry was seen).
func nextMsg(t *testing.T, sub *nats.Subscription) *nats.Msg {
	t.Helper()
	for {
		msg, err := sub.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if msg.Header.Get(wire.HeaderType) == wire.TypeForecast {
			if f, err := wire.DecodeForecast(msg.Data); err == nil && f.Seq == 1 {
				continue
			}
		}
		return msg
	}
}

// freeAndBusyNodes splits the site's nodes by whether a job runs there now.
func freeAndBusyNodes(t *testing.T, fx *fixture) (free, busy []string) {
	snap, err := fx.site.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, j := range snap.Jobs {
		for _, h := range j.Hosts {
			used[h.Node] = true
		}
	}
	for _, n := range snap.Nodes {
		if used[n.Name] {
			busy = append(busy, n.Name)
		} else {
			free = append(free, n.Name)
		}
	}
	if len(free) == 0 || len(busy) == 0 {
		t.Fatalf("workload did not leave free and busy nodes: free %v busy %v", free, busy)
	}
	return free, busy
}

func reserveReq(job string, start, dur int64, nodes ...wire.NodeProcs) wire.ReserveRequest {
	return wire.ReserveRequest{Type: wire.TypeReserve, Job: job, Site: "gamma", Revision: 1, Start: start,
		Duration: dur, Nodes: nodes, Identity: wire.Identity{User: "griduser", Account: "gridacct"}, RequestedBy: "broker"}
}

func TestReserveRetryStaleReleaseAndAudit(t *testing.T) {
	fx := runSimAgent(t, testConfig("gamma"))
	free, busy := freeAndBusyNodes(t, fx)
	ok := request[wire.ReserveReply](t, fx.nc, "gamma", wire.VerbReserve,
		reserveReq("g1", t0+60, 600, wire.NodeProcs{Node: free[0], Procs: 4}))
	if ok.Code != wire.CodeOK || len(ok.Reservations) != 1 {
		t.Fatalf("reserve: %+v", ok)
	}
	r := ok.Reservations[0]
	// The reservation runs past the asked end by the slack (the node is
	// free then), so a part submitted late still fits.
	if r.ID != "g1.0" || r.Start != t0+60 || r.End != t0+660+int64(agent.DefaultSlack/time.Second) || r.Identity.Account != "gridacct" ||
		!strings.Contains(r.Submit, "ADVRES:g1.0") {
		t.Fatalf("reservation %+v", r)
	}
	// The reservation leaves the next forecast's slots.
	f := waitForecast(t, fx.kv, "gamma", 2)
	var slots []forecast.Slot
	for _, s := range f.Slots {
		if s.Node == free[0] {
			slots = append(slots, s)
		}
	}
	if got := agent.Available(slots, t0+60, t0+660); got != 0 {
		t.Fatalf("reserved node still offers %d procs in the reserved interval", got)
	}
	// The agent takes revision 2 as its own just after the KV put (a
	// reply in between names revision 1: seen once on a loaded machine).
	for deadline := time.Now().Add(10 * time.Second); fx.agent.Revision() < 2 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}

	again := request[wire.ReserveReply](t, fx.nc, "gamma", wire.VerbReserve,
		reserveReq("g1", t0+60, 600, wire.NodeProcs{Node: free[0], Procs: 4}))
	if again.Code != wire.CodeOK || len(again.Reservations) != 1 || again.Reservations[0].ID != "g1.0" {
		t.Fatalf("retried reserve: %+v", again)
	}
	stale := request[wire.ReserveReply](t, fx.nc, "gamma", wire.VerbReserve,
		reserveReq("g2", t0+60, 600, wire.NodeProcs{Node: busy[0], Procs: 4}))
	if stale.Code != wire.CodeStale || stale.Revision < 2 {
		t.Fatalf("reserve on a busy node: %+v, want stale with the current revision", stale)
	}
	tooMany := request[wire.ReserveReply](t, fx.nc, "gamma", wire.VerbReserve,
		reserveReq("g3", t0+60, 600, wire.NodeProcs{Node: free[1], Procs: 99}))
	unknown := request[wire.ReserveReply](t, fx.nc, "gamma", wire.VerbReserve,
		reserveReq("g4", t0+60, 600, wire.NodeProcs{Node: "nosuchnode", Procs: 1}))
	if tooMany.Code != wire.CodeNoCapacity || unknown.Code != wire.CodeNoCapacity {
		t.Fatalf("no-capacity: %+v / %+v", tooMany, unknown)
	}
	fx.res.mu.Lock()
	reserves, lists := fx.res.reserves, fx.res.lists
	fx.res.mu.Unlock()
	if reserves != 1 {
		t.Fatalf("%d reservations made, want 1 (retry, stale and no-capacity make none)", reserves)
	}
	// Idempotency lookups for g1, its retry and the stale g2: the
	// no-capacity requests never reached the scheduler at all.
	if lists != 3 {
		t.Fatalf("%d scheduler lookups, want 3", lists)
	}

	list := request[wire.ListReply](t, fx.nc, "gamma", wire.VerbList, wire.ListRequest{Type: wire.TypeList})
	if list.Code != wire.CodeOK || len(list.Reservations) != 1 || list.Reservations[0].Job != "g1" {
		t.Fatalf("list: %+v", list)
	}
	rel := request[wire.ReleaseReply](t, fx.nc, "gamma", wire.VerbRelease,
		wire.ReleaseRequest{Type: wire.TypeRelease, Job: "g1", Site: "gamma", RequestedBy: "broker"})
	if rel.Code != wire.CodeOK || !slices.Equal(rel.Released, []string{"g1.0"}) {
		t.Fatalf("release: %+v", rel)
	}
	rel = request[wire.ReleaseReply](t, fx.nc, "gamma", wire.VerbRelease,
		wire.ReleaseRequest{Type: wire.TypeRelease, Job: "g1", Site: "gamma"})
	if rel.Code != wire.CodeOK || len(rel.Released) != 0 || rel.Note == "" {
		t.Fatalf("second release: %+v, want ok with a note", rel)
	}

	codes := map[string][]string{}
	releases := func(recs []wire.AuditRecord) int {
		n := 0
		for _, rec := range recs {
			if rec.Action == wire.VerbRelease && rec.Job == "g1" {
				n++
			}
		}
		return n
	}
	for _, rec := range auditRecordsWhen(t, fx.js, func(recs []wire.AuditRecord) bool { return releases(recs) >= 2 }) {
		if rec.Origin != "gamma" || rec.Type != wire.TypeAudit {
			t.Fatalf("audit record %+v", rec)
		}
		codes[rec.Action+" "+rec.Job] = append(codes[rec.Action+" "+rec.Job], rec.Code)
		if rec.Action == wire.VerbReserve && rec.Job == "g1" && rec.Code == wire.CodeOK && len(rec.Command) == 0 && len(codes["reserve g1"]) == 1 {
			t.Fatalf("first reserve of g1 audited without its command: %+v", rec)
		}
	}
	want := map[string][]string{
		"reserve-request g1": {"ok", "ok"}, "reserve g1": {"ok", "ok"},
		"reserve-request g2": {"ok"}, "reserve g2": {"stale"},
		"reserve g3": {"no-capacity"}, "reserve g4": {"no-capacity"},
		"release-request g1": {"ok", "ok"}, "release g1": {"ok", "ok"},
	}
	for k, v := range want {
		if !slices.Equal(codes[k], v) {
			t.Errorf("audit %s: codes %v, want %v", k, codes[k], v)
		}
	}
}

func TestReserveRefusesTimesAndDurations(t *testing.T) {
	cfg := testConfig("gamma")
	cfg.MaxDuration = time.Hour
	fx := runSimAgent(t, cfg)
	free, _ := freeAndBusyNodes(t, fx)
	n := wire.NodeProcs{Node: free[0], Procs: 1}
	for code, req := range map[string]wire.ReserveRequest{
		wire.CodeInPast:  reserveReq("p1", t0-3600, 600, n),
		wire.CodeTooLong: reserveReq("p2", t0+60, 7200, n),
		wire.CodeInvalid: reserveReq("p3", t0+60, 0, n),
	} {
		got := request[wire.ReserveReply](t, fx.nc, "gamma", wire.VerbReserve, req)
		if got.Code != code {
			t.Errorf("%s: got %+v", code, got)
		}
	}
	if fx.res.calls() != 0 {
		t.Fatalf("refused requests reached the reserver %d times", fx.res.calls())
	}
}

// Hostile identities and names travel the whole reserve path (NATS, the
// micro service, the agent) and are refused before anything reaches the
// Reserver, i.e. before any scheduler command could be built.
func TestHostileIdentitiesRefusedBeforeAnyCommand(t *testing.T) {
	fx := runSimAgent(t, testConfig("gamma"))
	hostile := []string{"alice;rm -rf /", "$(id)", "`id`", "-u root", "--help", "al ice", "alice\nroot",
		"alice\x00", "a|b", "a&b", "a>b", "../etc", ".hidden", "ALL", strings.Repeat("a", 65), strings.Repeat("x", 100000)}
	n := wire.NodeProcs{Node: "gamma-n0001", Procs: 1}
	var sent int
	for _, h := range hostile {
		reqs := []wire.ReserveRequest{}
		for _, field := range []string{"user", "group", "account", "job", "node"} {
			r := reserveReq("h1", t0+60, 600, n)
			switch field {
			case "user":
				r.Identity = wire.Identity{User: h}
			case "group":
				r.Identity = wire.Identity{User: "griduser", Group: h}
			case "account":
				r.Identity = wire.Identity{Account: h}
			case "job":
				r.Job = h
			case "node":
				r.Nodes = []wire.NodeProcs{{Node: h, Procs: 1}}
			}
			reqs = append(reqs, r)
		}
		for _, r := range reqs {
			if h == "ALL" && r.Job == "ALL" {
				continue // a plain job id; only ACLs and host lists give ALL a meaning
			}
			got := request[wire.ReserveReply](t, fx.nc, "gamma", wire.VerbReserve, r)
			sent++
			if got.Code != wire.CodeInvalid {
				t.Errorf("identity/name %.40q: code %q, want invalid", h, got.Code)
			}
			if strings.ContainsAny(got.Message, "\n\x00") || len(got.Message) > 400 {
				t.Errorf("refusal message echoes the hostile value: %.100q", got.Message)
			}
		}
	}
	rel := request[wire.ReleaseReply](t, fx.nc, "gamma", wire.VerbRelease,
		wire.ReleaseRequest{Type: wire.TypeRelease, Job: "g1;rm -rf /", Site: "gamma"})
	if rel.Code != wire.CodeInvalid {
		t.Errorf("hostile release: %+v", rel)
	}
	if fx.res.calls() != 0 {
		t.Fatalf("%d hostile requests reached the reserver", fx.res.calls())
	}
	countInvalid := func(recs []wire.AuditRecord) int {
		invalid := 0
		for _, rec := range recs {
			if rec.Code == wire.CodeInvalid {
				invalid++
			}
		}
		return invalid
	}
	invalid := countInvalid(auditRecordsWhen(t, fx.js, func(recs []wire.AuditRecord) bool { return countInvalid(recs) >= sent }))
	if invalid < sent {
		t.Fatalf("%d invalid requests audited, %d sent", invalid, sent)
	}
}

// fixedEngine returns the same forecast whatever the snapshot.
type fixedEngine struct{ f forecast.Forecast }

func (e fixedEngine) Forecast(context.Context, forecast.Snapshot, time.Time) (forecast.Forecast, []forecast.Prediction, error) {
	return e.f, nil, nil
}

// A 5,000-node forecast with 20 slots per node goes through a real NATS
// server with the default 1 MiB max_payload, on the subject and into KV.
func TestLargeForecastFitsDefaultMaxPayload(t *testing.T) {
	nc := startNATS(t)
	if nc.MaxPayload() != 1<<20 {
		t.Fatalf("server max_payload %d, want the 1 MiB default", nc.MaxPayload())
	}
	// Random boundaries, gaps and prices: harder to compress than a real
	// forecast.
	r := rand.New(rand.NewPCG(5, 5))
	f := forecast.Forecast{Version: 1, Site: "huge", Generated: t0, Horizon: t0 + 7*86400}
	for i := range 5000 {
		name := fmt.Sprintf("h%05d", i)
		f.Nodes = append(f.Nodes, forecast.Node{Name: name, Procs: 8, Speed: 1, MemMB: 64000})
		start := t0 + r.Int64N(36000)
		for range 20 {
			end := start + 600 + r.Int64N(30000)
			f.Slots = append(f.Slots, forecast.Slot{Node: name, Procs: 1 + r.IntN(8), Start: start, End: end, Price: 1 + float64(r.IntN(8))/4})
			start = end + r.Int64N(3)*600
		}
	}
	a, err := agent.New(testConfig("huge"), agent.Deps{Conn: nc, Snapshotter: sim2Snapshot{}, Engine: fixedEngine{f},
		Now: func() time.Time { return time.Unix(t0, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() { cancel(); <-done }()
	got := waitForecast(t, waitBucket(t, mustJS(t, nc)), "huge", 1)
	if len(got.Nodes) != 5000 || len(got.Slots) != 100000 || got.Slots[99999] != f.Slots[99999] {
		t.Fatalf("forecast in KV: %d nodes, %d slots", len(got.Nodes), len(got.Slots))
	}
	t.Logf("5,000 nodes x 20 slots: %d bytes on the wire", a.Status().Bytes)
}

// A clean stop tells the broker the site's forecast no longer holds: an
// offline heartbeat naming the last revision.
func TestCleanStopSendsOffline(t *testing.T) {
	fx := runSimAgent(t, testConfig("beta"))
	sub, err := fx.nc.SubscribeSync(wire.ForecastSubject("beta"))
	if err != nil {
		t.Fatal(err)
	}
	fx.nc.Flush()
	fx.stop()
	for {
		msg := nextMsg(t, sub)
		if msg.Header.Get(wire.HeaderType) != wire.TypeHeartbeat {
			continue // the first forecast may still reach this subscription
		}
		var hb wire.Heartbeat
		if err := json.Unmarshal(msg.Data, &hb); err != nil || !hb.Offline || hb.Seq != 1 || hb.Site != "beta" {
			t.Fatalf("heartbeat %+v (%v), want beta's offline notice naming revision 1", hb, err)
		}
		return
	}
}

// An agent whose snapshot fails (its scheduler does not answer) says so
// at that cycle in a heartbeat naming its last revision and the reason;
// once it builds again it publishes a full forecast (a new revision),
// although nothing in it changed.
func TestFailedBuildSendsProblem(t *testing.T) {
	nc := startNATS(t)
	snap := &failingSnapshot{}
	cfg := testConfig("beta")
	cfg.Refresh = 50 * time.Millisecond
	sub, err := nc.SubscribeSync(wire.ForecastSubject("beta"))
	if err != nil {
		t.Fatal(err)
	}
	runAgent(t, cfg, agent.Deps{Conn: nc, Snapshotter: snap, Engine: fixedEngine{forecast.Forecast{Version: 1, Site: "beta",
		Generated: 1000, Horizon: 5000}}, Now: func() time.Time { return time.Unix(1000, 0) }})
	next := func() (string, wire.Heartbeat) { // a forecast reads as a heartbeat of its revision
		msg := nextMsg(t, sub)
		var hb wire.Heartbeat
		var err error
		if msg.Header.Get(wire.HeaderType) == wire.TypeHeartbeat {
			err = json.Unmarshal(msg.Data, &hb)
		} else {
			var f *forecast.Forecast
			if f, err = wire.DecodeForecast(msg.Data); err == nil {
				hb.Seq = f.Seq
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		return msg.Header.Get(wire.HeaderType), hb
	}
	next() // the first forecast, or a heartbeat naming it
	snap.fail.Store(true)
	for {
		typ, hb := next()
		if typ == wire.TypeHeartbeat && hb.Problem != "" {
			if hb.Seq != 1 || !strings.Contains(hb.Problem, "slurmctld does not answer") {
				t.Fatalf("problem heartbeat %+v", hb)
			}
			break
		}
	}
	snap.fail.Store(false)
	for {
		typ, hb := next()
		if typ == wire.TypeForecast {
			if hb.Seq != 2 {
				t.Fatalf("revision %d after the problem, want 2", hb.Seq)
			}
			break
		}
		if hb.Problem == "" {
			t.Fatalf("a plain heartbeat after the problem: %+v (the broker would keep the site out)", hb)
		}
	}
}

// failingSnapshot is an empty site whose snapshot fails while fail is set.
type failingSnapshot struct{ fail atomic.Bool }

func (f *failingSnapshot) Snapshot(context.Context) (forecast.Snapshot, error) {
	if f.fail.Load() {
		return forecast.Snapshot{}, errors.New("slurm: slurmctld does not answer (scontrol ping: Slurmctld(primary) at vm is DOWN)")
	}
	return forecast.Snapshot{Site: "beta"}, nil
}
