package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"lookahead/agent"
	"lookahead/agent/simsite"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/wire"
)

func localUsers(name string) (agent.LocalUser, error) {
	switch name {
	case "alice":
		return agent.LocalUser{Name: "alice", UID: 1001, Home: "/home/alice"}, nil
	case "daemon":
		return agent.LocalUser{Name: "daemon", UID: 1, Home: "/usr/sbin"}, nil
	}
	return agent.LocalUser{}, errors.New("no such user")
}

// runDispatchAgent runs an agent on an idle simulated site alpha (4 × 4
// procs) that dispatches parts (the site executes them) and returns the
// site, its clock and the connection.
func runDispatchAgent(t *testing.T) (*simsite.Site, *clock, *nats.Conn) {
	t.Helper()
	return runDispatchAgentWith(t, nil)
}

// runDispatchAgentWith is runDispatchAgent with the configuration changed
// by edit (when not nil) before the agent starts.
func runDispatchAgentWith(t *testing.T, edit func(*agent.Config)) (*simsite.Site, *clock, *nats.Conn) {
	t.Helper()
	nc, c := startNATS(t), newClock(t0)
	site, err := simsite.New(simsite.Config{Site: "alpha", Nodes: 4, PPN: 4, Policy: sim.EASY, Start: t0, Clock: c.Now,
		StartDelay: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cfg := agent.Config{Site: "alpha", Debounce: 10 * time.Millisecond, Refresh: 50 * time.Millisecond,
		Dispatch: agent.DispatchConfig{Users: map[string]string{"carol": "daemon"}}}
	if edit != nil {
		edit(&cfg)
	}
	a, err := agent.New(cfg, agent.Deps{Conn: nc, Snapshotter: site, Reserver: site, Executor: site, Users: localUsers,
		Now: c.Now, Engine: agent.BuiltinEngine{Horizon: 24 * time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("agent run: %v", err)
		}
	})
	waitService(t, nc, "alpha")
	return site, c, nc
}

func reserveOn(t *testing.T, nc *nats.Conn, job string, start int64) {
	t.Helper()
	r := request[wire.ReserveReply](t, nc, "alpha", wire.VerbReserve, wire.ReserveRequest{Type: wire.TypeReserve, Job: job, Site: "alpha",
		Start: start, Duration: 1800, Nodes: []wire.NodeProcs{{Node: "alpha-n0001", Procs: 4}},
		Identity: wire.Identity{User: "alice", Account: "proj1"}, RequestedBy: "broker"})
	if r.Code != wire.CodeOK {
		t.Fatalf("reserve %s: %+v", job, r)
	}
}

func dispatchOf(job, user, script string, start int64) wire.DispatchRequest {
	return wire.DispatchRequest{Type: wire.TypeDispatch, Job: job, Site: "alpha", Part: 0, Start: start, Walltime: 1700,
		Parts: []wire.PartSpec{{Site: "alpha", Nodes: []wire.NodeProcs{{Node: "alpha-n0001", Procs: 4}}}},
		User:  user, Account: "proj1", Script: []byte(script), RequestedBy: "broker"}
}

// partEvents collects the part events (those with a local id) of the site,
// answering every event as the broker does.
func partEvents(t *testing.T, nc *nats.Conn) chan wire.JobEvent {
	ch := make(chan wire.JobEvent, 64)
	ack, _ := json.Marshal(wire.JobEventAck{Type: wire.TypeJobEventAck, Code: wire.CodeOK})
	sub, err := nc.Subscribe(wire.JobEventSubjects, func(m *nats.Msg) {
		m.Respond(ack) // as the broker answers
		var ev wire.JobEvent
		if json.Unmarshal(m.Data, &ev) == nil && ev.LocalID != "" {
			ch <- ev
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Unsubscribe() })
	return ch
}

func nextEvent(t *testing.T, ch chan wire.JobEvent, job, state string) wire.JobEvent {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-ch:
			if ev.Job == job && ev.State == state {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %s event for %s", state, job)
		}
	}
}

func TestDispatchRunsPartAndReportsIt(t *testing.T) {
	site, c, nc := runDispatchAgent(t)
	events := partEvents(t, nc)
	start := t0 + 600
	reserveOn(t, nc, "g1", start)
	reply := request[wire.DispatchReply](t, nc, "alpha", wire.VerbDispatch, dispatchOf("g1", "alice", "#lookahead-sim runtime=600\nhostname\n", start))
	if reply.Code != wire.CodeOK || reply.LocalID == "" || reply.LocalUser != "alice" || reply.Output != "/home/alice/la.g1.0.out" || reply.Duplicate {
		t.Fatalf("dispatch: %+v", reply)
	}
	again := request[wire.DispatchReply](t, nc, "alpha", wire.VerbDispatch, dispatchOf("g1", "alice", "#lookahead-sim runtime=600\n", start))
	if again.Code != wire.CodeOK || !again.Duplicate || again.LocalID != reply.LocalID {
		t.Fatalf("retried dispatch: %+v", again)
	}
	if jobs, _, _ := site.Jobs(context.Background()); len(jobs) != 1 {
		t.Fatalf("a retry submitted again: %+v", jobs)
	}
	c.Set(start + 60)
	ev := nextEvent(t, events, "g1", "started")
	if ev.LocalID != reply.LocalID || ev.Start != start+5 || ev.Site != "alpha" {
		t.Fatalf("started: %+v", ev)
	}
	c.Set(start + 700)
	ev = nextEvent(t, events, "g1", "finished")
	if ev.ExitStatus == nil || *ev.ExitStatus != 0 || ev.End != start+605 {
		t.Fatalf("finished: %+v", ev)
	}
	var qsub *wire.AuditRecord
	isQsub := func(r wire.AuditRecord) bool {
		return r.Action == wire.VerbDispatch && r.Code == wire.CodeOK && r.Command != nil && r.Command[0] == "qsub"
	}
	for _, r := range auditRecordsWhen(t, mustJS(t, nc), func(recs []wire.AuditRecord) bool { return slices.ContainsFunc(recs, isQsub) }) {
		if isQsub(r) {
			qsub = &r
			break
		}
	}
	want := "qsub -P alice -N la.g1.0 -l nodes=alpha-n0001:ppn=4 -l walltime=00:28:20 -A proj1 -W x=FLAGS:ADVRES:g1.0"
	if qsub == nil || !strings.HasPrefix(strings.Join(qsub.Command, " "), want) {
		t.Fatalf("audit of the qsub: %+v, want a command starting %q", qsub, want)
	}
}

func TestDispatchRefusals(t *testing.T) {
	site, _, nc := runDispatchAgent(t)
	start := t0 + 600
	reserveOn(t, nc, "g1", start)
	for user, code := range map[string]string{"root": wire.CodeForbidden, "carol": wire.CodeForbidden, "mallory": wire.CodeForbidden} {
		if r := request[wire.DispatchReply](t, nc, "alpha", wire.VerbDispatch, dispatchOf("g1", user, "x", start)); r.Code != code {
			t.Errorf("user %s: %+v, want %s", user, r, code)
		}
	}
	if r := request[wire.DispatchReply](t, nc, "alpha", wire.VerbDispatch, dispatchOf("g9", "alice", "x", start)); r.Code != wire.CodeNotFound {
		t.Errorf("no reservation: %+v", r)
	}
	if r := request[wire.StopReply](t, nc, "alpha", wire.VerbStop, map[string]any{"type": wire.TypeStop, "job": "g1", "site": "beta"}); r.Code != wire.CodeInvalid {
		t.Errorf("stop for another site: %+v", r)
	}
	if jobs, _, _ := site.Jobs(context.Background()); len(jobs) != 0 {
		t.Fatalf("a refused dispatch submitted: %+v", jobs)
	}
}

func TestStopDeletesRunningPart(t *testing.T) {
	_, c, nc := runDispatchAgent(t)
	events := partEvents(t, nc)
	start := t0 + 600
	reserveOn(t, nc, "g2", start)
	reply := request[wire.DispatchReply](t, nc, "alpha", wire.VerbDispatch, dispatchOf("g2", "alice", "sleep 1000\n", start))
	if reply.Code != wire.CodeOK {
		t.Fatalf("dispatch: %+v", reply)
	}
	c.Set(start + 100)
	nextEvent(t, events, "g2", "started")
	stop := request[wire.StopReply](t, nc, "alpha", wire.VerbStop, wire.StopRequest{Type: wire.TypeStop, Job: "g2", Site: "alpha",
		Reason: "the job failed elsewhere", RequestedBy: "broker"})
	if stop.Code != wire.CodeOK || !slices.Equal(stop.Deleted, []string{reply.LocalID}) {
		t.Fatalf("stop: %+v", stop)
	}
	ev := nextEvent(t, events, "g2", "failed")
	if ev.ExitStatus == nil || *ev.ExitStatus != 271 {
		t.Fatalf("deleted part: %+v", ev)
	}
	if again := request[wire.StopReply](t, nc, "alpha", wire.VerbStop, wire.StopRequest{Type: wire.TypeStop, Job: "g2", Site: "alpha"}); again.Code != wire.CodeOK || len(again.Deleted) != 0 || again.Note == "" {
		t.Fatalf("stop again: %+v", again)
	}
	isQdel := func(r wire.AuditRecord) bool {
		return r.Action == "qdel" && slices.Equal(r.Command, []string{"qdel", reply.LocalID})
	}
	found := slices.ContainsFunc(auditRecordsWhen(t, mustJS(t, nc), func(recs []wire.AuditRecord) bool { return slices.ContainsFunc(recs, isQdel) }), isQdel)
	if !found {
		t.Fatal("no audit record of the qdel with its argv")
	}
}

// Where the site's pbs_mom copies output at the jobs' end (Torque built
// with --disable-spool, no $spool_as_final_name), the dispatch answer
// still names the -o/-e paths the part was given: whether the copy works
// is known only once the part ends (the finished event says where the
// output is: dispatch_output_test.go).
func TestDispatchReportsTheOutputPathsGiven(t *testing.T) {
	_, _, nc := runDispatchAgentWith(t, func(c *agent.Config) { c.Dispatch.OutputCopied = true })
	start := t0 + 600
	reserveOn(t, nc, "g1", start)
	reply := request[wire.DispatchReply](t, nc, "alpha", wire.VerbDispatch, dispatchOf("g1", "alice", "#lookahead-sim runtime=600\n", start))
	if reply.Code != wire.CodeOK || reply.Output != "/home/alice/la.g1.0.out" || reply.Error != "/home/alice/la.g1.0.err" {
		t.Fatalf("dispatch: %+v, want the -o/-e paths", reply)
	}
}
