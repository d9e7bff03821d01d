package sim

import (
	"strings"
	"testing"
)

// QOSCFG limits count over every running job in the QOS, whoever runs it
// (MJobCheckLimits, mxoQOS); QOSCFG[DEFAULT] limits each QOS without its
// own, and the jobs with no QOS are in DEFAULT. OMAX* overrides are
// reported, not followed.
func TestQOSLimits(t *testing.T) {
	mc := readCfg(t, `QOSCFG[hi] MAXJOB=1
QOSCFG[DEFAULT] MAXPROC=2
QOSCFG[lo] OMAXJOB=5
USERCFG[DEFAULT] QLIST=hi,lo
`)
	jobs := []Job{
		{ID: "h1", Procs: 1, Walltime: 100, Runtime: 100, Submit: 0, User: "alice", QOS: "hi"},
		{ID: "h2", Procs: 1, Walltime: 100, Runtime: 100, Submit: 1, User: "bob", QOS: "hi"},
		{ID: "d1", Procs: 2, Walltime: 100, Runtime: 100, Submit: 2, User: "carol"},
		{ID: "d2", Procs: 1, Walltime: 100, Runtime: 100, Submit: 3, User: "dave"},
		{ID: "l1", Procs: 2, Walltime: 100, Runtime: 100, Submit: 4, User: "erin", QOS: "lo"},
	}
	got := runStarts(t, UniformCluster(4, 4), jobs, mc.Policy)
	want := map[string]int64{"h1": 0, "h2": 100, "d1": 2, "d2": 102, "l1": 4}
	for id, s := range want {
		if got[id] != s {
			t.Errorf("%s starts at %d, want %d (all %v)", id, got[id], s, got)
		}
	}
	if len(mc.Unmodelled) == 0 || !strings.Contains(strings.Join(mc.Unmodelled, "\n"), "QOSCFG[lo] OMAXJOB=5: QOS override limits are not modelled") {
		t.Errorf("unmodelled %q", mc.Unmodelled)
	}
}
