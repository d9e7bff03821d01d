package natsref

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nats.go/micro"
	"github.com/nats-io/nkeys"

	"lookahead/broker/brokertest"
	"lookahead/broker/client"
	"lookahead/broker/daemon"
	"lookahead/internal/natsconn"
	"lookahead/internal/natsembed"
	"lookahead/internal/natstest"
	"lookahead/wire"
)

// waitLimit bounds every wait for something the server must do; tests
// never assert on how long it took.
const waitLimit = 5 * time.Second

// identities of grid.conf, with the example secrets in testdata/.
var (
	alphaCfg    = natsconn.Config{Name: "agent-alpha", NKeySeed: "testdata/agent-alpha.nk", InboxPrefix: "_INBOX_alpha"}
	betaCfg     = natsconn.Config{Name: "agent-beta", NKeySeed: "testdata/agent-beta.nk", InboxPrefix: "_INBOX_beta"}
	brokerCfg   = natsconn.Config{Name: "broker", NKeySeed: "testdata/broker.nk", InboxPrefix: "_INBOX_broker"}
	operatorCfg = natsconn.Config{Name: "operator", NKeySeed: "testdata/operator.nk", InboxPrefix: "_INBOX_operator"}
	aliceCfg    = natsconn.Config{Name: "alice", NKeySeed: "testdata/alice.nk", InboxPrefix: "_INBOX_alice"}
	adminCfg    = natsconn.Config{Name: "admin", NKeySeed: "testdata/admin.nk", InboxPrefix: "_INBOX_admin"}
	portalCfg   = natsconn.Config{Name: "portal", User: "portal", Password: "portal-example-password", InboxPrefix: "_INBOX_portal"}
)

// aliceKey is alice's public nkey: what the server reports as her user.
const aliceKey = "UBKUPIRANA2AOJLUKN7RKKCQN3PPOBHHOWOAX3N5UFKGWEQU6YHV6YUF"

// conn is a connection that collects the server's asynchronous errors
// (permission violations arrive that way).
type conn struct {
	*nats.Conn
	name string
	errs chan error
	srv  *natsembed.Server
}

func startGrid(t *testing.T) *natsembed.Server {
	t.Helper()
	return natstest.ServerWith(t, natsembed.Options{ConfigFile: "grid.conf"})
}

func dial(t *testing.T, s *natsembed.Server, cfg natsconn.Config) (*conn, error) {
	t.Helper()
	opts, err := cfg.Options()
	if err != nil {
		return nil, err
	}
	c := &conn{name: cfg.Name, errs: make(chan error, 64), srv: s}
	opts = append(opts, nats.MaxReconnects(0), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case c.errs <- err:
		default:
		}
	}))
	c.Conn, err = nats.Connect(s.ClientURL(), opts...)
	if err != nil {
		return nil, err
	}
	t.Cleanup(c.Close)
	return c, nil
}

func connect(t *testing.T, s *natsembed.Server, cfg natsconn.Config) *conn {
	t.Helper()
	c, err := dial(t, s, cfg)
	if err != nil {
		t.Fatalf("connect as %s: %v", cfg.Name, err)
	}
	return c
}

// denied waits for the server to report a permission violation naming
// subject to c.
func (c *conn) denied(t *testing.T, what, subject string) {
	t.Helper()
	timeout := time.NewTimer(waitLimit)
	defer timeout.Stop()
	for {
		select {
		case err := <-c.errs:
			if errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(err.Error(), `"`+subject+`"`) &&
				strings.Contains(err.Error(), what) {
				t.Logf("%s: %v", c.name, err)
				return
			}
		case <-timeout.C:
			t.Fatalf("%s: no permission violation for %s to %q", c.name, what, subject)
		}
	}
}

// noViolations checks that c got no permission violation so far.
func (c *conn) noViolations(t *testing.T) {
	t.Helper()
	if err := c.Flush(); err != nil {
		t.Fatalf("%s flush: %v", c.name, err)
	}
	select {
	case err := <-c.errs:
		t.Fatalf("%s: unexpected error: %v", c.name, err)
	default:
	}
}

func publish(t *testing.T, c *conn, subject, data string) {
	t.Helper()
	if err := c.Publish(subject, []byte(data)); err != nil {
		t.Fatalf("%s publish %s: %v", c.name, subject, err)
	}
	if err := c.Flush(); err != nil {
		t.Fatalf("%s flush: %v", c.name, err)
	}
}

// setupBroker creates the streams and the bucket as the NATS admin does
// at install (lookahead-broker init), and returns the broker's JetStream
// handle and its view of the bucket.
func setupBroker(t *testing.T, broker *conn) (jetstream.JetStream, jetstream.KeyValue) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	admin := connect(t, broker.srv, adminCfg)
	adminJS, _ := jetstream.New(admin.Conn)
	if _, err := daemon.Init(ctx, adminJS, 1, 5*time.Minute); err != nil {
		t.Fatalf("the admin creates the streams and the bucket: %v", err)
	}
	if _, err := daemon.InitLease(ctx, adminJS, 1, 10*time.Second); err != nil {
		t.Fatalf("the admin creates the lease bucket: %v", err)
	}
	js, err := jetstream.New(broker.Conn)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, wire.ForecastBucket)
	if err != nil {
		t.Fatalf("broker binds the forecast bucket: %v", err)
	}
	return js, kv
}

// nextMsg returns the next message of sub or fails.
func nextMsg(t *testing.T, sub *nats.Subscription) *nats.Msg {
	t.Helper()
	m, err := sub.NextMsg(waitLimit)
	if err != nil {
		t.Fatalf("waiting on %s: %v", sub.Subject, err)
	}
	return m
}

// nothingPending checks that sub holds no message. Callers first make
// sure a later message on the same connection has arrived, so anything
// that was going to reach sub already has.
func nothingPending(t *testing.T, sub *nats.Subscription) {
	t.Helper()
	if n, _, _ := sub.Pending(); n != 0 {
		m, _ := sub.NextMsg(0)
		t.Fatalf("%s received %d message(s), first on %s", sub.Subject, n, m.Subject)
	}
}

func TestAgentPublishesOnlyAsItsOwnSite(t *testing.T) {
	s := startGrid(t)
	broker := connect(t, s, brokerCfg)
	alpha := connect(t, s, alphaCfg)
	_, brokerKV := setupBroker(t, broker)
	forecasts, err := broker.SubscribeSync(wire.ForecastSubjects)
	if err != nil {
		t.Fatal(err)
	}
	broker.noViolations(t)

	// alpha tries to publish a forecast as beta, then publishes its own.
	publish(t, alpha, wire.ForecastSubject("beta"), `{"site":"beta"}`)
	alpha.denied(t, "Publish", wire.ForecastSubject("beta"))
	publish(t, alpha, wire.ForecastSubject("alpha"), `{"site":"alpha"}`)
	if m := nextMsg(t, forecasts); m.Subject != wire.ForecastSubject("alpha") {
		t.Fatalf("broker got a forecast on %s", m.Subject)
	}
	nothingPending(t, forecasts)

	// KV: alpha may put its own key, not beta's.
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	ajs, err := jetstream.New(alpha.Conn)
	if err != nil {
		t.Fatal(err)
	}
	akv, err := ajs.KeyValue(ctx, wire.ForecastBucket)
	if err != nil {
		t.Fatalf("alpha binds the forecast bucket: %v", err)
	}
	if _, err := akv.Put(ctx, "alpha", []byte("alpha's forecast")); err != nil {
		t.Fatalf("alpha puts its own key: %v", err)
	}
	short, cancelShort := context.WithTimeout(ctx, time.Second)
	_, err = akv.Put(short, "beta", []byte("forged"))
	cancelShort()
	if err == nil {
		t.Fatal("alpha put beta's KV key")
	}
	alpha.denied(t, "Publish", "$KV."+wire.ForecastBucket+".beta")
	if _, err := brokerKV.Get(ctx, "beta"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("beta's key after alpha's attempt: %v", err)
	}
	if e, err := brokerKV.Get(ctx, "alpha"); err != nil || string(e.Value()) != "alpha's forecast" {
		t.Fatalf("alpha's key: %v", err)
	}
	if e, err := akv.Get(ctx, "alpha"); err != nil || string(e.Value()) != "alpha's forecast" {
		t.Fatalf("alpha reads back its own key: %v", err)
	}

	// Audit: alpha's own records go into the stream; records as beta do not.
	if _, err := ajs.Publish(ctx, wire.AuditSubject("alpha", "reserve"), []byte(`{}`)); err != nil {
		t.Fatalf("alpha appends an audit record: %v", err)
	}
	short, cancelShort = context.WithTimeout(ctx, time.Second)
	_, err = ajs.Publish(short, wire.AuditSubject("beta", "reserve"), []byte(`{}`))
	cancelShort()
	if err == nil {
		t.Fatal("alpha appended an audit record as beta")
	}
	alpha.denied(t, "Publish", wire.AuditSubject("beta", "reserve"))
	publish(t, alpha, wire.JobEventSubject("beta", "g1"), `{}`)
	alpha.denied(t, "Publish", wire.JobEventSubject("beta", "g1"))

	bjs, _ := jetstream.New(broker.Conn)
	st, err := bjs.Stream(ctx, wire.AuditStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(wire.AuditSubjects))
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 || info.State.Subjects[wire.AuditSubject("alpha", "reserve")] != 1 {
		t.Fatalf("audit stream holds %d records by subject %v, want alpha's one", info.State.Msgs, info.State.Subjects)
	}

	agentReadsOnlyTermRecords(t, ctx, alpha, bjs)

	// Nor may an agent touch JetStream beyond binding.
	publish(t, alpha, "$JS.API.STREAM.DELETE."+wire.AuditStream, "")
	alpha.denied(t, "Publish", "$JS.API.STREAM.DELETE."+wire.AuditStream)
	publish(t, alpha, "$JS.API.STREAM.PURGE.KV_"+wire.ForecastBucket, "")
	alpha.denied(t, "Publish", "$JS.API.STREAM.PURGE.KV_"+wire.ForecastBucket)
}

// agentReadsOnlyTermRecords: an agent reads the job stream's last term
// record (it verifies broker epochs with it: agent/epoch_verify.go) and
// nothing else of the stream — no job's events, no message by sequence.
func agentReadsOnlyTermRecords(t *testing.T, ctx context.Context, alpha *conn, bjs jetstream.JetStream) {
	t.Helper()
	if _, err := bjs.Publish(ctx, "lookahead.jobs.g1", []byte(`{"kind":"submitted"}`)); err != nil {
		t.Fatal(err)
	}
	ack, err := bjs.Publish(ctx, wire.JobEpochSubject, []byte(`{"type":"epoch.v1","broker":"b1"}`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := alpha.Request("$JS.API.DIRECT.GET."+wire.JobStream+"."+wire.JobEpochSubject, nil, waitLimit)
	if err != nil || m.Header.Get(jetstream.SequenceHeader) != strconv.FormatUint(ack.Sequence, 10) {
		t.Fatalf("alpha reads the last term record: %v %v, want sequence %d", m, err, ack.Sequence)
	}
	for _, subject := range []string{
		"$JS.API.DIRECT.GET." + wire.JobStream + ".lookahead.jobs.g1",
		"$JS.API.DIRECT.GET." + wire.JobStream,
		"$JS.API.STREAM.MSG.GET." + wire.JobStream,
		"$JS.API.STREAM.INFO." + wire.JobStream,
	} {
		publish(t, alpha, subject, `{"seq":1}`)
		alpha.denied(t, "Publish", subject)
	}
}

// addAgentService registers site's reservation service as the agent does
// (a micro service under lookahead.agent.<site>), answering with the site.
func addAgentService(t *testing.T, c *conn, site string) {
	t.Helper()
	svc, err := micro.AddService(c.Conn, micro.Config{Name: wire.AgentServiceName, Version: "0.0.1"})
	if err != nil {
		t.Fatalf("%s micro service: %v", site, err)
	}
	t.Cleanup(func() { svc.Stop() })
	g := svc.AddGroup("lookahead.agent." + site)
	for _, verb := range []string{wire.VerbReserve, wire.VerbRelease, wire.VerbList} {
		err := g.AddEndpoint(verb, micro.HandlerFunc(func(r micro.Request) {
			r.Respond([]byte(site + " " + verb))
		}))
		if err != nil {
			t.Fatalf("%s endpoint %s: %v", site, verb, err)
		}
	}
}

func TestAgentReceivesOnlyItsOwnRequests(t *testing.T) {
	s := startGrid(t)
	broker := connect(t, s, brokerCfg)
	alpha := connect(t, s, alphaCfg)
	beta := connect(t, s, betaCfg)
	addAgentService(t, alpha, "alpha")
	addAgentService(t, beta, "beta")
	alpha.noViolations(t)
	beta.noViolations(t)

	var spies []*nats.Subscription
	spy := func(subject, queue string) {
		t.Helper()
		var sub *nats.Subscription
		var err error
		if queue == "" {
			sub, err = alpha.SubscribeSync(subject)
		} else {
			sub, err = alpha.QueueSubscribeSync(subject, queue)
		}
		if err != nil {
			t.Fatal(err)
		}
		alpha.Flush()
		alpha.denied(t, "Subscription", subject)
		spies = append(spies, sub)
	}
	spy(wire.AgentSubject("beta", wire.VerbReserve), "")
	spy(wire.AgentSubject("beta", wire.VerbReserve), "q") // micro's queue group: stealing requests
	spy("lookahead.agent.beta.>", "")
	spy("lookahead.agent.*.reserve", "")
	spy(wire.AgentSubjects, "")
	spy("_INBOX_broker.>", "") // the broker's replies
	spy("_INBOX.>", "")

	for _, site := range []string{"beta", "alpha"} {
		for _, verb := range []string{wire.VerbReserve, wire.VerbRelease, wire.VerbList} {
			m, err := broker.Request(wire.AgentSubject(site, verb), []byte(`{}`), waitLimit)
			if err != nil {
				t.Fatalf("broker %s request to %s: %v", verb, site, err)
			}
			if want := site + " " + verb; string(m.Data) != want {
				t.Fatalf("reply %q, want %q", m.Data, want)
			}
		}
	}
	// alpha answered its own requests after beta's were sent, so anything
	// of beta's that could reach alpha is already there.
	for _, sub := range spies {
		nothingPending(t, sub)
	}
	broker.noViolations(t)
}

func TestCLICannotPublishForecasts(t *testing.T) {
	s := startGrid(t)
	broker := connect(t, s, brokerCfg)
	alpha := connect(t, s, alphaCfg)
	setupBroker(t, broker)
	forecasts, err := broker.SubscribeSync(wire.ForecastSubjects)
	if err != nil {
		t.Fatal(err)
	}
	broker.Flush()
	for _, cfg := range []natsconn.Config{portalCfg, aliceCfg, operatorCfg} {
		cli := connect(t, s, cfg)
		for _, subject := range []string{
			wire.ForecastSubject("alpha"),
			"$KV." + wire.ForecastBucket + ".alpha",
			wire.AuditSubject("alpha", "reserve"),
			wire.AuditSubject("broker", "commit"),
		} {
			publish(t, cli, subject, "forged")
			cli.denied(t, "Publish", subject)
		}
		// neither grid users nor the operator may reach agents at all
		publish(t, cli, wire.AgentSubject("alpha", wire.VerbReserve), "{}")
		cli.denied(t, "Publish", wire.AgentSubject("alpha", wire.VerbReserve))
	}
	publish(t, alpha, wire.ForecastSubject("alpha"), "real")
	if m := nextMsg(t, forecasts); string(m.Data) != "real" {
		t.Fatalf("broker got forecast %q", m.Data)
	}
	nothingPending(t, forecasts)
}

// requestInfo is what the broker reads from Nats-Request-Info.
type requestInfo struct {
	Account string `json:"acc"`
	User    string `json:"user"`
}

func TestSubmitterIdentityIsEnforced(t *testing.T) {
	s := startGrid(t)
	broker := connect(t, s, brokerCfg)
	svc, err := micro.AddService(broker.Conn, micro.Config{Name: wire.BrokerServiceName, Version: "0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Stop()
	// As the broker does: submit on the plain subject and on submit.<user>;
	// the reply echoes the subject and the server-stamped identity.
	echo := micro.HandlerFunc(func(r micro.Request) {
		r.Respond([]byte(r.Subject() + " " + r.Headers().Get("Nats-Request-Info")))
	})
	for name, subject := range map[string]string{
		"submit":    wire.BrokerSubject(wire.VerbSubmit),
		"submit-as": wire.BrokerUserSubject(wire.VerbSubmit, "*"),
		"status":    wire.BrokerSubject(wire.VerbStatus),
		"status-as": wire.BrokerUserSubject(wire.VerbStatus, "*"),
	} {
		if err := svc.AddEndpoint(name, echo, micro.WithEndpointSubject(subject)); err != nil {
			t.Fatal(err)
		}
	}
	broker.Flush()

	for _, tc := range []struct {
		cfg  natsconn.Config
		want requestInfo
	}{
		{portalCfg, requestInfo{"USERS", "portal"}},
		{aliceCfg, requestInfo{"USERS", aliceKey}},
	} {
		cli := connect(t, s, tc.cfg)
		own := wire.BrokerUserSubject(wire.VerbSubmit, tc.cfg.Name)
		msg := nats.NewMsg(own)
		// a forged identity must be replaced by the server
		msg.Header.Set("Nats-Request-Info", `{"acc":"GRID","user":"broker"}`)
		reply, err := cli.RequestMsg(msg, waitLimit)
		if err != nil {
			t.Fatalf("%s submit: %v", tc.cfg.Name, err)
		}
		subject, info, _ := strings.Cut(string(reply.Data), " ")
		var got requestInfo
		if err := json.Unmarshal([]byte(info), &got); err != nil {
			t.Fatalf("%s: request info %q: %v", tc.cfg.Name, info, err)
		}
		if subject != own || got != tc.want {
			t.Errorf("%s: broker saw %s %+v, want %s %+v", tc.cfg.Name, subject, got, own, tc.want)
		}
		if _, err := cli.Request(wire.BrokerUserSubject(wire.VerbStatus, tc.cfg.Name), nil, waitLimit); err != nil {
			t.Errorf("%s status: %v", tc.cfg.Name, err)
		}
		cli.noViolations(t)

		// submitting as someone else, or anonymously, is refused by the
		// server; so is asking for the queue as someone else or as an
		// operator (the plain status subject)
		for _, subject := range []string{
			wire.BrokerUserSubject(wire.VerbSubmit, "mallory"),
			wire.BrokerUserSubject(wire.VerbCancel, "operator"),
			wire.BrokerSubject(wire.VerbSubmit),
			wire.BrokerSubject(wire.VerbAudit),
			wire.BrokerSubject(wire.VerbStatus),
			wire.BrokerUserSubject(wire.VerbStatus, "operator"),
		} {
			publish(t, cli, subject, "{}")
			cli.denied(t, "Publish", subject)
		}
	}

	// The operator is inside GRID: its requests carry no server-stamped
	// header; its identity is the subject token it is allowed.
	op := connect(t, s, operatorCfg)
	reply, err := op.Request(wire.BrokerUserSubject(wire.VerbSubmit, "operator"), nil, waitLimit)
	if err != nil {
		t.Fatalf("operator submit: %v", err)
	}
	if want := wire.BrokerUserSubject(wire.VerbSubmit, "operator") + " "; string(reply.Data) != want {
		t.Errorf("operator request: broker saw %q, want %q", reply.Data, want)
	}
	publish(t, op, wire.BrokerUserSubject(wire.VerbSubmit, "alice"), "{}")
	op.denied(t, "Publish", wire.BrokerUserSubject(wire.VerbSubmit, "alice"))
}

// Issue 15.5: the broker's identity could shrink the audit stream with
// STREAM.UPDATE (max_msgs: 1). The admin creates the stream at install;
// the broker may append to it and nothing else.
func TestBrokerCannotEraseTheAuditTrail(t *testing.T) {
	s := startGrid(t)
	broker := connect(t, s, brokerCfg)
	js, _ := setupBroker(t, broker)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	for range 3 {
		if _, err := js.Publish(ctx, wire.AuditSubject("broker", "commit"), []byte(`{}`)); err != nil {
			t.Fatalf("broker appends an audit record: %v", err)
		}
	}
	shrink, _ := json.Marshal(map[string]any{"name": wire.AuditStream, "subjects": []string{wire.AuditSubjects},
		"storage": "file", "max_msgs": 1, "deny_delete": true, "deny_purge": true, "retention": "limits", "discard": "old", "num_replicas": 1})
	for _, subject := range []string{
		"$JS.API.STREAM.UPDATE." + wire.AuditStream,
		"$JS.API.STREAM.CREATE." + wire.AuditStream,
		"$JS.API.STREAM.PURGE." + wire.AuditStream,
		"$JS.API.STREAM.DELETE." + wire.AuditStream,
		"$JS.API.STREAM.MSG.DELETE." + wire.AuditStream,
		"$JS.API.STREAM.UPDATE." + wire.JobStream,
		"$JS.API.STREAM.DELETE." + wire.JobStream,
		wire.ForecastSubject("alpha"),
		"$KV." + wire.ForecastBucket + ".alpha",
		wire.AuditSubject("alpha", "reserve"),
	} {
		publish(t, broker, subject, string(shrink))
		broker.denied(t, "Publish", subject)
	}
	st, err := js.Stream(ctx, wire.AuditStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 3 || info.Config.MaxMsgs > 0 || !info.Config.DenyPurge || !info.Config.DenyDelete {
		t.Fatalf("audit stream holds %d records (want 3), config %+v", info.State.Msgs, info.Config)
	}
	// The broker trims its own queue below a snapshot: purge is allowed on
	// the job stream, and only there.
	if _, err := js.Publish(ctx, wire.JobSnapshotSubject, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	jobs, err := js.Stream(ctx, wire.JobStream)
	if err != nil {
		t.Fatal(err)
	}
	if err := jobs.Purge(ctx); err != nil {
		t.Fatalf("broker purges its job stream: %v", err)
	}
}

// A broker started before the admin ran init cannot create the audit
// stream, and says who must.
func TestBrokerWithoutInitSaysWhoCreatesTheStreams(t *testing.T) {
	s := startGrid(t)
	broker := connect(t, s, brokerCfg)
	b, err := daemon.New(broker.Conn, daemon.Config{Planner: brokertest.Planner, Queue: daemon.FCFS})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- b.Run(context.Background()) }() // JetStream's own 5 s timeout ends the create
	select {
	case err = <-done:
	case <-time.After(3 * waitLimit):
		t.Fatal("broker neither started nor failed")
	}
	if err == nil || !strings.Contains(err.Error(), "lookahead-broker init") || !strings.Contains(err.Error(), wire.AuditStream) {
		t.Fatalf("broker without the audit stream: %v", err)
	}
}

func TestUnknownIdentitiesAreRefused(t *testing.T) {
	s := startGrid(t)
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := kp.Seed()
	stranger := t.TempDir() + "/stranger.nk"
	if err := writeFile(stranger, seed); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []natsconn.Config{
		{Name: "anonymous"},
		{Name: "unknown nkey", NKeySeed: stranger},
		{Name: "wrong password", User: "portal", Password: "alice-example-password"},
		{Name: "unknown user", User: "mallory", Password: "x"},
	} {
		if _, err := dial(t, s, cfg); err == nil || !strings.Contains(err.Error(), "Authorization Violation") {
			t.Errorf("%s: connect gave %v, want an authorization violation", cfg.Name, err)
		}
	}
}

// The CLI's connection, given only a user and password, picks the inbox
// prefix grid.conf allows that user, so the broker's replies reach it.
func TestCLIDefaultInboxPrefixGetsReplies(t *testing.T) {
	s := startGrid(t)
	broker := connect(t, s, brokerCfg)
	sub, err := broker.Subscribe(wire.BrokerUserSubject(wire.VerbStatus, "portal"), func(m *nats.Msg) {
		m.Respond([]byte(`{"type":"status-reply.v1","code":"ok"}`))
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	broker.Flush()
	cfg := portalCfg
	cfg.InboxPrefix, cfg.URL = "", s.ClientURL()
	conn := client.Conn{NATS: cfg, Timeout: waitLimit}
	cl, err := conn.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if got := cl.Conn().NewRespInbox(); !strings.HasPrefix(got, "_INBOX_portal.") {
		t.Fatalf("reply inbox %q, want the _INBOX_portal prefix", got)
	}
	if _, err := cl.Status(context.Background(), "", true); err != nil {
		t.Fatalf("status through grid.conf: %v", err)
	}
}
