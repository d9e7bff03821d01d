package natsref

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"lookahead/broker/daemon"
	"lookahead/internal/gridnet"
	"lookahead/internal/natsconn"
	"lookahead/wire"
)

// startNet starts the grid of cluster.conf (three servers) with a leaf
// node of leaf.conf per site, waits for JetStream and the links, and runs
// the admin's init at three replicas.
func startNet(t *testing.T, o gridnet.Options) *gridnet.Net {
	t.Helper()
	o.Dir = t.TempDir()
	n, err := gridnet.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := n.WaitJetStream(ctx); err != nil {
		t.Fatal(err)
	}
	if err := n.WaitLinks(ctx); err != nil {
		t.Fatal(err)
	}
	admin := dialNet(t, n.Identity("admin"))
	js, _ := jetstream.New(admin)
	for {
		actx, acancel := context.WithTimeout(ctx, 3*time.Second)
		_, err := daemon.Init(actx, js, 3, 5*time.Minute)
		if err == nil {
			_, err = daemon.InitLease(actx, js, 3, 10*time.Second)
		}
		acancel()
		if err == nil {
			return n
		}
		if ctx.Err() != nil {
			t.Fatalf("init at three replicas: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func dialNet(t *testing.T, cfg natsconn.Config) *nats.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := natsconn.Connect(ctx, cfg)
	if err != nil {
		t.Fatalf("connect as %s: %v", cfg.Name, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// TestSiteThroughItsLeafNode: a site's agent connected to its leaf node
// (leaf.conf) with nats.js_domain reaches the grid's JetStream, and
// grid.conf's permissions of the site hold through the leaf: alpha puts
// its own KV key and appends its own audit record, never beta's; it
// receives its own requests and none of beta's, and its answers reach the
// broker on alpha's reply subjects only.
func TestSiteThroughItsLeafNode(t *testing.T) {
	n := startNet(t, gridnet.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	alpha := dialNet(t, n.AgentConfig("alpha"))
	js, err := natsconn.JetStream(alpha, gridnet.Domain)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, wire.ForecastBucket)
	if err != nil {
		t.Fatalf("alpha binds the forecast bucket through its leaf: %v", err)
	}
	if _, err := kv.Put(ctx, "alpha", []byte("alpha's")); err != nil {
		t.Fatalf("alpha puts its key: %v", err)
	}
	short, cancelShort := context.WithTimeout(ctx, time.Second)
	_, err = kv.Put(short, "beta", []byte("forged"))
	cancelShort()
	if err == nil {
		t.Fatal("alpha put beta's key through its leaf")
	}
	if _, err := js.Publish(ctx, wire.AuditSubject("alpha", "reserve"), []byte(`{}`)); err != nil {
		t.Fatalf("alpha appends its audit record: %v", err)
	}
	short, cancelShort = context.WithTimeout(ctx, time.Second)
	_, err = js.Publish(short, wire.AuditSubject("beta", "reserve"), []byte(`{}`))
	cancelShort()
	if err == nil {
		t.Fatal("alpha appended an audit record as beta through its leaf")
	}

	broker := dialNet(t, n.Identity("broker"))
	bjs, _ := jetstream.New(broker)
	bkv, err := bjs.KeyValue(ctx, wire.ForecastBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bkv.Get(ctx, "beta"); err == nil {
		t.Fatal("beta's key exists after alpha's attempt")
	}
	if e, err := bkv.Get(ctx, "alpha"); err != nil || string(e.Value()) != "alpha's" {
		t.Fatalf("alpha's key at the grid: %v", err)
	}
	st, _ := bjs.Stream(ctx, wire.AuditStream)
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(wire.AuditSubjects))
	if err != nil || info.State.Msgs != 1 || info.State.Subjects[wire.AuditSubject("alpha", "reserve")] != 1 {
		t.Fatalf("audit stream %+v %v, want alpha's one record", info.State, err)
	}
	termThroughTheLeaf(t, ctx, alpha, bjs)

	// Requests: the broker asks each site on its subject, with a reply
	// subject of that site's; alpha answers its own, and neither its spy on
	// beta's requests nor a forged answer to beta's reply subject gets
	// through.
	beta := dialNet(t, n.AgentConfig("beta"))
	answer := func(nc *nats.Conn, site string) {
		sub, err := nc.Subscribe(wire.AgentSubject(site, wire.VerbList), func(m *nats.Msg) { m.Respond([]byte(site)) })
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sub.Unsubscribe() })
		nc.Flush()
	}
	answer(alpha, "alpha")
	answer(beta, "beta")
	spy, err := alpha.SubscribeSync(wire.AgentSubject("beta", wire.VerbList))
	if err != nil {
		t.Fatal(err)
	}
	alpha.Flush()
	forged, err := broker.SubscribeSync("_INBOX_broker.site.beta.forged")
	if err != nil {
		t.Fatal(err)
	}
	broker.Flush()
	alpha.Publish("_INBOX_broker.site.beta.forged", []byte("alpha speaking for beta"))
	alpha.Flush()
	for _, site := range []string{"alpha", "beta"} {
		reply := "_INBOX_broker.site." + site + ".t"
		sub, err := broker.SubscribeSync(reply)
		if err != nil {
			t.Fatal(err)
		}
		broker.Flush()
		// the site's subscription reaches the grid through its leaf a
		// moment after it is made: no responders until then
		var m *nats.Msg
		for err = nats.ErrNoResponders; errors.Is(err, nats.ErrNoResponders) && ctx.Err() == nil; {
			if err := broker.PublishRequest(wire.AgentSubject(site, wire.VerbList), reply, nil); err != nil {
				t.Fatal(err)
			}
			m, err = sub.NextMsg(10 * time.Second)
		}
		if err != nil || string(m.Data) != site {
			t.Fatalf("%s's answer through its leaf: %v", site, err)
		}
	}
	// beta answered after alpha's forgery and the broker's request to
	// beta, on the same links: anything of them that could arrive has
	nothingPending(t, spy)
	nothingPending(t, forged)
}

// termThroughTheLeaf: the agent reads the job stream's last term record
// (it verifies broker epochs with it) through its leaf node, in the
// grid's domain.
func termThroughTheLeaf(t *testing.T, ctx context.Context, alpha *nats.Conn, bjs jetstream.JetStream) {
	t.Helper()
	if s, err := bjs.Stream(ctx, wire.JobStream); err != nil || !s.CachedInfo().Config.AllowDirect {
		t.Fatalf("the grid's job stream: %v (direct gets allowed: %v)", err, err == nil && s.CachedInfo().Config.AllowDirect)
	}
	ack, err := bjs.Publish(ctx, wire.JobEpochSubject, []byte(`{"type":"epoch.v1"}`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := alpha.Request("$JS."+gridnet.Domain+".API.DIRECT.GET."+wire.JobStream+"."+wire.JobEpochSubject, nil, 10*time.Second)
	if err != nil || m.Header.Get(jetstream.SequenceHeader) != strconv.FormatUint(ack.Sequence, 10) {
		t.Fatalf("alpha reads the last term record through its leaf: %v %v", m, err)
	}
}

// TestCheckTellsLeafProblemsApart: what `check` reports for an agent
// behind its leaf node — fine with nats.js_domain; the domain missing;
// another domain; the link stalled; the link down; and a leaf node with a
// JetStream of its own — each with its fix.
func TestCheckTellsLeafProblemsApart(t *testing.T) {
	n := startNet(t, gridnet.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	judge := func(cfg natsconn.Config) natsconn.Verdict {
		nc := dialNet(t, cfg)
		defer nc.Close()
		return natsconn.Probe(ctx, nc, cfg.JSDomain).Judge()
	}
	cfg := n.AgentConfig("alpha")
	if v := judge(cfg); !v.OK || !strings.Contains(v.Detail, "domain grid") {
		t.Fatalf("with the domain: %+v", v)
	}
	noDomain := cfg
	noDomain.JSDomain = ""
	expect(t, "missing domain", judge(noDomain), false, "nats.js_domain is not set", "set nats.js_domain")
	other := cfg
	other.JSDomain = "hub"
	expect(t, "another domain", judge(other), false, `no JetStream of domain "hub"`, "grid's domain")

	n.Site("alpha").Link.Stall()
	stalled := dialNet(t, cfg)
	sctx, scancel := context.WithTimeout(ctx, 3*time.Second) // a stalled link answers nothing: not even "no"
	expect(t, "stalled link", natsconn.Probe(sctx, stalled, cfg.JSDomain).Judge(), true, "the link is stalled", "try again")
	scancel()
	n.Site("alpha").Link.Resume()
	n.Site("alpha").Link.Cut()
	for n.Site("alpha").LeafLinks() != 0 {
		time.Sleep(20 * time.Millisecond)
	}
	expect(t, "link down", judge(cfg), true, "link to the grid is down", "leaf node's remote")
	n.Site("alpha").Link.Heal()
	if err := n.Site("alpha").WaitLink(ctx); err != nil {
		t.Fatal(err)
	}
	if v := judge(cfg); !v.OK {
		t.Fatalf("after the link came back: %+v", v)
	}

	own := startNet(t, gridnet.Options{Sites: []string{"alpha"}, LeafJetStream: true})
	mis := own.AgentConfig("alpha")
	mis.JSDomain = ""
	expect(t, "leaf with its own JetStream", judge(mis), false, "runs a JetStream of its own", "turn JetStream off on the leaf node")
	if v := judge(own.AgentConfig("alpha")); !v.OK {
		t.Fatalf("the grid's domain through a leaf with its own JetStream: %+v", v)
	}
}

func expect(t *testing.T, what string, v natsconn.Verdict, unreachable bool, detail, fix string) {
	t.Helper()
	if v.OK || v.Unreachable != unreachable || !strings.Contains(v.Detail, detail) || !strings.Contains(v.Fix, fix) {
		t.Errorf("%s: %+v, want a failure (unreachable %v) saying %q, fix %q", what, v, unreachable, detail, fix)
	} else {
		t.Logf("%s: %s; fix: %s", what, v.Detail, v.Fix)
	}
}
