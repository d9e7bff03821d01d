package daemon

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"lookahead/broker/client"
	"lookahead/forecast"
	"lookahead/wire"
)

// The attacks of issue 15 against a running broker on a real embedded
// nats-server (the permission side of each is in packaging/nats).

// putForecast puts f in the bucket as site's key.
func (e *env) putForecast(site string, f forecast.Forecast) {
	e.t.Helper()
	data, err := wire.EncodeForecast(&f)
	if err != nil {
		e.t.Fatal(err)
	}
	e.putRaw(site, data)
}

func (e *env) putRaw(site string, data []byte) {
	e.t.Helper()
	if _, err := e.kv.Put(context.Background(), site, data); err != nil {
		e.t.Fatal(err)
	}
}

// siteForecast is nodes×procs free from the clock's now for a day.
func (e *env) siteForecast(site string, seq uint64, nodes, procs int) forecast.Forecast {
	now := e.clock.Now().Unix()
	f := forecast.Forecast{Version: 1, Site: site, Seq: seq, Generated: now, Horizon: now + 86400}
	for i := 0; i < nodes; i++ {
		name := fmt.Sprintf("%s%02d", site, i)
		f.Nodes = append(f.Nodes, forecast.Node{Name: name, Procs: procs, Speed: 1, MemMB: 1000})
		f.Slots = append(f.Slots, forecast.Slot{Node: name, Procs: procs, Start: now, End: f.Horizon, Price: 1})
	}
	return f
}

func siteStatus(t *testing.T, b *Broker, site string) wire.SiteStatus {
	t.Helper()
	for _, s := range b.Sites().Sites {
		if s.Site == site {
			return s
		}
	}
	t.Fatalf("no site %s in %+v", site, b.Sites().Sites)
	return wire.SiteStatus{}
}

// waitSite waits until site's status satisfies ok.
func waitSite(t *testing.T, b *Broker, site string, ok func(wire.SiteStatus) bool) wire.SiteStatus {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, s := range b.Sites().Sites {
			if s.Site == site && ok(s) {
				return s
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("site %s never reached the expected state: %+v", site, b.Sites().Sites)
	return wire.SiteStatus{}
}

// Issue 15.1: a forecast with procs 1e18 passed intake and made the planner
// refuse every cycle, for every site. Now it is refused at intake, the
// site is excluded and says why, the grid plans on, and the honest agent's
// next forecast (lower seq, generated later) brings the site back.
func TestAttackHugeProcsExcludesOnlyThatSite(t *testing.T) {
	e := newEnv(t)
	e.startSite("alpha")
	beta := e.startSite("beta")
	e.putForecast("alpha", e.siteForecast("alpha", 5, 2, 8))
	e.putForecast("beta", e.siteForecast("beta", 1, 2, 8))
	r := e.startBroker(nil)
	e.waitSites(r.b, 2)
	bad := e.siteForecast("alpha", 1<<40, 1, 8)
	bad.Nodes[0].Procs = 1e18
	e.putForecast("alpha", bad)
	st := waitSite(t, r.b, "alpha", func(s wire.SiteStatus) bool { return s.Excluded })
	if !strings.Contains(st.Problem, "16777216") || !st.Stale {
		t.Fatalf("alpha: %+v", st)
	}
	rep := submit(t, r.b, "k1", job(8, 3600, 2))
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatalf("one bad site stopped planning: %v", err)
	}
	if s := status(t, r.b, rep.Job); s.State != wire.JobReserved || len(beta.held()[rep.Job]) != 1 {
		t.Fatalf("job on the good site: %+v", s)
	}
	if p := r.b.Plan(); len(p.Excluded) != 1 || p.Excluded[0] != "alpha" || len(p.Sites) != 1 {
		t.Fatalf("plan sites %v excluded %v", p.Sites, p.Excluded)
	}
	e.clock.Add(time.Minute)
	e.putForecast("alpha", e.siteForecast("alpha", 6, 2, 8))
	waitSite(t, r.b, "alpha", func(s wire.SiteStatus) bool { return !s.Excluded && s.Seq == 6 && s.Problem == "" })
}

// bombData is a gzip stream that inflates to n bytes of a v1 JSON node
// name: the attack of issue 15.2 (594 KB took the broker to about 1 GB).
func bombData(n int) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write([]byte(`{"version":1,"site":"alpha","generated":1,"horizon":2,"nodes":[{"name":"`))
	chunk := bytes.Repeat([]byte{'a'}, 1<<20)
	for left := n; left > 0; left -= len(chunk) {
		zw.Write(chunk[:min(left, len(chunk))])
	}
	zw.Write([]byte(`"}]}`))
	zw.Close()
	return buf.Bytes()
}

// Issue 15.2 (behaviour; the memory it costs is TestAttackBombRSS): a gzip
// bomb on the subject and in the bucket is refused and reported.
func TestAttackGzipBombIsRefused(t *testing.T) {
	e := newEnv(t)
	e.startSite("alpha")
	e.putForecast("alpha", e.siteForecast("alpha", 1, 2, 8))
	r := e.startBroker(nil)
	e.waitSites(r.b, 1)
	data := bombData(200 << 20)
	msg := nats.NewMsg(wire.ForecastSubject("alpha"))
	msg.Header.Set(wire.HeaderType, wire.TypeForecast)
	msg.Data = data
	if err := e.nc.PublishMsg(msg); err != nil {
		t.Fatal(err)
	}
	e.putRaw("alpha", data)
	st := waitSite(t, r.b, "alpha", func(s wire.SiteStatus) bool { return s.Excluded })
	if !strings.Contains(st.Problem, "more than") {
		t.Fatalf("alpha: %+v", st)
	}
	if n := r.b.badForecasts.Load(); n != 1 {
		t.Fatalf("bomb decoded %d times, want once (the second copy is recognised)", n)
	}
}

// Issue 15.3: a site cannot move another site's job: the site of a job
// event is its subject's; a body naming another site or job is refused.
func TestAttackJobEventSubjectBodyMismatch(t *testing.T) {
	e := newEnv(t)
	e.startSite("alpha")
	e.startSite("beta")
	e.putForecast("alpha", e.siteForecast("alpha", 1, 1, 1))
	e.putForecast("beta", e.siteForecast("beta", 1, 2, 8))
	r := e.startBroker(func(c *Config) { c.UsePlanner(NewPlanner(PlannerOptions{})) })
	e.waitSites(r.b, 2)
	g := submit(t, r.b, "k1", job(8, 3600, 2)) // fits beta alone
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := status(t, r.b, g.Job); s.State != wire.JobReserved || s.Plan.Sites()[0] != "beta" {
		t.Fatalf("setup: %+v", s)
	}
	send := func(subject string, body any) {
		data, _ := json.Marshal(body)
		if err := e.nc.Publish(subject, data); err != nil {
			t.Fatal(err)
		}
	}
	send(wire.JobEventSubject("alpha", g.Job), wire.JobEvent{Type: wire.TypeJobEvent, Site: "beta", Job: g.Job, State: "started"})
	send(wire.JobEventSubject("alpha", g.Job), wire.JobEvent{Type: wire.TypeJobEvent, Site: "alpha", Job: g.Job, State: "finished"})
	send(wire.JobEventSubject("beta", "g99"), wire.JobEvent{Type: wire.TypeJobEvent, Site: "beta", Job: g.Job, State: "finished"})
	send(wire.JobEventSubject("beta", g.Job), map[string]any{"type": wire.TypeJobEvent, "site": "beta", "job": g.Job, "state": "finished", "extra": 1})
	e.nc.Flush()
	deadline := time.Now().Add(5 * time.Second)
	for r.b.badEvents.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := r.b.badEvents.Load(); n != 3 {
		t.Fatalf("%d job events refused, want 3 (wrong site in body, wrong job in body, unknown field)", n)
	}
	if s := status(t, r.b, g.Job); s.State != wire.JobReserved {
		t.Fatalf("another site's events moved the job to %s", s.State)
	}
	send(wire.JobEventSubject("beta", g.Job), wire.JobEvent{Type: wire.TypeJobEvent, Site: "beta", Job: g.Job, State: "started"})
	waitState(t, r.b, g.Job, wire.JobRunning)
}

// Issue 15.7: a heartbeat with a far-future generation time kept a site
// fresh forever. Now it is refused, and freshness is the broker's receive
// time.
func TestAttackFarFutureHeartbeat(t *testing.T) {
	e := newEnv(t)
	e.startSite("alpha")
	e.putForecast("alpha", e.siteForecast("alpha", 3, 2, 8))
	r := e.startBroker(nil)
	e.waitSites(r.b, 1)
	data, _ := json.Marshal(wire.Heartbeat{Type: wire.TypeHeartbeat, Site: "alpha", Seq: 3, Generated: 1 << 40})
	msg := nats.NewMsg(wire.ForecastSubject("alpha"))
	msg.Header.Set(wire.HeaderType, wire.TypeHeartbeat)
	msg.Data = data
	if err := e.nc.PublishMsg(msg); err != nil {
		t.Fatal(err)
	}
	waitSite(t, r.b, "alpha", func(s wire.SiteStatus) bool { return strings.Contains(s.Problem, "ahead of the broker's clock") })
	e.clock.Add(6 * time.Minute)
	if st := siteStatus(t, r.b, "alpha"); !st.Stale || st.Age < 300 {
		t.Fatalf("a far-future heartbeat kept alpha fresh: %+v", st)
	}
}

// Issue 12.3: a restarted agent starts again at seq 1 (its KV entry had
// expired). Its forecast replaces the old incarnation's, and heartbeats of
// a revision the broker does not hold keep nothing fresh.
func TestRestartedAgentWithLowerSeqIsTaken(t *testing.T) {
	e := newEnv(t)
	e.startSite("alpha")
	e.putForecast("alpha", e.siteForecast("alpha", 57, 2, 8))
	r := e.startBroker(nil)
	e.waitSites(r.b, 1)
	e.clock.Add(21 * time.Minute)
	heartbeat := func(seq uint64) {
		data, _ := json.Marshal(wire.Heartbeat{Type: wire.TypeHeartbeat, Site: "alpha", Seq: seq, Generated: e.clock.Now().Unix()})
		msg := nats.NewMsg(wire.ForecastSubject("alpha"))
		msg.Header.Set(wire.HeaderType, wire.TypeHeartbeat)
		msg.Data = data
		e.nc.PublishMsg(msg)
		e.nc.Flush()
	}
	heartbeat(1) // the new incarnation's heartbeat, its forecast not yet seen
	waitSite(t, r.b, "alpha", func(s wire.SiteStatus) bool { return strings.Contains(s.Problem, "revision 1") })
	if st := siteStatus(t, r.b, "alpha"); !st.Stale || st.Seq != 57 {
		t.Fatalf("a heartbeat of another revision kept the old forecast fresh: %+v", st)
	}
	e.putForecast("alpha", e.siteForecast("alpha", 1, 3, 8))
	st := waitSite(t, r.b, "alpha", func(s wire.SiteStatus) bool { return s.Seq == 1 })
	if st.Stale || st.Nodes != 3 {
		t.Fatalf("new incarnation: %+v", st)
	}
	e.clock.Add(4 * time.Minute)
	heartbeat(1)
	at := e.clock.Now().Unix()
	waitSite(t, r.b, "alpha", func(s wire.SiteStatus) bool { return s.LastSeen == at })
	e.clock.Add(4 * time.Minute) // 8 min after the forecast, 4 after its heartbeat
	if st := siteStatus(t, r.b, "alpha"); st.Stale {
		t.Fatalf("heartbeat of the forecast in use did not refresh it: %+v", st)
	}
}

// Issue 15.8: submit refuses unknown fields (top level and in the job)
// and never echoes a huge input back.
func TestAttackSubmitUnknownFieldsAndHugeNames(t *testing.T) {
	e := newEnv(t)
	r := e.startBroker(nil)
	ask := func(subject string, body string) wire.SubmitReply {
		t.Helper()
		msg, err := e.nc.Request(subject, []byte(body), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if len(msg.Data) > 2000 {
			t.Fatalf("reply of %d bytes to %s", len(msg.Data), wire.Clip(body, 80))
		}
		var rep wire.SubmitReply
		json.Unmarshal(msg.Data, &rep)
		return rep
	}
	subj := wire.BrokerUserSubject(wire.VerbSubmit, "alice")
	for name, body := range map[string]string{
		"unknown top-level field": `{"type":"submit.v1","request_id":"a","job":{"procs":1,"walltime":60},"priority":99}`,
		"unknown job field":       `{"type":"submit.v1","request_id":"b","job":{"procs":1,"walltime":60,"prio":9}}`,
		"wrong type":              `{"type":"cancel.v1","request_id":"c","job":{"procs":1,"walltime":60}}`,
		"trailing data":           `{"type":"submit.v1","request_id":"d","job":{"procs":1,"walltime":60}} {}`,
		"huge user":               `{"type":"submit.v1","request_id":"e","job":{"procs":1,"walltime":60,"user":"` + strings.Repeat("A", 900_000) + `"}}`,
		"huge field name":         `{"type":"submit.v1","request_id":"f","job":{"procs":1,"walltime":60},"` + strings.Repeat("B", 900_000) + `":1}`,
		"1e308 max price":         `{"type":"submit.v1","request_id":"g","job":{"procs":8,"walltime":36000,"max_price":1e308}}`,
	} {
		if rep := ask(subj, body); rep.Code != wire.CodeInvalid {
			t.Errorf("%s: %+v", name, rep)
		}
	}
	if st := r.b.Status(wire.StatusRequest{All: true}); len(st.Jobs) != 0 {
		t.Fatalf("refused submissions queued %d jobs", len(st.Jobs))
	}
	if rep := ask(subj, `{"type":"submit.v1","request_id":"h","job":{"procs":1,"walltime":60}}`); rep.Code != wire.CodeOK {
		t.Fatalf("a plain submission: %+v", rep)
	}
}

// Issue 15.6: past about 400 jobs the status reply went over NATS' 1 MiB
// and came back empty for everyone. It comes in pages now; the client
// reads them all. Also issue 12.12: a stored job with a non-finite number
// breaks no one's status.
func TestAttackLargeStatus(t *testing.T) {
	e := newEnv(t)
	r := e.startBroker(nil)
	const n = 2500
	submitWide(t, r.b, n)
	cl := client.New(connect(t, e.srv), "")
	st, err := cl.Status(context.Background(), "", false)
	if err != nil || st.Code != wire.CodeOK {
		t.Fatalf("status of %d jobs: %v %+v", n, err, st.Message)
	}
	if len(st.Jobs) != n || st.Jobs[0].Job.ID != "g1" || st.Jobs[n-1].Job.ID != fmt.Sprintf("g%d", n) {
		t.Fatalf("status listed %d jobs", len(st.Jobs))
	}
	// One raw page stays under the server's max_payload.
	msg, err := e.nc.Request(wire.BrokerSubject(wire.VerbStatus), []byte(`{"type":"status.v1"}`), 5*time.Second)
	if err != nil || int64(len(msg.Data)) > e.nc.MaxPayload() {
		t.Fatalf("one page: %v, %d bytes", err, len(msg.Data))
	}
}

// The status endpoint sends jobs encoded once; the envelope must read as
// a wire.StatusReply, field for field.
func TestStatusWireMatchesStatusReply(t *testing.T) {
	want := wire.StatusReply{Type: wire.TypeStatusReply, Code: wire.CodeNotFound, Message: "m", Now: 7, Next: 9,
		Jobs: []wire.JobStatus{{Job: forecast.JobRequest{ID: "g1", Procs: 1}, State: wire.JobWaiting, Cost: 2}}}
	job, _ := json.Marshal(want.Jobs[0])
	data, err := encodeStatus(want, []json.RawMessage{job})
	if err != nil {
		t.Fatal(err)
	}
	var got wire.StatusReply
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("decoded %+v (%v), want %+v", got, err, want)
	}
	full, _ := json.Marshal(want)
	var a, b map[string]any
	json.Unmarshal(full, &a)
	json.Unmarshal(data, &b)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("envelope differs:\n%s\n%s", full, data)
	}
}
