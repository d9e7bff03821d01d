package sim

import (
	"slices"
	"strings"
	"testing"

	"lookahead/forecast"
)

// NODECFG FEATURES is split as Maui splits it (MNodeProcessConfig): the
// first feature ends at ':', the next at ',', ' ' or tab.
func TestNodeCfgFeatures(t *testing.T) {
	for v, want := range map[string][]string{
		"fast":       {"fast"},
		"fast:big":   {"fast", "big"},
		"a:b,c":      {"a", "b", "c"},
		"a,b":        {"a,b"},
		"a:b:c":      {"a", "b:c"},
		"":           {},
		":x":         {"x"},
		"gpu:big,hm": {"gpu", "big", "hm"},
	} {
		if got := nodeCfgFeatures(v); !slices.Equal(got, want) {
			t.Errorf("FEATURES=%s: %q, want %q", v, got, want)
		}
	}
	mc := readCfg(t, "NODECFG[n1] FEATURES=fast\nNODECFG[n1] FEATURES=big:fast PARTITION=p1\n")
	if mc.Policy.Nodes == nil || !slices.Equal(mc.Policy.Nodes.Features["n1"], []string{"fast", "big"}) {
		t.Fatalf("NODECFG features: %+v", mc.Policy.Nodes)
	}
	if len(mc.Unmodelled) != 1 || !strings.Contains(mc.Unmodelled[0], "partitions are followed in part") {
		t.Errorf("Unmodelled %q, want the partition note only", mc.Unmodelled)
	}
	if got := mc.Policy.Nodes.Partition["n1"]; got != "p1" {
		t.Errorf("n1's partition %q, want p1", got)
	}
}

// featureCluster: n0001 has "fast" of its own (Torque's properties),
// n0002 gets it from NODECFG, n0003 and n0004 have none; 2 processors
// each.
func featureCluster(t *testing.T, cfg string) (Cluster, Policy) {
	c := UniformCluster(4, 2)
	c.Nodes[0].Features = []string{"fast"}
	mc := readCfg(t, "NODECFG[n0002] FEATURES=fast\n"+cfg)
	return c, mc.Policy
}

// A job asking for a feature runs only on nodes that have it: it waits
// for them while other nodes are free, gets its reservation there (the
// first blocked job on held nodes, the second through the availability
// ranges), and jobs without a request backfill onto the other nodes.
func TestFeatureJobsUseEligibleNodes(t *testing.T) {
	c, p := featureCluster(t, "RESERVATIONDEPTH 2\n")
	fast := []string{"fast"}
	jobs := []Job{
		{ID: "f", Procs: 2, Walltime: 100, Runtime: 100, Submit: 0, Features: fast},
		{ID: "g", Procs: 4, Walltime: 100, Runtime: 100, Submit: 1, Features: fast},
		{ID: "h", Procs: 4, Walltime: 100, Runtime: 100, Submit: 2, Features: fast},
		{ID: "p", Procs: 4, Walltime: 50, Runtime: 50, Submit: 3},
		{ID: "big", Procs: 2, Walltime: 50, Runtime: 50, Submit: 4, Features: []string{"fast", "big"}},
	}
	res, err := Run(c, jobs, p)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]JobResult{}
	for _, r := range res.Jobs {
		got[r.ID] = r
	}
	want := map[string]int64{"f": 0, "g": 100, "h": 200, "p": 3}
	for id, start := range want {
		if got[id].Start != start {
			t.Errorf("%s starts at %d, want %d (hosts %v)", id, got[id].Start, start, got[id].Hosts)
		}
	}
	for _, id := range []string{"f", "g", "h"} {
		for _, h := range got[id].Hosts {
			if h.Node != "n0001" && h.Node != "n0002" {
				t.Errorf("%s runs on %s, which has no feature fast", id, h.Node)
			}
		}
	}
	if len(res.Rejected) != 1 || res.Rejected[0].ID != "big" {
		t.Errorf("rejected %+v, want big (no node has fast and big)", res.Rejected)
	}
}

// The same with every node allocation policy and reservation mode: no
// feature job ever lands on a node without its features (Verify checks
// the rest of the schedule).
func TestFeatureJobsEveryPolicy(t *testing.T) {
	for _, cfg := range []string{
		"NODEALLOCATIONPOLICY MINRESOURCE\n", "NODEALLOCATIONPOLICY FIRSTAVAILABLE\n",
		"NODEALLOCATIONPOLICY LASTAVAILABLE\nBACKFILLPOLICY BESTFIT\n",
		"RESERVATIONDEPTH 4\n", "RESERVATIONPOLICY HIGHEST\nRESERVATIONDEPTH 3\n", "RESERVATIONDEPTH 0\n",
	} {
		c, p := featureCluster(t, cfg)
		var jobs []Job
		for k := range 40 {
			j := Job{ID: "j" + itoa(k), Procs: 1 + k%4, Walltime: int64(50 + 37*(k%5)), Runtime: int64(20 + 31*(k%7)), Submit: int64(k * 7)}
			if k%3 == 0 {
				j.Features = []string{"fast"}
			}
			jobs = append(jobs, j)
		}
		res, err := Run(c, jobs, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := Verify(c, jobs, res); err != nil {
			t.Fatalf("%q: %v", cfg, err)
		}
		if len(res.Jobs) != len(jobs) {
			t.Fatalf("%q: %d jobs ran, want %d (stuck %v)", cfg, len(res.Jobs), len(jobs), res.Stuck)
		}
		for _, r := range res.Jobs {
			k := slices.IndexFunc(jobs, func(j Job) bool { return j.ID == r.ID })
			if len(jobs[k].Features) == 0 {
				continue
			}
			for _, h := range r.Hosts {
				if !featureNode(c, p, h) {
					t.Errorf("%q: %s runs on %s without feature fast", cfg, r.ID, h.Node)
				}
			}
		}
	}
}

func featureNode(c Cluster, p Policy, h forecast.HostProcs) bool {
	for _, n := range c.Nodes {
		if n.Name == h.Node {
			return slices.Contains(n.Features, "fast") || slices.Contains(p.Nodes.Features[n.Name], "fast")
		}
	}
	return false
}

// NODEALLOCATIONPOLICY PRIORITY takes nodes by NODECFG PRIORITY, highest
// first, the list order among equals (MJobAllocatePriority), for a job
// starting now and for a reservation.
func TestNodeAllocationPriority(t *testing.T) {
	mc := readCfg(t, `NODEALLOCATIONPOLICY PRIORITY
NODECFG[n0002] PRIORITY=10
NODECFG[n0004] PRIORITY=5
`)
	if len(mc.Unmodelled) != 0 {
		t.Fatalf("unmodelled %q", mc.Unmodelled)
	}
	jobs := []Job{
		{ID: "a", Procs: 1, Walltime: 100, Runtime: 100, Submit: 0},
		{ID: "b", Procs: 2, Walltime: 100, Runtime: 100, Submit: 1},
		{ID: "c", Procs: 4, Walltime: 100, Runtime: 100, Submit: 2},
		{ID: "d", Procs: 1, Walltime: 100, Runtime: 100, Submit: 3},
	}
	res, err := Run(UniformCluster(4, 1), jobs, mc.Policy)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range res.Jobs {
		got[r.ID] = itoa(int(r.Start)) + "@" + hostNames(r.Hosts)
	}
	want := map[string]string{"a": "0@n0002", "b": "1@n0004:n0001", "c": "101@n0002:n0004:n0001:n0003", "d": "201@n0002"}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: %s, want %s", id, got[id], w)
		}
	}
	if _, err := ReadMauiConfig(strings.NewReader("NODECFG[n1] PRIORITY=high\n")); err == nil {
		t.Error("PRIORITY=high: no error")
	}
}
