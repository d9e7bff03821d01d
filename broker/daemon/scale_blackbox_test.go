package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"lookahead/broker/client"
	"lookahead/forecast"
	"lookahead/internal/natsembed"
	"lookahead/internal/natstest"
	"lookahead/wire"
)

// TestScaleBlackBox runs the shipped broker (built from cmd/lookahead-broker)
// at the scale of issue 39 against a NATS server in this process: the
// forecasts of 100 sites × 500 nodes (7 days) in the bucket, 100,000 jobs
// submitted through the broker's NATS API as the CLI does; then a restart
// of the broker, whose first cycle plans the whole queue from scratch, a
// cycle where only time passed, one after a single arrival, and a minute
// of forecast intake (a heartbeat per site, then a new revision of every
// site). It reports the broker's cycle times (its own log), its CPU time
// (/proc) and its peak resident set. Only with LOOKAHEADTEST_SCALE_BLACKBOX=1
// (tens of minutes on a shared machine); the figures are in docs/broker.md.
func TestScaleBlackBox(t *testing.T) {
	if os.Getenv("LOOKAHEADTEST_SCALE_BLACKBOX") == "" {
		t.Skip("set LOOKAHEADTEST_SCALE_BLACKBOX=1 (tens of minutes)")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "lookahead-broker")
	build := exec.Command("go", "build", "-o", bin, "lookahead/cmd/lookahead-broker")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	srv := natstest.ServerWith(t, natsembed.Options{StoreDir: filepath.Join(dir, "nats")})
	nc := natstest.Connect(t, srv)

	g := scaleGrid{sites: scaleSites, nodes: scaleNodes, jobs: scaleJobs}
	if os.Getenv("LOOKAHEADTEST_SCALE_BLACKBOX") == "small" { // a rehearsal of the run
		g = scaleGrid{sites: 10, nodes: 50, jobs: 2000}
	}
	fill := startShipped(t, bin, dir, srv.ClientURL(), "1h") // no cycle while the queue fills
	publishForecasts(t, nc, g, 1)
	began := time.Now()
	submitMany(t, nc, g.jobs)
	t.Logf("%d jobs submitted in %v (%.0f/s); broker: %s", g.jobs, time.Since(began).Round(time.Second),
		float64(g.jobs)/time.Since(began).Seconds(), fill.usage())
	fill.stop(t)

	b := startShipped(t, bin, dir, srv.ClientURL(), "30s")
	cpu0 := b.cpu() // the queue replayed, the stored forecasts read
	first := b.cycle(t, func(c cycleLine) bool { return c.Jobs >= g.jobs })
	t.Logf("restart: replay %v cpu; first cycle (%d jobs, %d replanned: %s) took %v, cpu %v; broker %s",
		cpu0, first.Jobs, first.replanned(), first.FullWhy, first.took(), b.cpu()-cpu0, b.usage())
	cpu0 = b.cpu()
	idle := b.cycle(t, func(c cycleLine) bool { return c.Cycle > first.Cycle })
	t.Logf("time passing only: %d reused, %d replanned, took %v, cpu %v", idle.Reused, idle.replanned(), idle.took(), b.cpu()-cpu0)
	readWhole(t, nc, b, g.jobs)
	cpu0 = b.cpu()
	submitMany(t, nc, 1)
	arrived := b.cycle(t, func(c cycleLine) bool { return c.Jobs > first.Jobs })
	t.Logf("one arrival: %d new, %d replanned, took %v; cpu for the submission and the cycle %v", arrived.New, arrived.replanned(), arrived.took(), b.cpu()-cpu0)

	cpu0, at := b.cpu(), time.Now()
	heartbeats(t, nc, g)
	time.Sleep(time.Minute - time.Since(at)) // a minute of intake: the rate the goal names
	t.Logf("a heartbeat of each of %d sites in a minute: broker cpu %v (%.2f%% of one core)", g.sites, b.cpu()-cpu0,
		100*float64(b.cpu()-cpu0)/float64(time.Since(at)))
	cpu0, at = b.cpu(), time.Now()
	publishForecasts(t, nc, g, 2)
	c := b.cycle(t, func(c cycleLine) bool { return c.Changed > 0 || c.Full > 0 })
	t.Logf("a new revision of all %d sites: cycle took %v (%d replanned: %d slots changed, %d full); broker cpu %v over %v",
		g.sites, c.took(), c.replanned(), c.Changed, c.Full, b.cpu()-cpu0, time.Since(at).Round(time.Second))
	t.Logf("broker %s", b.usage())
	// /readyz through it all: a cycle that plans every job again after
	// short ones is working, not stuck (health.stuck).
	if n := b.stuck.Load(); n > 0 {
		t.Errorf("the broker judged itself stuck %d time(s) while its cycles ran", n)
	}
	b.stop(t)
}

// readWhole reads the broker's plan and the queue's status whole, page
// by page, as `lookahead plan` and `lookahead status --all` do, and
// reports what each cost.
func readWhole(t *testing.T, nc *nats.Conn, b *shipped, jobs int) {
	t.Helper()
	cl := client.New(nc, "")
	cl.Timeout = time.Minute
	cpu0, at := b.cpu(), time.Now()
	p, err := cl.Plan(context.Background())
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if len(p.Allocations) != jobs || p.Total != jobs {
		t.Fatalf("plan of cycle %d: %d allocations of %d, want %d", p.Cycle, len(p.Allocations), p.Total, jobs)
	}
	t.Logf("the plan read whole (%d allocations) in %v; broker cpu %v", len(p.Allocations), time.Since(at).Round(time.Millisecond), b.cpu()-cpu0)
	cpu0, at = b.cpu(), time.Now()
	st, err := cl.Status(context.Background(), "", true)
	if err != nil || len(st.Jobs) != jobs {
		t.Fatalf("status: %d jobs, %v", len(st.Jobs), err)
	}
	t.Logf("the status of every job read (%d) in %v; broker cpu %v", len(st.Jobs), time.Since(at).Round(time.Millisecond), b.cpu()-cpu0)
}

// scaleGrid is the run's size.
type scaleGrid struct{ sites, nodes, jobs int }

// shipped is a running lookahead-broker child process.
type shipped struct {
	cmd   *exec.Cmd
	lines chan cycleLine
	done  chan struct{}
	stuck atomic.Int64 // "broker not ready" lines that judged it stuck
}

// cycleLine is the broker's "cycle" log line.
type cycleLine struct {
	Cycle, Jobs, Reused, New, Changed, Full int
	Took                                    float64 // ms
	FullWhy                                 string
}

func (c cycleLine) took() time.Duration { return time.Duration(c.Took * float64(time.Millisecond)) }
func (c cycleLine) replanned() int      { return c.New + c.Changed + c.Full }

// startShipped writes a broker.yaml that plans everything and commits
// nothing (no agents answer here: a commit lead of a second, and the
// forecasts free nothing in the first hours) and runs the binary with it
// until it is ready.
func startShipped(t *testing.T, bin, dir, url, cycle string) *shipped {
	t.Helper()
	conf := filepath.Join(dir, "broker.yaml")
	debounce := "1s"
	if cycle == "1h" {
		debounce = cycle // no cycle at all while the queue fills
	}
	text := fmt.Sprintf(`log_level: info
nats: {url: %q}
planning: {cycle: %s, debounce: %s, commit_lead: 1s, site_ttl: 24h, max_clock_skew: 1h}
jobs: {max_active_per_user: 1000000, max_active_per_account: 1000000, snapshot_interval: 24h}
budgets: {default_budget: 1000000000000}
identities: [{nats_user: "*", users: ["*"], accounts: ["*"]}]
state_dir: %q
metrics: {listen: ""}
`, url, cycle, debounce, filepath.Join(dir, "state"))
	os.MkdirAll(filepath.Join(dir, "state"), 0o700)
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--config", conf)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &shipped{cmd: cmd, lines: make(chan cycleLine, 1024), done: make(chan struct{})}
	ready := make(chan struct{})
	go s.read(t, bufio.NewScanner(stderr), ready)
	select {
	case <-ready:
	case <-s.done:
		t.Fatal("the broker exited before it was ready")
	}
	return s
}

func (s *shipped) read(t *testing.T, sc *bufio.Scanner, ready chan struct{}) {
	defer close(s.done)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	once := sync.Once{}
	for sc.Scan() {
		var l map[string]any
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			t.Logf("broker: %s", sc.Text())
			continue
		}
		switch l["message"] {
		case "broker ready":
			once.Do(func() { close(ready) })
		case "cycle":
			num := func(k string) int { v, _ := l[k].(float64); return int(v) }
			took, _ := l["took"].(float64)
			why, _ := l["full_why"].(string)
			s.lines <- cycleLine{Cycle: num("cycle"), Jobs: num("jobs"), Reused: num("reused"), New: num("new"),
				Changed: num("slots_changed"), Full: num("full"), Took: took, FullWhy: why}
		default:
			if why, _ := l["why"].(string); l["message"] == "broker not ready" && strings.HasPrefix(why, "no planning cycle finished") {
				s.stuck.Add(1)
			}
			if lvl, _ := l["level"].(string); lvl == "error" || lvl == "warn" {
				t.Logf("broker: %s", sc.Text())
			}
		}
	}
}

// cycle waits for the first cycle line that match says is the one.
func (s *shipped) cycle(t *testing.T, match func(cycleLine) bool) cycleLine {
	t.Helper()
	for {
		select {
		case c := <-s.lines:
			if match(c) {
				return c
			}
		case <-s.done:
			t.Fatal("the broker exited")
		case <-time.After(2 * time.Hour):
			t.Fatal("no such cycle")
		}
	}
}

// cpu is the broker's user and system time so far.
func (s *shipped) cpu() time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ 100
}

// usage says the broker's CPU time and peak resident set.
func (s *shipped) usage() string {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	hwm := ""
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			hwm = strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:"))
		}
	}
	return fmt.Sprintf("cpu %v, peak RSS %s", s.cpu(), hwm)
}

func (s *shipped) stop(t *testing.T) {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("broker stop: %v", err)
	}
	<-s.done
}

// publishForecasts puts every site's forecast (revision seq, generated
// now) in the bucket, as an agent does.
func publishForecasts(t *testing.T, nc *nats.Conn, g scaleGrid, seq uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	js, _ := jetstream.New(nc)
	var kv jetstream.KeyValue
	for kv == nil {
		kv, _ = js.KeyValue(ctx, wire.ForecastBucket)
		if ctx.Err() != nil {
			t.Fatal("no forecast bucket")
		}
		time.Sleep(100 * time.Millisecond)
	}
	rng := rand.New(rand.NewPCG(7, seq))
	now := time.Now().Unix()
	for s := range g.sites {
		f := syntheticSite(rng, fmt.Sprintf("site%03d", s), s, g.nodes, now, scaleHorizon)
		f.Seq = seq
		// nothing free in the first three hours: no job is due (there is
		// no agent to reserve), and a cycle's answers do not move with now
		f.Slots = slices.DeleteFunc(f.Slots, func(sl forecast.Slot) bool { return sl.End <= now+3*3600 })
		for i := range f.Slots {
			f.Slots[i].Start = max(f.Slots[i].Start, now+3*3600)
		}
		data, err := wire.EncodeForecast(&f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kv.Put(ctx, f.Site, data); err != nil {
			t.Fatal(err)
		}
	}
}

// heartbeats sends every site's heartbeat of revision 1.
func heartbeats(t *testing.T, nc *nats.Conn, g scaleGrid) {
	for s := range g.sites {
		site := fmt.Sprintf("site%03d", s)
		data, _ := json.Marshal(wire.Heartbeat{Type: wire.TypeHeartbeat, Site: site, Seq: 1, Generated: time.Now().Unix()})
		msg := nats.NewMsg(wire.ForecastSubject(site))
		msg.Header.Set(wire.HeaderType, wire.TypeHeartbeat)
		msg.Data = data
		if err := nc.PublishMsg(msg); err != nil {
			t.Fatal(err)
		}
	}
	nc.Flush()
}

// submitMany submits n jobs of the synthetic queue's mix through the
// broker's submit endpoint, 16 at a time, each retried until answered.
func submitMany(t *testing.T, nc *nats.Conn, n int) {
	t.Helper()
	jobs := syntheticQueue(rand.New(rand.NewPCG(5, uint64(n))), n, time.Now().Unix())
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				j := jobs[i]
				j.ID, j.User, j.Account = "", "alice", "proj"
				data, _ := json.Marshal(wire.SubmitRequest{Type: wire.TypeSubmit, RequestID: fmt.Sprintf("scale-%d-%d", n, i), Job: j})
				for try := 0; ; try++ {
					m, err := nc.Request(wire.BrokerSubject(wire.VerbSubmit), data, 30*time.Second)
					var rep wire.SubmitReply
					if err == nil && json.Unmarshal(m.Data, &rep) == nil && rep.Code == wire.CodeOK {
						break
					}
					if try == 20 {
						errs <- fmt.Errorf("submit %d: %v %s", i, err, msgData(m))
						return
					}
					time.Sleep(time.Second)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func msgData(m *nats.Msg) string {
	if m == nil {
		return ""
	}
	return string(m.Data)
}
