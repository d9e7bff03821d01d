package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"lookahead/agent/simsite"
	"lookahead/broker"
	"lookahead/broker/client"
	"lookahead/forecast"
	"lookahead/internal/logtest"
	"lookahead/wire"
)

func TestBundledTracesLoad(t *testing.T) {
	for _, s := range Sites {
		jobs, skipped, err := loadTrace(s.Trace, s.Name)
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) < 200 || skipped > len(jobs)/10 {
			t.Errorf("%s: %d jobs, %d skipped", s.Trace, len(jobs), skipped)
		}
		for _, j := range jobs {
			if j.Procs > s.procs() {
				t.Errorf("%s: job %s wants %d procs, the site has %d", s.Trace, j.ID, j.Procs, s.procs())
				break
			}
		}
	}
}

func TestReadSWFRejectsBadLines(t *testing.T) {
	for name, in := range map[string]string{
		"short":   "1 0 10 100 4\n",
		"letters": "1 0 10 100 x 1 1 4 200 1 1 1 1 1 1 1 1 1\n",
	} {
		if _, _, err := readSWF(strings.NewReader(in), "t"); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%s: error %v, want one naming line 1", name, err)
		}
	}
	jobs, skipped, err := readSWF(strings.NewReader("; c\n1 5 10 100 -1 1 1 -1 200 1 1 1 1 1 1 1 1 1\n2 9 10 100 4 1 1 4 -1 1 1 1 1 1 1 1 1 1\n"), "t")
	if err != nil || skipped != 1 || len(jobs) != 1 || jobs[0].Walltime != 100 || jobs[0].Submit != 0 {
		t.Fatalf("jobs %+v skipped %d err %v", jobs, skipped, err)
	}
}

func TestGridJobsCarryScriptsAndOneFailure(t *testing.T) {
	jobs := gridJobs(24, time.Hour, 1, 240)
	scripted := 0
	for i, g := range jobs {
		if g.Script == nil {
			continue
		}
		scripted++
		// every simulated site must be able to read it, and the failing
		// job must fail on alpha, beta and delta (any two sites include
		// one) and run on gamma
		for _, site := range Sites {
			b, err := simsite.ParseBehaviour(g.Script, site.Name)
			if err != nil {
				t.Fatalf("job %d on %s: %v", i, site.Name, err)
			}
			if fails := b.Exit != 0; fails != (i == 3 && site.Name != "gamma") {
				t.Errorf("job %d on %s: behaviour %+v", i, site.Name, b)
			}
			if b.Runtime < 0 || b.Runtime > time.Duration(g.Job.Walltime)*time.Second { // 0: the walltime
				t.Errorf("job %d on %s: runtime %v, walltime %d s", i, site.Name, b.Runtime, g.Job.Walltime)
			}
		}
	}
	if scripted < 8 || scripted == len(jobs) {
		t.Fatalf("%d of %d jobs with a script: want some, not all (the launcher plays the others)", scripted, len(jobs))
	}
}

func TestGridJobsIncludeMultiSiteAndOverBudget(t *testing.T) {
	jobs := gridJobs(24, time.Hour, 1, 240)
	wide := 0
	for _, g := range jobs {
		if g.Job.Procs > 240 {
			wide++
		}
		if err := g.Job.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	if wide < 5 {
		t.Fatalf("%d jobs wider than any site", wide)
	}
}

// TestDemoRunsEndToEnd runs a demo until what it must show has happened,
// judged on the broker's job events and the jobs' final states, never on
// the live output's lines or on how much happened in a fixed time (a
// loaded machine runs the same simulated hours with fewer cycles): real
// embedded NATS, simulated sites with their agents, the broker with the
// co-allocation core. Every site publishes forecasts; the ten jobs are
// submitted; a job with a script has its part on delta dispatched through
// the agent's Slurm adapter (sbatch into its reservation: a numeric Slurm
// job id), the simulated Slurm cluster runs it and reports its exit
// status, and the job concludes finished; a job spans the Slurm-kind site
// and a Torque/Maui one; the closing audit finds the broker and the sites
// in agreement.
func TestDemoRunsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a demo for up to 3 minutes (about 15 s on an idle machine)")
	}
	w := newWatch(10)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() {
		select {
		case <-w.done:
			stop()
		case <-ctx.Done():
		}
	}()
	var out bytes.Buffer
	// The jobs arrive over the same 1.8 simulated hours as in a 12 s demo;
	// the demo ends when the watch has seen everything (or, failing, after
	// 3 minutes).
	sum, err := Run(ctx, Options{Duration: 3 * time.Minute, Window: 108 * time.Minute, Speed: 900, Jobs: 10, Out: &out,
		Observer: w})
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if missing := w.missing(); len(missing) > 0 {
		t.Errorf("the demo ended without: %s", strings.Join(missing, "; "))
	}
	if sum.Placed == 0 || sum.Submitted != 10 || sum.Scripted == 0 || sum.CrossKind == 0 || sum.AuditFindings != 0 || sum.AuditErrors != 0 {
		t.Errorf("summary %+v", sum)
	}
	if t.Failed() {
		t.Logf("live output:\n%s", out.String())
	}
}

// watch follows a demo by its events: which sites forecast, which jobs
// were submitted, reserved across kinds, dispatched on the Slurm-kind
// site and concluded. done closes once all of it was seen.
type watch struct {
	mu        sync.Mutex
	jobs      int
	online    map[string]bool
	submitted int
	crossKind string
	slurmPart map[string]string // job → its part's Slurm job id on delta
	finished  string            // a job with a part on delta that concluded finished
	done      chan struct{}
	closed    bool
}

func newWatch(jobs int) *watch {
	return &watch{jobs: jobs, online: map[string]bool{}, slurmPart: map[string]string{}, done: make(chan struct{})}
}

func (w *watch) Forecast(site string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.online[site] = true
	w.check()
}

// Submitted counts answers, refusals too (one job is over budget).
func (w *watch) Submitted(wire.SubmitReply) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.submitted++
	w.check()
}

func (w *watch) Event(e broker.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch e.Kind {
	case broker.EvOutcome:
		kinds := map[string]bool{}
		for _, r := range e.Reservations {
			kinds[kindOf(r.Site)] = true
		}
		if e.OK && len(kinds) > 1 {
			w.crossKind = e.Job
		}
	case broker.EvDispatched:
		if e.Site == "delta" && e.Part != nil && isNumber(e.Part.LocalID) {
			w.slurmPart[e.Job] = e.Part.LocalID
		}
	case broker.EvConcluded:
		if _, ok := w.slurmPart[e.Job]; ok && e.State == wire.JobFinished {
			w.finished = e.Job
		}
	}
	w.check()
}

// check closes done when everything was seen; w.mu is held.
func (w *watch) check() {
	if !w.closed && len(w.missing()) == 0 {
		w.closed = true
		close(w.done)
	}
}

func (w *watch) missing() []string {
	var m []string
	for _, s := range Sites {
		if !w.online[s.Name] {
			m = append(m, "a forecast of "+s.Name)
		}
	}
	if w.submitted < w.jobs {
		m = append(m, fmt.Sprintf("%d submissions (%d)", w.jobs, w.submitted))
	}
	if w.crossKind == "" {
		m = append(m, "a job reserved across a Slurm-kind and a Torque/Maui-kind site")
	}
	if len(w.slurmPart) == 0 {
		m = append(m, "a part dispatched on delta through the Slurm adapter (a numeric Slurm job id)")
	}
	if w.finished == "" {
		m = append(m, "a job with a part on delta concluded finished")
	}
	return m
}

func isNumber(s string) bool {
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}

func TestDemoStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &logtest.Buffer{}
	go func() { // cancel once the demo plans (its first "plan" line), not after a fixed time
		for !strings.Contains(out.String(), " plan ") && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
	}()
	began := time.Now()
	// Ten minutes unless cancelled: stopping within two (a loaded machine's
	// shutdown, not a timing claim) shows the cancel stopped it.
	_, err := Run(ctx, Options{Duration: 10 * time.Minute, Out: out})
	if err != context.Canceled {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if time.Since(began) > 2*time.Minute || !strings.Contains(out.String(), "summary (interrupted)") {
		t.Fatalf("did not stop cleanly:\n%s", out.String())
	}
}

// TestDemoServesTheWebView: the demo prints the web view's loopback
// address and serves the page and its API while it runs, and prints the
// NATS address lookahead status asks its broker on: a job nothing is
// cheap enough for, submitted there, has a status that says what was
// short and what would help (the planner's Explain, bound with
// UsePlanner as lookahead-broker binds it).
func TestDemoServesTheWebView(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a demo")
	}
	out := &logtest.Buffer{}
	done := make(chan error, 1)
	// Long enough for a loaded machine; the test stops it once it has seen
	// what it needs (it waits for conditions, never for a fixed time).
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() {
		_, err := Run(ctx, Options{Duration: 2 * time.Minute, Jobs: 2, Out: out})
		done <- err
	}()
	line := regexp.MustCompile(`web +(http://127\.0\.0\.1:[0-9]+/) `)
	url := ""
	for deadline := time.Now().Add(time.Minute); url == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if m := line.FindStringSubmatch(out.String()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		t.Fatalf("no web view line:\n%s", out)
	}
	page := get(t, url)
	if !strings.Contains(page, `<script src="/app.js"`) {
		t.Errorf("page: %s", page)
	}
	// Every site comes online (the demo runs until stopped).
	ov := ""
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if ov = get(t, url+"api/overview"); strings.Contains(ov, `"site":"alpha"`) && strings.Contains(ov, `"site":"beta"`) && strings.Contains(ov, `"site":"gamma"`) {
			break
		}
	}
	if !strings.Contains(ov, `"site":"alpha"`) || !strings.Contains(ov, `"site":"beta"`) || !strings.Contains(ov, `"site":"gamma"`) {
		t.Errorf("overview: %s", ov)
	}
	checkStatusAt(t, out.String())
	stop()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if _, err := http.Get(url); err == nil {
		t.Error("the web view is still up after the demo ended")
	}
}

// checkStatusAt submits a job at the NATS address the demo printed and
// asks its status there, as lookahead submit and status do.
func checkStatusAt(t *testing.T, out string) {
	t.Helper()
	m := regexp.MustCompile(`nats +(nats://127\.0\.0\.1:[0-9]+) `).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no nats line:\n%s", out)
	}
	nc, err := nats.Connect(m[1])
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := client.New(nc, "")
	rep, err := cl.Submit(ctx, forecast.JobRequest{Procs: 8, Walltime: 3600, MaxPrice: 0.1, User: "alice", Account: "proj1"}, "cheap")
	if err != nil || rep.Code != wire.CodeOK {
		t.Fatalf("submit at %s: %+v %v", m[1], rep, err)
	}
	var st wire.StatusReply
	for ctx.Err() == nil {
		if st, err = cl.Status(ctx, rep.Job, false); err != nil {
			t.Fatalf("status at %s: %v", m[1], err)
		}
		if len(st.Jobs) == 1 && st.Jobs[0].Plan != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The planner's Explain, as lookahead-broker's status gives it: what
	// was short and what would help.
	if why := st.Jobs[0].Plan.Why; !strings.Contains(why, "at max_price 0.1 at most 0 of its 8 processors") || !strings.Contains(why, "what would help: max_price") {
		t.Errorf("status of a job nothing is cheap enough for says why %q, want what was short and what would help", why)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	r, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != 200 {
		t.Fatalf("GET %s: %s %s", url, r.Status, b)
	}
	return string(b)
}
