package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/internal/nsstest"
	"lookahead/slurm"
	"lookahead/slurm/slurmtest"
	"lookahead/wire"
)

// A real two-node cluster (n1, n2: 4 cores each, a slurmd each) with one
// core of n1 busy for 2 h (root's job), beside a simulated 2 × 4 site:
// ten grid jobs of 15 processors each need n1:3 + n2:4 on Slurm and all 8
// of the other site. Each is reserved at the first attempt (one reserve
// reaches the Slurm site per job, and it succeeds), holds exactly those
// cores once slurmctld prints them, and the agent repairs nothing while
// it does not. Then a hand-deleted uneven reservation is re-created on
// the same cores by the agent's poll, once; a reservation widened by
// hand (another user, a flag) is repaired, logged as what it was; and
// with no ledger (the agent restarted without its hold-state file) the
// broker's audit reports a widened one drifted, field acl.
func TestLiveUnevenCoresOnABusyNode(t *testing.T) {
	c := slurmtest.Shared(t, slurmtest.Options{CPUs: 4, Nodes: 2})
	busy := c.Run("sbatch", "--parsable", "-o", "/dev/null", "-w", "n1", "-n", "1", "-t", "120", "-J", "busy", "--wrap", "sleep 7200")
	if busy.ExitCode != 0 {
		t.Fatalf("busy job: %+v", busy)
	}
	busyID := strings.TrimSpace(busy.Stdout)
	waitSlurm(t, "the busy job to run", func() bool {
		return strings.HasPrefix(c.Run("squeue", "-h", "-j", busyID, "-o", "%T").Stdout, "RUNNING")
	})
	holds := filepath.Join(t.TempDir(), "holds.json")
	g := startSlurmGrid(t, c, gridOptions{commitLead: 3 * time.Hour, holdState: holds})
	ctx := context.Background()
	defer func() {
		if t.Failed() {
			t.Logf("the Slurm agent's repairs and refusals:\n%s", grepLines(g.slLog.String(), "repair|lost|came back|release|refused|error"))
		}
	}()

	const jobs = 10
	for i := range jobs {
		job := forecast.JobRequest{ID: fmt.Sprintf("u%d", i), Procs: 15, Walltime: 300, MaxSites: 2, User: "alice", Account: "proj1", MaxPrice: 100}
		if r, err := g.cl.Submit(ctx, job, ""); err != nil || r.Code != wire.CodeOK {
			t.Fatalf("submit %s: %+v, %v", job.ID, r, err)
		}
	}
	start := time.Now()
	for i := range jobs {
		st := waitJob(t, g.cl, fmt.Sprintf("u%d", i), wire.JobReserved, 2*time.Minute)
		for _, r := range st.Reservations {
			if r.Site == "sl" && nodesKeyOf(r.Nodes) != "n1:3,n2:4" {
				t.Errorf("job %s reserved on sl as %+v, want n1:3 and n2:4", st.Job.ID, r.Nodes)
			}
		}
	}
	g.res.mu.Lock()
	reserves := g.res.reserves
	g.res.mu.Unlock()
	t.Logf("%d jobs reserved in %v; reserve requests that reached the Slurm site: %d", jobs, time.Since(start).Round(time.Millisecond), reserves)
	if reserves != jobs {
		t.Errorf("%d reserve requests reached the Slurm site for %d jobs: not every job was reserved at the first attempt", reserves, jobs)
	}
	waitSlurm(t, "CoreIDs of every grid reservation", func() bool {
		return strings.Count(c.Run("scontrol", "show", "reservation").Stdout, "CoreIDs=") == 2*jobs
	})
	for name, cores := range reservationCores(t, c) {
		if cores != "n1:3,n2:4" {
			t.Errorf("%s holds %s once slurmctld prints its cores, want n1:3,n2:4", name, cores)
		}
	}
	g.waitPolls(2)
	if n := g.repairs(""); n != 0 {
		t.Errorf("%d repairs while nothing changed (CoreIDs not printed is not a change)", n)
	}

	// Deleted by hand: the agent's poll makes it again, on n1:3 and n2:4.
	if r := c.Run("scontrol", "delete", "reservationname=la.u3"); r.ExitCode != 0 {
		t.Fatalf("delete: %+v", r)
	}
	waitSlurm(t, "la.u3 made again with its CoreIDs", func() bool { return reservationCores(t, c)["la.u3"] == "n1:3,n2:4" })
	g.waitPolls(2)
	if n := g.repairs("u3"); n != 1 {
		t.Errorf("la.u3 repaired %d times, want once", n)
	}

	// Widened by hand (updates are refused while the busy job runs:
	// slurm/testdata mn-update-uneven-busy.txt), then repaired.
	c.Run("scancel", busyID)
	waitSlurm(t, "the busy job to end and leave n1", func() bool {
		nodes := c.Run("sinfo", "-h", "-N", "-o", "%N %T").Stdout // idle, or reserved once u0's reservation starts
		return strings.TrimSpace(c.Run("squeue", "-h", "-j", busyID, "-o", "%T").Stdout) == "" &&
			!strings.Contains(nodes, "comp") && !strings.Contains(nodes, "mix") && !strings.Contains(nodes, "alloc")
	})
	for job, change := range map[string]string{"u5": "users+=root", "u6": "flags+=MAGNETIC"} {
		if r := c.Run("scontrol", "update", "reservationname=la."+job, change); r.ExitCode != 0 {
			t.Fatalf("update %s %s: %+v", job, change, r)
		}
		waitSlurm(t, "la."+job+" repaired after "+change, func() bool {
			r, _, err := findListed(g.site, "la."+job)
			return err == nil && r != nil && r.Identity.User == slurmtest.User2 && len(r.Extra) == 0
		})
	}
	// The agent audits a repair after slurmctld answers it, so the
	// repaired reservation can be listed before its record is stored;
	// a poll lists only after the one before ended (its records stored).
	g.waitPolls(2)
	if n := g.repairs("u5") + g.repairs("u6"); n != 2 {
		t.Errorf("%d repairs of la.u5 and la.u6, want one each", n)
	}
	if l := g.slLog.String(); !strings.Contains(l, "or a hand edit") || strings.Contains(l, "restart seen") || strings.Contains(l, "scheduler scheduler") {
		t.Errorf("the agent's log does not say what happened:\n%s", l)
	}

	// No ledger: the broker's audit reports a widened reservation.
	g.stopSl()
	if r := c.Run("scontrol", "update", "reservationname=la.u7", "users+=root"); r.ExitCode != 0 {
		t.Fatalf("update: %+v", r)
	}
	if err := os.Remove(holds); err != nil {
		t.Fatal(err)
	}
	g.restartSl()
	rep, err := g.cl.Audit(ctx, false)
	if err != nil || len(rep.Findings) != 1 || rep.Findings[0].Job != "u7" || rep.Findings[0].Kind != wire.DriftDrifted ||
		strings.Join(rep.Findings[0].Fields, ",") != "acl" {
		t.Fatalf("audit of a widened reservation: %+v, %v", rep, err)
	}
	t.Logf("audit: %+v", rep.Findings[0])
}

// A slurmctld that crashes comes back with older state: a reservation
// the agent released is back, another with the ACL it had widened by hand
// before the agent repaired it. The agent releases the first again and
// repairs the second at its next poll.
func TestLiveSlurmControllerBackWithOldState(t *testing.T) {
	c := slurmtest.Shared(t, slurmtest.Options{CPUs: 4, Nodes: 2})
	site := slurmSite(t, c)
	nc := startNATS(t)
	log := &lockedBuffer{}
	run := slurmAgentRunner(t, nc, site, log)
	stop := run()
	start := time.Now().Add(time.Hour).Unix()
	for _, job := range []string{"k1", "k2"} {
		r := request[wire.ReserveReply](t, nc, "sl", wire.VerbReserve, wire.ReserveRequest{Type: wire.TypeReserve, Job: job, Site: "sl",
			Start: start, Duration: 1800, Nodes: []wire.NodeProcs{{Node: "n1", Procs: 1}, {Node: "n2", Procs: 2}},
			Identity: wire.Identity{User: "alice"}, RequestedBy: "broker"})
		if r.Code != wire.CodeOK {
			t.Fatalf("reserve %s: %+v", job, r)
		}
		start += 1800
	}
	// The state slurmctld will come back with: la.k1 widened, la.k2 there.
	stop()
	if r := c.Run("scontrol", "update", "reservationname=la.k1", "users+=root"); r.ExitCode != 0 {
		t.Fatalf("update: %+v", r)
	}
	c.StopController() // saves its state
	saved := c.SaveState()
	c.StartController()
	if r := c.Run("scontrol", "update", "reservationname=la.k1", "users="+slurmtest.User2); r.ExitCode != 0 {
		t.Fatalf("update: %+v", r)
	}
	run() // stopped at the end of the test
	if r := request[wire.ReleaseReply](t, nc, "sl", wire.VerbRelease, wire.ReleaseRequest{Type: wire.TypeRelease, Job: "k2", Site: "sl",
		RequestedBy: "broker"}); r.Code != wire.CodeOK || len(r.Released) != 1 {
		t.Fatalf("release k2: %+v", r)
	}
	c.RestoreState(saved)
	c.StartController()
	t.Logf("nodes right after: %q", c.Run("sinfo", "-h", "-N", "-o", "%N %T").Stdout)
	if rs, err := site.List(context.Background()); err != nil || len(rs) != 2 {
		t.Fatalf("slurmctld did not come back with the older state: %+v, %v", rs, err)
	}
	defer func() {
		if t.Failed() {
			rs, err := site.List(context.Background())
			t.Logf("listed %+v %v\nlog:\n%s", rs, err, log.String())
		}
	}()
	waitSlurm(t, "la.k2 released again and la.k1 repaired", func() bool {
		rs, err := site.List(context.Background())
		return err == nil && len(rs) == 1 && rs[0].ID == "la.k1" && rs[0].Identity.User == slurmtest.User2
	})
	t.Logf("agent log:\n%s", grepLines(log.String(), "came back|repaired|answers again|hand edit"))
}

// waitPolls waits until the sl agent has listed its reservations n more
// times (each poll lists them once at least).
func (g *slurmGrid) waitPolls(n int) {
	g.t.Helper()
	g.res.mu.Lock()
	from := g.res.lists
	g.res.mu.Unlock()
	waitSlurm(g.t, fmt.Sprintf("%d polls of the Slurm agent", n), func() bool {
		g.res.mu.Lock()
		defer g.res.mu.Unlock()
		return g.res.lists >= from+n
	})
}

// repairs counts the sl agent's repair audit records (of job, or all).
func (g *slurmGrid) repairs(job string) int {
	n := 0
	for _, r := range auditRecords(g.t, mustJS(g.t, g.bnc)) {
		if r.Action == "repair" && r.Origin == "sl" && (job == "" || r.Job == job) {
			n++
		}
	}
	return n
}

var resvCoresRE = regexp.MustCompile(`(?m)^ReservationName=(\S+)|NodeName=(\S+) CoreIDs=(\S+)`)

// reservationCores is every reservation's cores per node as slurmctld
// prints them ("n1:3,n2:4"; "" while it prints none).
func reservationCores(t *testing.T, c *slurmtest.Cluster) map[string]string {
	t.Helper()
	out := map[string]string{}
	name := ""
	for _, m := range resvCoresRE.FindAllStringSubmatch(c.Run("scontrol", "show", "reservation").Stdout, -1) {
		if m[1] != "" {
			name, out[m[1]] = m[1], ""
			continue
		}
		n := slurm.NodeCores{Node: m[2], CoreIDs: m[3]}.Count()
		if out[name] != "" {
			out[name] += ","
		}
		out[name] += m[2] + ":" + strconv.Itoa(n)
	}
	return out
}

func nodesKeyOf(ns []wire.NodeProcs) string {
	parts := make([]string, 0, len(ns))
	for _, n := range ns {
		parts = append(parts, n.Node+":"+strconv.Itoa(n.Procs))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// waitSlurm waits (bounded, 60 s) until ok.
func waitSlurm(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !ok(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 60 s for %s", what)
		}
	}
}

func grepLines(s, pattern string) string {
	re := regexp.MustCompile(pattern)
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if re.MatchString(l) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// A part runs on the real Slurm for a user that exists only in an NSS
// source other than /etc/passwd (a directory user: here Debian's
// extrausers): the agent maps the grid user to it through the system's
// NSS, reserves for it, and submits the part by the uid that passed the
// check (sbatch --uid=<uid>); slurmd runs it as that user.
func TestLivePartRunsForNSSOnlyUser(t *testing.T) {
	who := nsstest.ExtraUser(t)
	c := slurmtest.Shared(t, slurmtest.Options{CPUs: 8})
	site := slurmSite(t, c)
	site.Users = agent.SystemUsers
	nc := startNATS(t)
	cfg := agent.Config{Site: "sl", Debounce: 50 * time.Millisecond, Refresh: time.Second,
		Dispatch: agent.DispatchConfig{Users: map[string]string{"carol": nsstest.User}, OutputDir: c.OutDir()}}
	runAgent(t, cfg, agent.Deps{Conn: nc, Snapshotter: site, Reserver: site, Executor: site, Engine: builtinEngine()}) // Users: the system's NSS
	waitService(t, nc, "sl")
	start := time.Now().Add(5 * time.Second).Unix()
	r := request[wire.ReserveReply](t, nc, "sl", wire.VerbReserve, wire.ReserveRequest{Type: wire.TypeReserve, Job: "n1", Site: "sl",
		Start: start, Duration: 600, Nodes: []wire.NodeProcs{{Node: c.Node, Procs: 2}}, Identity: wire.Identity{User: "carol"}, RequestedBy: "broker"})
	if r.Code != wire.CodeOK || r.Reservations[0].Identity.User != nsstest.User {
		t.Fatalf("reserve: %+v", r)
	}
	d := request[wire.DispatchReply](t, nc, "sl", wire.VerbDispatch, wire.DispatchRequest{Type: wire.TypeDispatch, Job: "n1", Site: "sl",
		Parts: []wire.PartSpec{{Site: "sl", Nodes: []wire.NodeProcs{{Node: c.Node, Procs: 2}}}}, Start: start, Walltime: 300, User: "carol",
		Script: []byte("#!/bin/sh\necho user=$(id -un) uid=$(id -u)\n"), RequestedBy: "broker"})
	if d.Code != wire.CodeOK || d.LocalUser != nsstest.User {
		t.Fatalf("dispatch: %+v", d)
	}
	b := waitDone(t, site, d.LocalID)
	out, _ := os.ReadFile(filepath.Join(c.OutDir(), "la.n1.0.out"))
	if b.ExitStatus == nil || *b.ExitStatus != 0 || b.User != nsstest.User || string(out) != fmt.Sprintf("user=%s uid=%d\n", nsstest.User, who.UID) {
		t.Fatalf("part %+v, output %q", b, out)
	}
	t.Logf("part %s ran as %s", d.LocalID, strings.TrimSpace(string(out)))
}

// slurmctld stopped: at its next cycle the agent tells the broker its
// site cannot forecast, and the broker's sites list shows it out of
// planning with the reason (not fresh for the site TTL); started again,
// the site is back at the next forecast.
func TestLiveSlurmDownShownBySites(t *testing.T) {
	c := slurmtest.Shared(t, slurmtest.Options{CPUs: 4, Nodes: 2})
	g := startSlurmGrid(t, c, gridOptions{})
	ctx := context.Background()
	state := func() (wire.SiteStatus, bool) {
		r, err := g.cl.Sites(ctx)
		if err != nil {
			return wire.SiteStatus{}, false
		}
		for _, s := range r.Sites {
			if s.Site == "sl" {
				return s, true
			}
		}
		return wire.SiteStatus{}, false
	}
	c.StopController()
	down := time.Now()
	waitSlurm(t, "the broker to show sl out of planning", func() bool {
		s, ok := state()
		return ok && s.Stale && strings.Contains(s.Problem, "slurmctld does not answer")
	})
	s, _ := state()
	t.Logf("shown %v after slurmctld stopped (refresh 1 s): %s", time.Since(down).Round(time.Millisecond), s.Problem)
	c.StartController()
	waitSlurm(t, "sl back in planning", func() bool {
		s, ok := state()
		return ok && !s.Stale && s.Problem == ""
	})
}
