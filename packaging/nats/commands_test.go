package natsref

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"lookahead/agent"
	"lookahead/broker/client"
	"lookahead/forecast"
	"lookahead/internal/natsconn"
	"lookahead/wire"
)

// TestEveryCommandUnderTheReferencePermissions: with the real broker and
// agents under grid.conf, every command a role has works with that role's
// identity, and none hits a permission violation — the operator's
// `lookahead status`, `plan`, `sites`, `audit`, `audit --repair`, `audit
// log`, `submit` and `cancel` (the client calls the commands make), a grid
// user's, `lookahead-agent status` and `check` with the agent's identity,
// `lookahead-broker status` with the broker's — while the operator can
// neither reserve nor release on an agent (issue 34: no command of its
// sends them; `audit --repair` runs in the broker), nor read the job
// stream or the forecasts.
func TestEveryCommandUnderTheReferencePermissions(t *testing.T) {
	g := runRealGrid(t)
	ctx := g.ctx
	opConn, aliceConn := connect(t, g.srv, operatorCfg), connect(t, g.srv, aliceCfg)
	op, alice := client.New(opConn.Conn, "operator"), client.New(aliceConn.Conn, "alice")
	waitFor(t, "both sites fresh at the broker", func() bool {
		r, err := op.Sites(ctx)
		return err == nil && len(r.Sites) == 2 && !r.Sites[0].Stale && !r.Sites[1].Stale
	})
	mine, err := alice.Submit(ctx, forecast.JobRequest{Procs: 24, Walltime: 1800, MaxPrice: 10, User: "alice", Account: "proj1"}, client.NewRequestID())
	if err != nil || mine.Code != wire.CodeOK {
		t.Fatalf("alice submits: %+v %v", mine, err)
	}
	waitFor(t, "alice's job reserved", func() bool {
		r, err := alice.Status(ctx, mine.Job, false)
		return err == nil && len(r.Jobs) == 1 && r.Jobs[0].State == wire.JobReserved
	})
	bobs, err := op.Submit(ctx, forecast.JobRequest{Procs: 1, Walltime: 600, MaxPrice: 1, User: "bob", Account: "proj2"}, client.NewRequestID())
	if err != nil || bobs.Code != wire.CodeOK {
		t.Fatalf("operator submits for bob: %+v %v", bobs, err)
	}
	type command struct {
		name string
		run  func(context.Context) (string, error)
	}
	for _, c := range []command{
		{"lookahead status (operator)", func(ctx context.Context) (string, error) { r, err := op.Status(ctx, "", true); return r.Code, err }},
		{"lookahead plan (operator)", func(ctx context.Context) (string, error) { _, err := op.Plan(ctx); return wire.CodeOK, err }},
		{"lookahead sites (operator)", func(ctx context.Context) (string, error) { r, err := op.Sites(ctx); return r.Code, err }},
		{"lookahead audit", func(ctx context.Context) (string, error) { r, err := op.Audit(ctx, false); return r.Code, err }},
		{"lookahead audit --repair", func(ctx context.Context) (string, error) { r, err := op.Audit(ctx, true); return r.Code, err }},
		{"lookahead audit log", func(ctx context.Context) (string, error) {
			recs, _, err := op.AuditLog(ctx, client.LogFilter{Job: mine.Job})
			if len(recs) == 0 && err == nil {
				return "no records", nil
			}
			return wire.CodeOK, err
		}},
		{"lookahead cancel (operator)", func(ctx context.Context) (string, error) { r, err := op.Cancel(ctx, bobs.Job); return r.Code, err }},
		{"lookahead status (alice)", func(ctx context.Context) (string, error) { r, err := alice.Status(ctx, "", false); return r.Code, err }},
		{"lookahead plan (alice)", func(ctx context.Context) (string, error) { _, err := alice.Plan(ctx); return wire.CodeOK, err }},
		{"lookahead sites (alice)", func(ctx context.Context) (string, error) { r, err := alice.Sites(ctx); return r.Code, err }},
		{"lookahead cancel (alice)", func(ctx context.Context) (string, error) { r, err := alice.Cancel(ctx, mine.Job); return r.Code, err }},
		{"lookahead-agent status", func(ctx context.Context) (string, error) { return agentStatus(ctx, g.agents["alpha"].Conn, "alpha") }},
		{"lookahead-agent check", func(ctx context.Context) (string, error) { return agentCheck(ctx, g.agents["beta"].Conn) }},
		{"lookahead-broker status", func(ctx context.Context) (string, error) { return brokerHA(g.brokerConn.Conn) }},
	} {
		cctx, cancel := context.WithTimeout(ctx, waitLimit) // a denied request waits for it
		if code, err := c.run(cctx); err != nil || code != wire.CodeOK {
			t.Errorf("%s: %s %v", c.name, code, err)
		}
		cancel()
	}
	operatorCannotActOnSites(t, opConn, g)
	for name, c := range map[string]*conn{"broker": g.brokerConn, "alpha": g.agents["alpha"], "beta": g.agents["beta"],
		"alice": aliceConn, "operator": opConn} {
		if err := c.Flush(); err != nil {
			t.Fatalf("%s flush: %v", name, err)
		}
		for len(c.errs) > 0 {
			// (check's optional server-facts request, which grid.conf does
			// not grant the daemons: natsconn.ServerFacts)
			if err := <-c.errs; !strings.Contains(err.Error(), `"$SYS.REQ.ACCOUNT.PING.STATZ"`) {
				t.Errorf("%s hit %v", name, err)
			}
		}
	}
}

// operatorCannotActOnSites: the operator's reserve and release requests
// (the poisoning release of issue 34 among them) never reach an agent, and
// it reads neither the job stream nor the forecasts.
func operatorCannotActOnSites(t *testing.T, op *conn, g *realGrid) {
	t.Helper()
	poison, _ := json.Marshal(map[string]any{"type": "release.v1", "site": "alpha", "job": "x y", "epoch": uint64(1<<64 - 1)})
	for _, subject := range []string{
		wire.AgentSubject("alpha", wire.VerbRelease),
		wire.AgentSubject("beta", wire.VerbReserve),
		wire.AgentSubject("alpha", wire.VerbDispatch),
		wire.AgentSubject("alpha", wire.VerbStop),
		wire.AgentSubject("alpha", wire.VerbList),
		"$JS.API.DIRECT.GET." + wire.JobStream + "." + wire.JobEpochSubject,
		"$JS.API.STREAM.INFO.KV_" + wire.ForecastBucket,
	} {
		publish(t, op, subject, string(poison))
		op.denied(t, "Publish", subject)
	}
	for site, ss := range g.sites {
		rs, err := ss.List(g.ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.Job == "x y" {
				t.Errorf("%s holds %+v", site, r)
			}
		}
	}
}

// agentStatus is `lookahead-agent status`: the agent's identity asks its
// own agent for its status.
func agentStatus(ctx context.Context, nc *nats.Conn, site string) (string, error) {
	msg, err := nc.RequestWithContext(ctx, wire.AgentSubject(site, agent.VerbStatus), nil)
	if err != nil {
		return "", err
	}
	var st agent.Status
	if err := json.Unmarshal(msg.Data, &st); err != nil || st.Site != site {
		return "status of " + st.Site, err
	}
	return wire.CodeOK, nil
}

// agentCheck is what `lookahead-agent check` asks of NATS: the probe
// (account info), the bucket and the audit stream as the agent binds them.
func agentCheck(ctx context.Context, nc *nats.Conn) (string, error) {
	if r := natsconn.Probe(ctx, nc, ""); r.JSErr != nil {
		return "probe", r.JSErr
	}
	js, err := natsconn.JetStream(nc, "")
	if err != nil {
		return "", err
	}
	if _, err := js.KeyValue(ctx, wire.ForecastBucket); err != nil {
		return "bucket", err
	}
	if _, err := js.Stream(ctx, wire.AuditStream); err != nil {
		return "audit stream", err
	}
	return wire.CodeOK, nil
}

// brokerHA is `lookahead-broker status`: the broker's identity gathers
// every broker's HA status.
func brokerHA(nc *nats.Conn) (string, error) {
	msg, err := nc.Request(wire.BrokerHASubject, nil, waitLimit)
	if err != nil {
		return "", err
	}
	var st wire.HAStatus
	if err := json.Unmarshal(msg.Data, &st); err != nil || st.Role != wire.RoleActive {
		return "role " + st.Role, err
	}
	return wire.CodeOK, nil
}
