package maui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"lookahead/forecast"
	"lookahead/internal/execx"
)

// SimulatorConfig configures forecasts by a private Maui in SIMULATION mode.
type SimulatorConfig struct {
	// BinDir holds Maui's clients (schedctl, changeparam, showres, setres,
	// showq). Required.
	BinDir string
	// Server is the maui server binary. Default: BinDir/maui, else
	// BinDir/../sbin/maui (a standard install: clients in bin/, the server
	// in sbin/).
	Server string
	// WorkDir is where each run's private home is made (created if
	// missing; default os.TempDir()).
	WorkDir string
	// SiteConfig is the site's maui.cfg whose policy is copied (optional).
	SiteConfig string
	// Host is SERVERHOST; Maui refuses to start unless it is this host's
	// name (default os.Hostname()).
	Host string
	// Admin is ADMIN1, the user the clients run as (default: current user).
	Admin string
	// Policy is the step policy (defaults: 12 h exact window, 300 s steps).
	Policy StepPolicy
	// Timeout bounds a whole run (default 5 min); CallTimeout each client
	// command (default 20 s).
	Timeout     time.Duration
	CallTimeout time.Duration
	// KeepHome leaves the private home on disk (debugging).
	KeepHome bool
	// Trace tunes how the snapshot becomes traces (Now is set per run).
	Trace TraceOptions
	// Zone is the site's time zone, the one its Maui runs in: the private
	// Maui runs in it so standing reservations' windows land on the
	// site's hours (default: this host's local zone, time.Local).
	Zone *time.Location
}

// Simulator forecasts a site's schedule by running its own scheduler, Maui
// 3.3.1, in SIMULATION mode on a private port with a private home. Each
// Forecast starts a fresh Maui and never leaves it running. Safe for
// concurrent use (runs are independent).
type Simulator struct {
	cfg SimulatorConfig
}

// NewSimulator returns a Simulator.
func NewSimulator(cfg SimulatorConfig) *Simulator {
	if cfg.WorkDir == "" {
		cfg.WorkDir = os.TempDir()
	}
	if cfg.Server == "" {
		cfg.Server = findServer(cfg.BinDir)
	}
	if cfg.Host == "" {
		cfg.Host, _ = os.Hostname()
	}
	if cfg.Admin == "" {
		if u, err := user.Current(); err == nil {
			cfg.Admin = u.Username
		}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Minute
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 20 * time.Second
	}
	cfg.Policy = cfg.Policy.WithDefaults()
	return &Simulator{cfg: cfg}
}

// ErrMauiFailed is wrapped when the private Maui refused its config, died
// or answered as another instance.
var ErrMauiFailed = errors.New("maui simulation failed")

// SimStats describes one run.
type SimStats struct {
	Jobs        int      // jobs simulated
	Skipped     []string // snapshot jobs left out, with why
	ExactStops  int      // iterations landing exactly on an event
	Pipelined   int      // of those, sent together with the state read
	Probes      int      // zero-length iterations carrying a state read
	Overshoots  int      // jobs found to have ended before a stop (must be 0)
	CoarseIters int      // fixed-step iterations after the window
	Commands    int      // client commands run
	// Planned is true when the exact phase stopped only where the built-in
	// simulator predicted a start (and Maui agreed at every stop);
	// SkippedEnds counts the known job ends it did not stop at. OracleOff
	// says why no plan was used; Diverged, why a planned run was repeated
	// with the plain exact stepping (its counts include both runs).
	Planned     bool
	SkippedEnds int
	Merged      int // iterations made inside a batch, without a stop
	OracleOff   string
	Diverged    string
	// Late says why a free-running planned run was repeated with a stop
	// per batch (a batch reached Maui after its iteration).
	Late    string
	MauiCPU time.Duration // user+system CPU of the Maui server
	Wall    time.Duration // whole run, start to cleanup
}

// Forecast predicts when and where each running and queued job of snap
// runs, from now to horizon (Unix seconds), queued jobs taken in the
// snapshot's priority order. See ForecastOrdered.
func (s *Simulator) Forecast(ctx context.Context, snap forecast.Snapshot, now, horizon int64) ([]forecast.Prediction, error) {
	preds, _, err := s.ForecastOrdered(ctx, snap, nil, now, horizon)
	return preds, err
}

// ForecastOrdered is Forecast with the live queue's priority order (job
// ids, highest first, e.g. LiveOrder of the site's Maui) imposed on the
// queued jobs, and the run's statistics. Predictions cover jobs starting
// before horizon; End is Start plus the job's walltime left.
func (s *Simulator) ForecastOrdered(ctx context.Context, snap forecast.Snapshot, order []string, now, horizon int64) ([]forecast.Prediction, SimStats, error) {
	begin := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	if err := s.CheckInstall(); err != nil {
		return nil, SimStats{}, err
	}
	site, err := s.siteConfig()
	if err != nil {
		return nil, SimStats{}, err
	}
	opt := s.cfg.Trace
	opt.Now, opt.Order, opt.ExactNode = now, order, SiteExactNode(site)
	tr, err := BuildTraces(snap, opt)
	if err != nil {
		return nil, SimStats{}, err
	}
	var holds []forecast.Reservation
	for _, r := range snap.Reservations {
		if !r.Standing { // the site's SRCFG, copied into the simulation, makes them
			holds = append(holds, r)
		}
	}
	preds, st, err := s.run(ctx, tr, holds, site, now, horizon)
	st.Skipped = tr.Skipped
	for i := range preds {
		if j, ok := runningJob(snap, preds[i].Job); ok && j.Started > 0 && j.Started < preds[i].Start {
			preds[i].Start = j.Started // a running job started before the snapshot
		}
	}
	st.Wall = time.Since(begin)
	return preds, st, err
}

func runningJob(snap forecast.Snapshot, id string) (forecast.LocalJob, bool) {
	for _, j := range snap.Jobs {
		if j.ID == id && j.Running() {
			return j, true
		}
	}
	return forecast.LocalJob{}, false
}

// RunTraces simulates ready-made v230 traces (a resource and a workload
// trace, e.g. captured ones) with the step policy, from their first
// iteration (taken as now) to horizon. Predictions name jobs by their trace
// ids. It is how the step policy is measured against Maui's own exact
// schedules.
func (s *Simulator) RunTraces(ctx context.Context, resource, workload []byte, now, horizon int64) ([]forecast.Prediction, SimStats, error) {
	begin := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	recs, err := ParseWorkload(bytes.NewReader(workload))
	if err != nil {
		return nil, SimStats{}, err
	}
	procs, err := ResourceProcs(resource)
	if err != nil {
		return nil, SimStats{}, err
	}
	tr := Traces{Resource: resource, Workload: workload, Jobs: map[string]TraceJob{}, IDs: map[string]string{}, Procs: procs}
	for _, r := range recs {
		tr.Jobs[r.ID] = TraceJob{Name: r.ID, Tasks: r.Tasks, Runtime: r.Runtime(), WCLimit: r.WCLimit}
		tr.IDs[r.ID] = r.ID
	}
	site, err := s.siteConfig()
	if err != nil {
		return nil, SimStats{}, err
	}
	preds, st, err := s.run(ctx, tr, nil, site, now, horizon)
	st.Wall = time.Since(begin)
	return preds, st, err
}

// siteConfig reads the site's maui.cfg (nil when none is configured).
func (s *Simulator) siteConfig() ([]byte, error) {
	if s.cfg.SiteConfig == "" {
		return nil, nil
	}
	b, err := os.ReadFile(s.cfg.SiteConfig)
	if err != nil {
		return nil, fmt.Errorf("site maui.cfg: %w", err)
	}
	return b, nil
}

// simClients are the clients a simulation runs.
var simClients = []string{"schedctl", "changeparam", "showres", "setres", "showq"}

// findServer is where a standard install keeps the maui server relative
// to its clients: beside them, or in ../sbin.
func findServer(binDir string) string {
	for _, p := range []string{filepath.Join(binDir, "maui"), filepath.Join(binDir, "..", "sbin", "maui")} {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return filepath.Clean(p)
		}
	}
	return filepath.Join(binDir, "maui")
}

// CheckInstall reports, before anything starts, a missing or unusable
// maui server or client (wrapping ErrNotInstalled, naming the path).
func (s *Simulator) CheckInstall() error {
	if s.cfg.BinDir == "" {
		return fmt.Errorf("%w: no directory of Maui clients given (where showres is)", ErrNotInstalled)
	}
	if err := executable(s.cfg.Server); err != nil {
		return fmt.Errorf("%w: maui server %s: %v (set the maui binary's path; a standard install has it in sbin/, the clients in bin/)", ErrNotInstalled, s.cfg.Server, err)
	}
	for _, c := range simClients {
		if err := executable(filepath.Join(s.cfg.BinDir, c)); err != nil {
			return fmt.Errorf("%w: maui client %s: %v (the simulation needs %s in %s)", ErrNotInstalled, c, err, strings.Join(simClients, ", "), s.cfg.BinDir)
		}
	}
	return nil
}

func executable(p string) error {
	st, err := os.Stat(p)
	switch {
	case err != nil:
		return err
	case st.IsDir() || st.Mode()&0o111 == 0:
		return fmt.Errorf("not an executable file")
	}
	return nil
}

func (s *Simulator) prepareHome(tr Traces) (string, error) {
	if err := os.MkdirAll(s.cfg.WorkDir, 0o700); err != nil {
		return "", fmt.Errorf("maui simulation work directory: %w", err)
	}
	home, err := os.MkdirTemp(s.cfg.WorkDir, "lookahead-maui-")
	if err != nil {
		return "", fmt.Errorf("maui simulation home: %w", err)
	}
	for _, d := range []string{"traces", "stats", "log"} {
		if err := os.Mkdir(filepath.Join(home, d), 0o755); err != nil {
			return "", fmt.Errorf("maui simulation home: %w", err)
		}
	}
	files := map[string][]byte{"traces/resource.trace": tr.Resource, "traces/workload.trace": tr.Workload}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(home, name), b, 0o644); err != nil {
			return "", fmt.Errorf("maui simulation home: %w", err)
		}
	}
	return home, nil
}

func (s *Simulator) writeConfig(home string, port, jobs int, siteCfg []byte) error {
	var site io.Reader // nil interface when there is no site config
	if siteCfg != nil {
		site = bytes.NewReader(siteCfg)
	}
	var buf bytes.Buffer
	sc := SimConfig{Host: s.cfg.Host, Port: port, Admin: s.cfg.Admin, Step: 0, QueueDepth: jobs}
	if err := WriteSimConfig(&buf, site, sc); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(home, "maui.cfg"), buf.Bytes(), 0o644)
}

// instance is one running private Maui.
type instance struct {
	home        string
	binDir      string
	port        int
	callTimeout time.Duration
	cmd         *exec.Cmd
	done        chan struct{}
	waitErr     error
	output      *execx.BoundedBuffer
	env         []string       // of the server and its clients (zoneEnv)
	zone        *time.Location // the clients print times in it
	r           Runner
	commands    int
	mu          sync.Mutex // guards commands (armed clients start from another goroutine)
}

// freePortPair finds a port p with p and p+1 free (Maui binds both).
func freePortPair() (int, error) {
	for range 50 {
		l, err := net.Listen("tcp", ":0")
		if err != nil {
			return 0, err
		}
		p := l.Addr().(*net.TCPAddr).Port
		l2, err := net.Listen("tcp", ":"+strconv.Itoa(p+1))
		l.Close()
		if err == nil {
			l2.Close()
			return p, nil
		}
	}
	return 0, fmt.Errorf("no free port pair")
}

// start launches maui in the home on a free port pair and checks, by PID,
// that the server answering on that port is this one. A port lost to a
// race is retried on another pair.
func (s *Simulator) start(ctx context.Context, home string, jobs int, site []byte) (*instance, error) {
	var last error
	for range 3 {
		port, err := freePortPair()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMauiFailed, err)
		}
		if err := s.writeConfig(home, port, jobs, site); err != nil {
			return nil, err
		}
		inst, err := s.launch(ctx, home, port)
		if err == nil {
			return inst, nil
		}
		last = err
		if ctx.Err() != nil || !errors.Is(err, errPortLost) {
			break // only a port taken by another instance is worth another pair
		}
	}
	return nil, last
}

// errPortLost marks a start that failed because the port pair went to
// another process between the check and the bind.
var errPortLost = errors.New("port taken")

func (s *Simulator) launch(ctx context.Context, home string, port int) (*instance, error) {
	bin := s.cfg.Server
	if err := executable(bin); err != nil {
		return nil, fmt.Errorf("%w: maui server %s: %v", ErrNotInstalled, bin, err)
	}
	inst := &instance{home: home, binDir: s.cfg.BinDir, port: port, callTimeout: s.cfg.CallTimeout, env: s.env(home), zone: s.Zone(),
		done: make(chan struct{}), output: execx.NewBoundedBuffer(16 << 10)}
	inst.cmd = exec.Command(bin, "-d")
	inst.cmd.Dir = home
	inst.cmd.Env = inst.env
	inst.cmd.Stdout, inst.cmd.Stderr = inst.output, inst.output
	// Own process group (killed as a whole); killed too if this process
	// dies without cleaning up.
	inst.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := inst.cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: start %s: %v", ErrMauiFailed, bin, err)
	}
	go func() { inst.waitErr = inst.cmd.Wait(); close(inst.done) }()
	inst.r = NewExecRunner(ExecConfig{BinDir: s.cfg.BinDir, HomeDir: home, Timeout: s.cfg.CallTimeout, Env: zoneEnv(s.Zone())})
	if err := inst.verify(ctx); err != nil {
		inst.kill() // not proven ours: never send it schedctl -k
		return nil, err
	}
	return inst, nil
}

// verify waits until the server answers and checks that it is ours:
// `schedctl -l` prints "# Maui version 3.3.1 (PID: N)".
func (in *instance) verify(ctx context.Context) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case <-in.done:
			return in.portErr(fmt.Errorf("%w: maui exited at start (%v)%s", ErrMauiFailed, in.waitErr, in.tail()))
		default:
		}
		res, err := in.run(ctx, "schedctl", "-l")
		if errors.Is(err, ErrNotInstalled) {
			return fmt.Errorf("%w: %v", ErrMauiFailed, err)
		}
		if err == nil && res.ExitCode == 0 {
			pid, ok := parsePIDLine(res.Stdout)
			if ok && pid == in.cmd.Process.Pid {
				return nil
			}
			if ok {
				return fmt.Errorf("%w: %w: port answered by another Maui (PID %d, ours %d)", ErrMauiFailed, errPortLost, pid, in.cmd.Process.Pid)
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return in.portErr(fmt.Errorf("%w: maui did not answer on its port%s", ErrMauiFailed, in.tail()))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// portErr marks err as a lost port when the instance's log says Maui
// could not bind its port ("cannot bind to port N").
func (in *instance) portErr(err error) error {
	b, _ := os.ReadFile(filepath.Join(in.home, "log", "maui.log"))
	if bytes.Contains(b, []byte("cannot bind to port")) {
		return fmt.Errorf("%w (%w)", err, errPortLost)
	}
	return err
}

// logLines returns " (maui.log: ...)" with the instance's log lines
// holding any of words, at most 5, or "".
func (in *instance) logLines(words ...string) string {
	b, _ := os.ReadFile(filepath.Join(in.home, "log", "maui.log"))
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		for _, w := range words {
			if strings.Contains(l, w) {
				out = append(out, strings.TrimSpace(l))
				break
			}
		}
		if len(out) == 5 {
			break
		}
	}
	if len(out) == 0 {
		return ""
	}
	return " (maui.log: " + strings.Join(out, "; ") + ")"
}

// parsePIDLine reads "# Maui version 3.3.1 (PID: 6964)".
func parsePIDLine(b []byte) (int, bool) {
	first, _, _ := strings.Cut(string(b), "\n")
	_, rest, ok := strings.Cut(first, "(PID: ")
	if !ok {
		return 0, false
	}
	num, _, _ := strings.Cut(rest, ")")
	pid, err := strconv.Atoi(strings.TrimSpace(num))
	return pid, err == nil
}

func (in *instance) run(ctx context.Context, name string, args ...string) (Result, error) {
	return in.runQueued(ctx, name, args...)
}

// stop shuts the instance down: schedctl -k (which also flushes
// stats/simstat.out), then SIGKILL to its process group if it has not
// exited within 20 s (Maui sleeps 1 s before it exits). Idempotent.
func (in *instance) stop() {
	select {
	case <-in.done:
		return
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = in.r.Run(ctx, "schedctl", "-k")
	select {
	case <-in.done:
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(-in.cmd.Process.Pid, syscall.SIGKILL)
		<-in.done
	}
}

// kill ends the instance at once (process group SIGKILL).
func (in *instance) kill() {
	select {
	case <-in.done:
	default:
		_ = syscall.Kill(-in.cmd.Process.Pid, syscall.SIGKILL)
		<-in.done
	}
}

func (in *instance) tail() string {
	b := bytes.TrimSpace(in.output.Bytes())
	if len(b) == 0 {
		return ""
	}
	if len(b) > 400 {
		b = b[len(b)-400:]
	}
	return " (maui output: " + string(b) + ")"
}
