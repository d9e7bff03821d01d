package sim

import "testing"

// A job gets the QOS it asked for when its credentials' QLIST or QDEF
// admit it, else the first default that is admitted (user, DEFAULT user,
// group, …), else DEFAULT (MQOSGetAccess).
func TestQOSAccess(t *testing.T) {
	mc := readCfg(t, `QOSCFG[hi] PRIORITY=100
USERCFG[alice] QLIST=hi,lo QDEF=lo
USERCFG[DEFAULT] QDEF=med
GROUPCFG[g2] QDEF=gq
CLASSCFG[fast] QLIST=hi
`)
	a := mc.Policy.QOS
	if a == nil {
		t.Fatal("no QOS access read")
	}
	for _, c := range []struct {
		j    Job
		want string
	}{
		{Job{User: "alice", QOS: "hi"}, "hi"},
		{Job{User: "alice"}, "lo"},
		{Job{User: "alice", QOS: "top"}, "lo"},
		{Job{User: "bob", QOS: "hi"}, "med"},
		{Job{User: "bob", QOS: "hi", Queue: "fast"}, "hi"},
		{Job{User: "bob", Group: "g2"}, "med"},
		{Job{User: "alice", Group: "g2", QOS: "gq"}, "gq"},
	} {
		if got := a.Of(c.j); got != c.want {
			t.Errorf("%+v: QOS %q, want %q", c.j, got, c.want)
		}
	}
	if got := (&QOSAccess{}).Of(Job{QOS: "hi"}); got != DefaultQOS {
		t.Errorf("no access lists: QOS %q, want DEFAULT", got)
	}
}

// The QOS a job is given sets its priority: a job asking for a QOS it may
// not have gets its default's.
func TestQOSPriorityFollowsAccess(t *testing.T) {
	mc := readCfg(t, `QOSWEIGHT 1
QOSCFG[hi] PRIORITY=1000
USERCFG[alice] QLIST=hi
`)
	jobs := []Job{
		{ID: "run", Procs: 4, Walltime: 100, Runtime: 100, Submit: 0, User: "carol"},
		{ID: "bob", Procs: 4, Walltime: 100, Runtime: 100, Submit: 1, User: "bob", QOS: "hi"},
		{ID: "alice", Procs: 4, Walltime: 100, Runtime: 100, Submit: 2, User: "alice", QOS: "hi"},
	}
	res, err := Run(UniformCluster(1, 4), jobs, mc.Policy)
	if err != nil {
		t.Fatal(err)
	}
	start := map[string]int64{}
	for _, r := range res.Jobs {
		start[r.ID] = r.Start
	}
	if start["alice"] != 100 || start["bob"] != 200 {
		t.Errorf("starts %v: want alice (QOS hi) at 100 before bob (no access) at 200", start)
	}
}
