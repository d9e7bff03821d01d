package sim

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"lookahead/forecast"
)

// A tiny reader for the few fields of Maui's v230 traces the fidelity test
// needs (the maui package has the full parser). Fields, 0-based: 0 JobID,
// 2 tasks, 5 WCLimit, 8 QueueTime, 10 StartTime, 11 CompletionTime, 37
// allocated hosts (simstat only); resource trace: 3 name, 8 processors.
type mauiJob struct {
	id                         string
	tasks                      int
	wclimit, queue, start, end int64
	hosts                      string
}

func openMaybeGz(t testing.TB, path string) io.Reader {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if !strings.HasSuffix(path, ".gz") {
		return f
	}
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

func readMauiJobs(t testing.TB, path string) []mauiJob {
	t.Helper()
	var out []mauiJob
	for _, f := range readTraceFields(t, path) {
		num := func(i int) int64 { return parseField(t, path, f, i) }
		j := mauiJob{id: f[0], tasks: int(num(2)), wclimit: num(5), queue: num(8), start: num(10), end: num(11)}
		if len(f) > 37 {
			j.hosts = f[37]
		}
		out = append(out, j)
	}
	return out
}

// readTraceFields reads the records of a v230 workload trace or simstat
// (VERSION lines and # comments skipped), each split into fields.
func readTraceFields(t testing.TB, path string) [][]string {
	t.Helper()
	var out [][]string
	sc := bufio.NewScanner(openMaybeGz(t, path))
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] == "VERSION" || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) < 26 {
			t.Fatalf("%s:%d: %d fields", path, line, len(f))
		}
		out = append(out, f)
	}
	return out
}

func parseField(t testing.TB, path string, f []string, i int) int64 {
	t.Helper()
	n, err := strconv.ParseInt(f[i], 10, 64)
	if err != nil {
		t.Fatalf("%s: job %s field %d: %v", path, f[0], i, err)
	}
	return n
}

func readMauiNodes(t testing.TB, path string) Cluster {
	t.Helper()
	var c Cluster
	sc := bufio.NewScanner(openMaybeGz(t, path))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 9 || f[0] != "COMPUTENODE" {
			continue
		}
		p, err := strconv.Atoi(f[8])
		if err != nil {
			t.Fatal(err)
		}
		n := forecast.SnapshotNode{Name: f[3], Procs: p, State: []string{forecast.NodeFree}, Speed: 1}
		if len(f) > 14 {
			n.Features = traceFeatures(f[14])
		}
		c.Nodes = append(c.Nodes, n)
	}
	return c
}

// hostNames is a job's nodes in allocation order, each once, the way
// Maui's simstat lists them (c064:c063:…).
func hostNames(hs []forecast.HostProcs) string {
	names := make([]string, len(hs))
	for i, h := range hs {
		names[i] = h.Node
	}
	return strings.Join(names, ":")
}

// mauiFidelity replays a Maui workload trace on the resource trace and
// compares every job's start (relative to its queue time, since Maui's
// simulated clock starts at its own T0) and its nodes (sameHosts: exactly
// Maui's, in Maui's order) with Maui's simstat.
func mauiFidelity(t *testing.T, dir, resource, workload, simstat string, p Policy) (exact, sameHosts, total int, agreeUntil int64, report string) {
	c := readMauiNodes(t, dir+resource)
	wl := readMauiJobs(t, dir+workload)
	jobs := make([]Job, len(wl))
	for i, w := range wl {
		jobs[i] = Job{ID: w.id, Procs: w.tasks, Walltime: w.wclimit, Runtime: w.end - w.start, Submit: w.queue}
	}
	res, err := Run(c, jobs, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(c, jobs, res); err != nil {
		t.Fatal(err)
	}
	ours := map[string]JobResult{}
	for _, r := range res.Jobs {
		ours[r.ID] = r
	}
	var diffs []string
	var sumAbs int64
	agreeUntil = never
	for _, m := range readMauiJobs(t, dir+simstat) {
		o, ok := ours[m.id]
		if !ok {
			t.Fatalf("job %s is in Maui's simstat but did not run here", m.id)
		}
		total++
		if m.hosts != "" && hostNames(o.Hosts) == m.hosts {
			sameHosts++
		}
		d := o.Wait() - (m.start - m.queue)
		if d == 0 {
			exact++
			continue
		}
		sumAbs += max(d, -d)
		agreeUntil = min(agreeUntil, o.Wait(), m.start-m.queue)
		diffs = append(diffs, fmt.Sprintf("%s(%+d)", m.id, d))
	}
	sort.Strings(diffs)
	if len(diffs) > 12 {
		diffs = append(diffs[:12], "…")
	}
	report = fmt.Sprintf("%d/%d starts exact (%.1f %%), %d on Maui's hosts, schedules identical for the first %d s, mean |Δ| over the others %.0f s: %s",
		exact, total, 100*float64(exact)/float64(total), sameHosts, agreeUntil, float64(sumAbs)/float64(max(total-exact, 1)), strings.Join(diffs, " "))
	return exact, sameHosts, total, agreeUntil, report
}

// TestMauiFidelitySim5 replays the 500- and 2,000-job backlogs Maui 3.3.1
// scheduled exactly (sim5-adaptive-step: RESERVATIONDEPTH 1, FIRSTFIT
// backfill, MINRESOURCE) on the same 64×8 nodes with the easy policy and
// reports how many start times and host lists it reproduces. It
// reproduces all of them (see docs/simulator.md for what was copied from
// Maui to get there), so any difference is a regression.
func TestMauiFidelitySim5(t *testing.T) {
	const dir = "testdata/maui/"
	for _, n := range []string{"500", "2000"} {
		exact, hosts, total, agree, report := mauiFidelity(t, dir, "sim5.resource64.trace", "sim5.workload"+n+".trace.gz", "sim5.simstat.exact"+n+".out.gz", EASY)
		t.Logf("sim5 %s jobs, easy: %s", n, report)
		if exact != total {
			t.Errorf("sim5 %s: %d/%d starts exact, want all (schedules diverge at %d s)", n, exact, total, agree)
		}
		if hosts != total {
			t.Errorf("sim5 %s: %d/%d jobs on Maui's hosts, want all", n, hosts, total)
		}
	}
}

// TestMauiFidelitySim1: 8 nodes × 2 processors, 10 jobs, Maui stepping a
// fixed 60 s RMPOLLINTERVAL (jobs are seen and started only at
// iterations).
func TestMauiFidelitySim1(t *testing.T) {
	exact, hosts, total, _, report := mauiFidelity(t, "testdata/maui/", "sim1.resource.trace", "sim1.workload.trace", "sim1.simstat.out", Policy{Depth: 1, Poll: 60})
	t.Logf("sim1, easy, poll 60 s: %s", report)
	if exact != total || hosts != total {
		t.Errorf("sim1: %d/%d starts exact, %d on Maui's hosts, want all", exact, total, hosts)
	}
}

// TestMauiFidelitySim3 compares with Maui stepping fixed 60 s and 300 s
// RMPOLLINTERVALs over the same kind of 500-job backlog (sim3-timing).
func TestMauiFidelitySim3(t *testing.T) {
	for _, c := range []struct {
		step  int64
		file  string
		floor float64
	}{{60, "sim3.simstat.t60.out.gz", 1}, {300, "sim3.simstat.t300.out.gz", 1}} {
		exact, hosts, total, _, report := mauiFidelity(t, "testdata/maui/", "sim5.resource64.trace", "sim3.workload500.trace.gz", c.file, Policy{Depth: 1, Poll: c.step})
		t.Logf("sim3, easy, poll %d s: %s", c.step, report)
		if share := float64(exact) / float64(total); share < c.floor {
			t.Errorf("sim3 poll %d: %.3f exact, floor %.2f", c.step, share, c.floor)
		}
		if hosts != total {
			t.Errorf("sim3 poll %d: %d/%d jobs on Maui's hosts, want all", c.step, hosts, total)
		}
	}
}
