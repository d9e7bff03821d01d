package sim

// The driver that makes the reference schedules in testdata/mauiref: it
// runs a real Maui 3.3.1 in SERVERMODE SIMULATION on a private home and
// port and steps it exactly onto every event (every job end, every
// arrival), so that Maui schedules at the same instants as the event-driven
// simulator. Only the standard library is used (forecast/ imports nothing
// else); lookahead's maui package has the production driver.
//
// Stepping: `changeparam RMPOLLINTERVAL <gap>` then `schedctl -S 1` makes
// Maui run exactly one iteration <gap> seconds later and pause again
// (SIMSTOPITERATION 1, RMPOLLINTERVAL 0 at start); `showq` then lists the
// running jobs with their start stamps. Maui loads a trace job once the
// simulated clock reaches its queue time (SIMJOBSUBMISSIONPOLICY NORMAL,
// the first SIMINITIALQUEUEDEPTH jobs at once), and completes a job at the
// first iteration at or after its end, so stopping at every arrival and
// every end is exact. At the end `schedctl -k` flushes stats/simstat.out,
// Maui's own record of every job's start, end and hosts.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// refRun is one real-Maui run of a reference workload.
type refRun struct {
	bin  string // directory holding sbin/maui and bin/ clients, or both
	home string
	cmd  *exec.Cmd
	done chan struct{}
	out  bytes.Buffer
	// edges are wall-clock instants where Maui's decisions may change
	// with nothing arriving or ending (standing reservations' window
	// edges): the driver steps onto them too while jobs are left.
	edges []int64
	// edge, when set, is the first wall-clock edge after t where Maui's
	// decisions change (a fairshare interval's turn): a stop too.
	edge func(t int64) int64
	// zone is the time zone Maui and its clients run in (TZ; nil: UTC):
	// its standing reservations' windows and showq's stamps are in it.
	zone *time.Location
}

// loc is the run's zone.
func (r *refRun) loc() *time.Location {
	if r.zone == nil {
		return time.UTC
	}
	return r.zone
}

// env is the environment of Maui and its clients.
func (r *refRun) env() []string {
	return append(os.Environ(), "MAUIHOMEDIR="+r.home, "TZ="+r.loc().String())
}

func (r *refRun) tool(name string) string {
	for _, d := range []string{r.bin, filepath.Join(r.bin, "bin"), filepath.Join(r.bin, "sbin")} {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return filepath.Join(r.bin, name)
}

// client runs one Maui client command against the private home.
func (r *refRun) client(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, r.tool(args[0]), args[1:]...)
	c.Dir = r.home
	c.Env = r.env()
	out, err := c.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return string(out), nil
}

// freePorts finds p with p and p+1 free (Maui binds both), in the range
// LOOKAHEAD_MAUI_PORTS ("lo-hi") when it is set (a shared machine's live
// Maui keeps its own ports), else any the system hands out.
func freePorts() (int, error) {
	if lo, hi, ok := portRange(os.Getenv("LOOKAHEAD_MAUI_PORTS")); ok {
		for p := lo; p < hi; p++ {
			if portPairFree(p) {
				return p, nil
			}
		}
		return 0, fmt.Errorf("no free port pair in %d-%d", lo, hi)
	}
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		p := l.Addr().(*net.TCPAddr).Port
		l2, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+1))
		l.Close()
		if err == nil {
			l2.Close()
			return p, nil
		}
	}
	return 0, fmt.Errorf("no free port pair")
}

func portRange(v string) (lo, hi int, ok bool) {
	a, b, found := strings.Cut(v, "-")
	lo, err1 := strconv.Atoi(a)
	hi, err2 := strconv.Atoi(b)
	return lo, hi, found && err1 == nil && err2 == nil && lo > 0 && lo < hi
}

func portPairFree(p int) bool {
	for _, q := range []int{p, p + 1} {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(q))
		if err != nil {
			return false
		}
		l.Close()
	}
	return true
}

// start writes maui.cfg (the simulation header plus policy) and launches
// maui, waiting until `schedctl -l` answers with its own PID.
func (r *refRun) start(ctx context.Context, policy string, initial int) error {
	port, err := freePorts()
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	admin := os.Getenv("USER")
	if admin == "" {
		admin = "root"
	}
	cfg := fmt.Sprintf(`SERVERHOST            %s
SERVERPORT            %d
SERVERMODE            SIMULATION
ADMIN1                %s
RMPOLLINTERVAL        0
LOGFILE               maui.log
LOGLEVEL              0
STATDIR               stats
SIMRESOURCETRACEFILE  traces/resource.trace
SIMWORKLOADTRACEFILE  traces/workload.trace
SIMJOBSUBMISSIONPOLICY NORMAL
SIMINITIALQUEUEDEPTH  %d
SIMSTOPITERATION      1
SIMAUTOSHUTDOWN       FALSE
%s`, host, port, admin, initial, policy)
	if err := os.WriteFile(filepath.Join(r.home, "maui.cfg"), []byte(cfg), 0o644); err != nil {
		return err
	}
	r.cmd = exec.Command(r.tool("maui"), "-d")
	r.cmd.Dir = r.home
	r.cmd.Env = r.env()
	r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.out
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		return err
	}
	r.done = make(chan struct{})
	go func() { _ = r.cmd.Wait(); close(r.done) }()
	want := fmt.Sprintf("(PID: %d)", r.cmd.Process.Pid)
	for deadline := time.Now().Add(20 * time.Second); ; {
		select {
		case <-r.done:
			return fmt.Errorf("maui exited at start: %s", r.out.String())
		default:
		}
		out, err := r.client(ctx, "schedctl", "-l")
		if err == nil && strings.Contains(out, want) {
			return nil
		}
		if err == nil && strings.Contains(out, "(PID: ") {
			return fmt.Errorf("port %d answered by another Maui", port)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("maui did not answer: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop shuts Maui down (schedctl -k flushes simstat.out), killing its
// process group if it does not exit.
func (r *refRun) stop() {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	select {
	case <-r.done:
		return
	default:
	}
	_, _ = r.client(context.Background(), "schedctl", "-k")
	select {
	case <-r.done:
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		<-r.done
	}
}

// running parses showq's ACTIVE JOBS section: job name → start stamp.
func running(showq string) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(showq))
	active := false
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "ACTIVE JOBS"):
			active = true
			continue
		case strings.HasPrefix(l, "IDLE JOBS"), strings.HasPrefix(l, "BLOCKED JOBS"):
			active = false
		}
		f := strings.Fields(l)
		if !active || len(f) < 9 || f[2] != "Running" {
			continue
		}
		out[f[0]] = strings.Join(f[len(f)-4:], " ")
	}
	return out
}

// refJob is what the driver knows of a trace job.
type refJob struct {
	name    string
	submit  int64
	runtime int64
}

// drive runs the whole workload and returns Maui's simstat.out. jobs[0]
// is a one-second job Maui queues at once (SIMINITIALQUEUEDEPTH 1): Maui
// queues its initial jobs at its clock's start c0, the wall clock when it
// started, whatever their trace time, so the workload proper (jobs[1:],
// sorted by submit) arrives later, at its trace times, which must be after
// c0 + 1. The schedule is then a function of the trace alone. When pause
// is set, the run stops at the first event at or after it and inspect is
// called.
func (r *refRun) drive(ctx context.Context, jobs []refJob, pause int64, inspect func(t int64), logf func(string, ...any)) ([]byte, error) {
	start := map[string]int64{}
	ended := 0
	out, err := r.client(ctx, "showq")
	if err != nil {
		return nil, err
	}
	c0, err := firstStamp(out, r.loc())
	if err != nil {
		return nil, err
	}
	next := 1 // first job not yet submitted
	if len(jobs) > 1 && jobs[1].submit <= c0+jobs[0].runtime {
		return nil, fmt.Errorf("maui's clock starts at %d, too late for job %s's arrival at %d", c0, jobs[1].name, jobs[1].submit)
	}
	t0 := c0
	t, gap := t0, int64(0)
	stops, idleEdges := 0, 0
	for {
		out, err := r.client(ctx, "showq")
		if err != nil {
			return nil, err
		}
		for name, stamp := range running(out) {
			if _, seen := start[name]; seen {
				continue
			}
			if want := strings.Join(strings.Fields(time.Unix(t, 0).In(r.loc()).Format("Mon Jan _2 15:04:05")), " "); stamp != want {
				return nil, fmt.Errorf("job %s started %q, stepping expected %q (t0%+d)", name, stamp, want, t-t0)
			}
			start[name] = t
		}
		if pause > 0 && t >= pause {
			inspect(t)
			return nil, nil
		}
		// the next event: an end or an arrival
		ev := int64(never)
		ended = 0
		for _, j := range jobs {
			s, ok := start[j.name]
			switch {
			case !ok:
			case s+j.runtime <= t:
				ended++
			default:
				ev = min(ev, s+j.runtime)
			}
		}
		if next < len(jobs) {
			ev = min(ev, jobs[next].submit)
		}
		if ended < len(jobs) {
			ev = min(ev, nextEdge(r.edges, t))
		}
		if ev == never && r.edge != nil && ended != len(jobs) && idleEdges < 1000 {
			ev = r.edge(t) // waiting jobs may wait for an edge (a fairshare cap)
			idleEdges++
		} else if ev != never {
			idleEdges = 0
		}
		if ev == never {
			if ended != len(jobs) {
				return nil, fmt.Errorf("at t0%+d nothing left to happen but %d of %d jobs ended", t-t0, ended, len(jobs))
			}
			break
		}
		if r.edge != nil {
			ev = min(ev, r.edge(t))
		}
		if g := ev - t; g != gap {
			if out, err := r.client(ctx, "changeparam", "RMPOLLINTERVAL", strconv.FormatInt(g, 10)); err != nil || !strings.Contains(out, "parameters modified") {
				return nil, fmt.Errorf("changeparam %d: %v %s", g, err, out)
			}
			gap = g
		}
		if out, err := r.client(ctx, "schedctl", "-S", "1"); err != nil || !strings.Contains(out, "scheduling will stop") {
			return nil, fmt.Errorf("schedctl -S 1: %v %s", err, out)
		}
		t = ev
		for next < len(jobs) && jobs[next].submit <= t {
			next++
		}
		stops++
		if stops%100 == 0 && logf != nil {
			logf("t0%+d: %d stops, %d started, %d ended", t-t0, stops, len(start), ended)
		}
	}
	r.stop()
	b, err := os.ReadFile(filepath.Join(r.home, "stats", "simstat.out"))
	if err != nil {
		return nil, err
	}
	return b, checkExact(b, jobs, start)
}

// nextEdge is the first of the sorted edges after t (never if none).
func nextEdge(edges []int64, t int64) int64 {
	i := sort.Search(len(edges), func(k int) bool { return edges[k] > t })
	if i == len(edges) {
		return never
	}
	return edges[i]
}

// standingEdges are the window edges of the standing reservations in a
// maui.cfg policy over [from, to), sorted, in Maui's zone (nil: UTC).
func standingEdges(policy string, from, to int64, zone *time.Location) ([]int64, error) {
	mc, err := ReadMauiConfig(strings.NewReader(policy))
	if err != nil || mc.Policy.Standing == nil {
		return nil, err
	}
	var out []int64
	for _, s := range mc.Policy.Standing.Res {
		if len(s.Hosts) == 0 {
			continue
		}
		for _, w := range s.Windows(from, to, zone) {
			out = append(out, w[0], w[1])
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// firstStamp reads the first job's time stamp (start or queue time) in a
// showq listing, in Maui's zone loc: the simulated clock at the first
// iteration.
func firstStamp(showq string, loc *time.Location) (int64, error) {
	for _, l := range strings.Split(showq, "\n") {
		f := strings.Fields(l)
		if len(f) < 9 || (f[2] != "Running" && f[2] != "Idle") {
			continue
		}
		stamp := strings.Join(f[len(f)-4:], " ")
		ts, err := time.ParseInLocation("Mon Jan 2 15:04:05 2006", stamp+" "+strconv.Itoa(time.Now().In(loc).Year()), loc)
		if err != nil {
			return 0, fmt.Errorf("showq stamp %q: %w", stamp, err)
		}
		return ts.Unix(), nil
	}
	return 0, fmt.Errorf("showq lists no job: %q", showq)
}

// checkExact verifies that Maui's simstat agrees with what the stepping
// saw: every job started where observed and ran exactly its runtime.
func checkExact(simstat []byte, jobs []refJob, start map[string]int64) error {
	runtime := map[string]int64{}
	for _, j := range jobs {
		runtime[j.name] = j.runtime
	}
	n := 0
	var bad []string
	sc := bufio.NewScanner(bytes.NewReader(simstat))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 12 || f[0] == "VERSION" || strings.HasPrefix(f[0], "#") {
			continue
		}
		s, _ := strconv.ParseInt(f[10], 10, 64)
		c, _ := strconv.ParseInt(f[11], 10, 64)
		n++
		if s != start[f[0]] || c-s != runtime[f[0]] {
			bad = append(bad, fmt.Sprintf("%s start %d (seen %d) ran %d (runtime %d)", f[0], s, start[f[0]], c-s, runtime[f[0]]))
		}
	}
	sort.Strings(bad)
	switch {
	case len(bad) > 0:
		return fmt.Errorf("simstat disagrees with the stepping: %s", strings.Join(bad, "; "))
	case n != len(jobs):
		return fmt.Errorf("simstat has %d jobs, the workload %d", n, len(jobs))
	}
	return nil
}
