package sim

import (
	"strings"
	"testing"
)

// QFLAGS is read with strstr per flag, as Maui does: NOBF is followed, the
// flags with an effect the simulator lacks are listed, and flags nothing
// in Maui 3.3.1 reads are not. Any other *CFG attribute the simulator does
// not follow is listed too (PLIST used to be dropped silently).
func TestQOSFlagsRead(t *testing.T) {
	mc := readCfg(t, "QOSCFG[lo] QFLAGS=NOBF:PREEMPTEE\nQOSCFG[hi] QFLAGS=NTR,IGNJOBPERUSER\nQOSCFG[x] FLAGS=NOBF\nUSERCFG[u1] PLIST=p1\n")
	q := mc.Policy.QOS
	if q == nil || !q.NoBackfill["lo"] || q.NoBackfill["hi"] || q.NoBackfill["x"] {
		t.Fatalf("NoBackfill: %+v", q)
	}
	want := []string{"QFLAGS PREEMPTEE", "QFLAGS IGNJOBPERUSER", "FLAGS=NOBF: not modelled", "PLIST=p1: not modelled"}
	if len(mc.Unmodelled) != len(want) {
		t.Fatalf("Unmodelled %q, want lines for %q", mc.Unmodelled, want)
	}
	for k, w := range want {
		if !strings.Contains(mc.Unmodelled[k], w) {
			t.Errorf("Unmodelled[%d] = %q, want %s", k, mc.Unmodelled[k], w)
		}
	}
}

// A job whose QOS has NOBF never backfills (MQueueBackFill): it waits for
// the priority pass, while a job of another QOS backfills into the same
// hole.
func TestQOSNoBackfill(t *testing.T) {
	c := UniformCluster(1, 4)
	jobs := func(qos string) []Job {
		return []Job{
			{ID: "big", Procs: 3, Walltime: 100, Runtime: 100, Submit: 0, User: "u"},
			{ID: "b1", Procs: 4, Walltime: 100, Runtime: 100, Submit: 1, User: "u"},
			{ID: "b2", Procs: 4, Walltime: 100, Runtime: 100, Submit: 2, User: "u"},
			{ID: "small", Procs: 1, Walltime: 50, Runtime: 50, Submit: 3, User: "u", QOS: qos},
		}
	}
	cfg := "RESERVATIONDEPTH 1\nUSERCFG[DEFAULT] QLIST=lo,hi\nQOSCFG[lo] QFLAGS=NOBF\n"
	for qos, want := range map[string]int64{"lo": 300, "hi": 3} {
		res, err := Run(c, jobs(qos), readCfg(t, cfg).Policy)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Jobs {
			if r.ID == "small" && r.Start != want {
				t.Errorf("QOS %s: small starts at %d, want %d", qos, r.Start, want)
			}
		}
	}
}
