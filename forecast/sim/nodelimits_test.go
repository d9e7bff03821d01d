package sim

import (
	"slices"
	"strings"
	"testing"
)

// NODECFG MAXJOB, MAXPROC and MAXPROCPERUSER are read per node and for
// DEFAULT (Maui's strtol with base 0); MAXJOBPERUSER and DEFAULT's other
// settings are listed as not modelled.
func TestNodeCfgLimits(t *testing.T) {
	mc := readCfg(t, "NODECFG[DEFAULT] MAXJOB=2 FEATURES=x\nNODECFG[n1] MAXJOB=1 MAXPROC=010\nNODECFG[n2] MAXPROCPERUSER=3 MAXJOBPERUSER=2\n")
	n := mc.Policy.Nodes
	if n == nil || n.DefaultLimits != (NodeLimits{MaxJob: 2}) {
		t.Fatalf("DEFAULT limits: %+v", n)
	}
	if n.Limits["n1"] != (NodeLimits{MaxJob: 1, MaxProc: 8}) || n.Limits["n2"] != (NodeLimits{MaxProcPerUser: 3}) {
		t.Errorf("node limits %+v", n.Limits)
	}
	if got := n.Limits["n2"].orDefault(n.DefaultLimits); got != (NodeLimits{MaxJob: 2, MaxProcPerUser: 3}) {
		t.Errorf("n2 with DEFAULT: %+v", got)
	}
	want := []string{"FEATURES=x", "MAXJOBPERUSER=2"}
	if len(mc.Unmodelled) != len(want) {
		t.Fatalf("Unmodelled %q, want lines for %q", mc.Unmodelled, want)
	}
	for k, w := range want {
		if !strings.Contains(mc.Unmodelled[k], w) {
			t.Errorf("Unmodelled[%d] = %q, want %s", k, mc.Unmodelled[k], w)
		}
	}
	if _, err := ReadMauiConfig(strings.NewReader("NODECFG[n1] MAXJOB=two\n")); err == nil || !strings.Contains(err.Error(), "MAXJOB") {
		t.Errorf("MAXJOB=two: %v, want an error naming it", err)
	}
}

// runVerified runs the simulator, checks the schedule with Verify and
// returns each job's result by id.
func runVerified(t *testing.T, c Cluster, jobs []Job, p Policy) map[string]JobResult {
	t.Helper()
	res, err := Run(c, jobs, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(c, jobs, res); err != nil {
		t.Fatal(err)
	}
	out := map[string]JobResult{}
	for _, r := range res.Jobs {
		out[r.ID] = r
	}
	return out
}

// MNodeCheckPolicies: a node at its MAXJOB takes no job starting now, and
// MAXPROC caps what it gives (MINRESOURCE takes n0002 first).
func TestNodeMaxJobAndMaxProcStartNow(t *testing.T) {
	c := UniformCluster(2, 4)
	one := func(id string, procs int) Job {
		return Job{ID: id, Procs: procs, Walltime: 100, Runtime: 100, User: "u"}
	}
	for _, tc := range []struct {
		cfg  string
		jobs []Job
		want map[string]string
	}{
		{"", []Job{one("a", 1), one("b", 1)}, map[string]string{"a": "n0002", "b": "n0002"}},
		{"NODECFG[n0002] MAXJOB=1\n", []Job{one("a", 1), one("b", 1)}, map[string]string{"a": "n0002", "b": "n0001"}},
		{"NODECFG[DEFAULT] MAXJOB=1\n", []Job{one("a", 1), one("b", 1), one("c", 1)}, map[string]string{"a": "n0002", "b": "n0001"}},
		{"NODECFG[n0002] MAXPROC=2\n", []Job{one("a", 3)}, map[string]string{"a": "n0002:n0001"}},
		{"NODECFG[n0002] MAXPROCPERUSER=2\n", []Job{one("a", 1), one("b", 1), one("c", 1)}, map[string]string{"a": "n0002", "b": "n0002", "c": "n0001"}},
	} {
		got := runVerified(t, c, tc.jobs, readCfg(t, "RESERVATIONDEPTH 1\nNODEALLOCATIONPOLICY MINRESOURCE\n"+tc.cfg).Policy)
		for id, hosts := range tc.want {
			if r := got[id]; r.Start != 0 || hostNames(r.Hosts) != hosts {
				t.Errorf("%q: %s at %d on %s, want 0 on %s", tc.cfg, id, r.Start, hostNames(r.Hosts), hosts)
			}
		}
		if tc.cfg == "NODECFG[DEFAULT] MAXJOB=1\n" && got["c"].Start != 100 {
			t.Errorf("DEFAULT MAXJOB=1: c starts at %d, want 100 (both nodes hold one job)", got["c"].Start)
		}
	}
}

// MJobGetSNRange's policy block: n0001 (MAXJOB=1) is idle now, but the
// blocked job z's reservation takes part of it from +100, so a job
// starting now may use it only if it ends by then — the way Maui put
// nodemaxjob's j0011 on n001 and not n002.
func TestNodeMaxJobCountsLaterReservations(t *testing.T) {
	c := UniformCluster(2, 4)
	jobs := []Job{
		{ID: "y", Procs: 4, Walltime: 100, Runtime: 100, Submit: 0},
		{ID: "z", Procs: 6, Walltime: 100, Runtime: 100, Submit: 1},
		{ID: "s", Procs: 1, Walltime: 1000, Runtime: 1000, Submit: 1},
		{ID: "q", Procs: 1, Walltime: 50, Runtime: 50, Submit: 1},
	}
	base := "RESERVATIONDEPTH 1\nNODEALLOCATIONPOLICY MINRESOURCE\n"
	for _, tc := range []struct {
		cfg        string
		sAt        int64
		qAt        int64
		qHostsWant string
	}{
		{"", 1, 1, "n0001"},
		{"NODECFG[n0001] MAXJOB=2\n", 1, 1, "n0001"},
		{"NODECFG[n0001] MAXJOB=1\n", 200, 1, "n0001"},
	} {
		got := runVerified(t, c, jobs, readCfg(t, base+tc.cfg).Policy)
		if got["z"].Start != 100 || !slices.Contains([]string{"n0002:n0001"}, hostNames(got["z"].Hosts)) {
			t.Errorf("%q: z at %d on %s, want 100 on n0002:n0001", tc.cfg, got["z"].Start, hostNames(got["z"].Hosts))
		}
		if got["s"].Start != tc.sAt {
			t.Errorf("%q: s starts at %d, want %d", tc.cfg, got["s"].Start, tc.sAt)
		}
		if r := got["q"]; r.Start != tc.qAt || hostNames(r.Hosts) != tc.qHostsWant {
			t.Errorf("%q: q at %d on %s, want %d on %s", tc.cfg, r.Start, hostNames(r.Hosts), tc.qAt, tc.qHostsWant)
		}
	}
}
