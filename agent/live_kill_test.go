package agent_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/maui"
	"lookahead/torque"
	"lookahead/wire"
)

// Issue 35: a kill -9 of Maui loses the reservations made since its last
// checkpoint and brings back those released since. Recorded on the live
// Torque 6.1.3 + Maui 3.3.1 site (testdata/maui/live-kill9, see the
// README; LOOKAHEAD_LIVE=1 with LOOKAHEAD_AGENT_CAPTURE=<dir> records it
// again, killing and restarting the site's Maui), replayed by default:
//
//  1. the agent reserves kn-x, kn-c and kn-r (binding accounts la.acct0,
//     la.acct1, la.acct2); Maui checkpoints them;
//  2. it releases kn-x and kn-r, and reserves kn-b and kn-a, which take
//     la.acct0 and la.acct2 (the smallest free);
//  3. Maui is killed with -9 and started again: kn-x and kn-r are back
//     (bound to "la.acct0+" and "la.acct2+"), kn-c is back altered
//     ("la.acct1+"), kn-a and kn-b are gone;
//  4. an agent starts on the same state and repairs.
//
// Every part was told its binding account; after the repair each job
// must be bound to it again. Before issue 35 the agent kept an account
// only when no reservation of another job named it: kn-a (la.acct2, named
// by the revenant kn-r) was re-created with la.acct0 — kn-b's — and the
// cascade moved kn-b and kn-c too.
func TestRepairAfterMauiKillKeepsEveryBinding(t *testing.T) {
	site := liveKillSite(t)
	nc := startNATS(t)
	state := t.TempDir()
	cfg := testConfig("vm")
	cfg.Refresh, cfg.Debounce, cfg.ForecastTTL = time.Hour, time.Hour, 3*time.Hour // builds at start only
	cfg.HoldState = filepath.Join(state, "grid-holds.json")
	start := site.phase(0).Unix() + 1800
	ask := func(job string) {
		t.Helper()
		r := request[wire.ReserveReply](t, nc, "vm", wire.VerbReserve, wire.ReserveRequest{Type: wire.TypeReserve, Job: job, Site: "vm",
			Start: start, Duration: 600, Nodes: []wire.NodeProcs{{Node: "vm", Procs: 1}},
			Identity: wire.Identity{User: "alice", Account: "proj1"}, RequestedBy: "kill9-test"})
		if r.Code != wire.CodeOK {
			t.Fatalf("reserve %s: %+v", job, r)
		}
	}
	release := func(job string) {
		t.Helper()
		r := request[wire.ReleaseReply](t, nc, "vm", wire.VerbRelease, wire.ReleaseRequest{Type: wire.TypeRelease, Job: job, Site: "vm", RequestedBy: "kill9-test"})
		if r.Code != wire.CodeOK {
			t.Fatalf("release %s: %+v", job, r)
		}
	}
	stop := site.startAgent(t, nc, cfg)
	for _, j := range []string{"kn-x", "kn-c", "kn-r"} {
		ask(j)
	}
	site.awaitCheckpoint(t)
	site.next(t)
	release("kn-x")
	release("kn-r")
	ask("kn-b")
	ask("kn-a")
	binds := site.binds(t)
	want := map[string]string{"kn-a": "la.acct2", "kn-b": "la.acct0", "kn-c": "la.acct1"}
	for job, b := range want {
		if binds[job] != b {
			t.Fatalf("before the kill %s is bound to %q, want %s (all: %v)", job, binds[job], b, binds)
		}
	}
	stop()
	site.killMaui(t)
	site.next(t)
	defer func() { // leave the site clean
		stop := site.startAgent(t, nc, cfg)
		defer stop()
		for _, j := range []string{"kn-a", "kn-b", "kn-c", "kn-r", "kn-x"} {
			release(j)
		}
	}()
	stop = site.startAgent(t, nc, cfg) // its start repairs what the kill lost
	binds = site.binds(t)
	stop()
	for job, b := range want {
		if binds[job] != b {
			t.Errorf("after the repair %s is bound to %q, want %s (its part was told -A %s; all: %v)", job, binds[job], b, b, binds)
		}
	}
	for _, gone := range []string{"kn-x", "kn-r"} {
		if _, back := binds[gone]; back {
			t.Errorf("%s, released before the kill, is still held after the repair: %v", gone, binds)
		}
	}
	var repairs []string
	for _, rec := range auditRecords(t, mustJS(t, nc)) {
		if rec.Action == "repair" {
			repairs = append(repairs, rec.Job+" "+rec.Code+" "+strings.Join(rec.Command, " "))
		}
	}
	t.Logf("repairs:\n%s", strings.Join(repairs, "\n"))
	if len(repairs) != 5 || !strings.HasPrefix(repairs[0], "kn-r ok releaseres") || !strings.HasPrefix(repairs[1], "kn-x ok releaseres") {
		t.Errorf("repairs %q: want kn-r and kn-x released first, then kn-a, kn-b, kn-c re-created", repairs)
	}
}

// killSite is the live site of the kill -9 scenario, or its recording.
type killSite struct {
	run     maui.Runner // what the agent uses (recorded when capturing)
	raw     maui.Runner // live only: waits that must not be recorded
	live    bool
	dir     string
	phases  []time.Time
	current int
}

const killFixture = "testdata/maui/live-kill9"

func liveKillSite(t *testing.T) *killSite {
	t.Helper()
	if os.Getenv("LOOKAHEAD_LIVE") == "1" {
		dir := os.Getenv("LOOKAHEAD_AGENT_CAPTURE")
		raw := maui.NewExecRunner(maui.ExecConfig{BinDir: "/usr/local/maui/bin", HomeDir: "/var/spool/maui"})
		s := &killSite{run: &captureRunner{r: raw, dir: dir}, raw: raw, live: true, dir: dir}
		s.phases = []time.Time{time.Now().Truncate(time.Second)}
		s.savePhases(t)
		return s
	}
	b, err := os.ReadFile(filepath.Join(killFixture, "NOW.txt"))
	if err != nil {
		t.Fatal(err)
	}
	s := &killSite{}
	for _, f := range strings.Fields(string(b)) {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		s.phases = append(s.phases, time.Unix(v, 0))
	}
	if s.run, err = maui.NewFixtureRunner(killFixture); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *killSite) phase(i int) time.Time { return s.phases[i] }

func (s *killSite) now() time.Time { return s.phases[s.current] }

// next moves the clock to the next phase (live: the real time now).
func (s *killSite) next(t *testing.T) {
	t.Helper()
	s.current++
	if s.live {
		s.phases = append(s.phases, time.Now().Truncate(time.Second))
		s.savePhases(t)
	}
	if s.current >= len(s.phases) {
		t.Fatalf("the recording has %d phases", len(s.phases))
	}
}

func (s *killSite) savePhases(t *testing.T) {
	if s.dir == "" {
		return
	}
	var lines []string
	for _, p := range s.phases {
		lines = append(lines, strconv.FormatInt(p.Unix(), 10))
	}
	if err := os.WriteFile(filepath.Join(s.dir, "NOW.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startAgent runs an agent on the site until the returned stop; it
// returns once its start (build, held reservations check) is done.
func (s *killSite) startAgent(t *testing.T, nc *nats.Conn, cfg agent.Config) func() {
	t.Helper()
	clock := s.now
	tq := torque.NewClient(s.run, torque.ClientConfig{Site: "vm", Qstat: "/usr/local/bin/qstat", Pbsnodes: "/usr/local/bin/pbsnodes", Now: clock})
	res := agent.MauiReserver{Runner: s.run, Config: maui.ClientConfig{Location: time.UTC, Now: clock}}
	a, err := agent.New(cfg, agent.Deps{Conn: nc, Now: clock, Reserver: res,
		Snapshotter: agent.HoldingSnapshotter{Snapshotter: agent.TorqueSnapshotter{Client: tq}, Holds: res},
		Engine:      agent.BuiltinEngine{Horizon: 24 * time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	waitService(t, nc, "vm")
	// The first forecast is published after the start's held
	// reservations check (and its repairs).
	for deadline := time.Now().Add(60 * time.Second); a.Status().Forecasts < 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no first forecast")
		}
	}
	return func() { cancel(); <-done }
}

// binds lists lookahead's reservations as Maui shows them: job → binding.
func (s *killSite) binds(t *testing.T) map[string]string {
	t.Helper()
	c := maui.NewClient(s.run, maui.ClientConfig{Location: time.UTC, Now: s.now})
	rs, err := c.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rs {
		out[r.Job] = r.Bind
	}
	return out
}

// awaitCheckpoint waits (live) until Maui wrote its checkpoint after now:
// what was reserved before is then restored by a restart.
func (s *killSite) awaitCheckpoint(t *testing.T) {
	t.Helper()
	if !s.live {
		return
	}
	after := time.Now()
	for deadline := after.Add(8 * time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		if st, err := os.Stat("/var/spool/maui/maui.ck"); err == nil && st.ModTime().After(after) {
			return
		}
	}
	t.Fatal("Maui wrote no checkpoint in 8 minutes")
}

// killMaui kills the site's Maui with SIGKILL and starts it again (live:
// the live stack's own script, which checks the pid before the kill and
// starts Maui detached), waiting until it lists the reservations again.
func (s *killSite) killMaui(t *testing.T) {
	t.Helper()
	if !s.live {
		return
	}
	out, err := exec.Command("/work/scratch/realstack/stack.sh", "kill9-maui").CombinedOutput()
	if err != nil {
		t.Fatalf("kill9-maui: %v: %s", err, out)
	}
	t.Logf("%s", out)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		if res, err := s.raw.Run(context.Background(), "showres"); err == nil && res.ExitCode == 0 && strings.Contains(string(res.Stdout), "la.kn-c") {
			return
		}
	}
	t.Fatal("maui does not list its reservations after its restart")
}
