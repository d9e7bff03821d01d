package maui

import (
	"bytes"
	"testing"
)

// sim4Nodes/sim4Jobs describe the captured sim4 scenario (4 nodes x 2
// procs, two queued jobs, two running ones pinned with host lists); the
// writers must reproduce its traces byte for byte.
func sim4Nodes() []TraceNode {
	var nodes []TraceNode
	for _, n := range []string{"n01", "n02", "n03", "n04"} {
		nodes = append(nodes, TraceNode{Name: n, Procs: 2, MemMB: 2048, SwapMB: 4096, DiskMB: 10000,
			Classes: []ClassSlots{{"batch", 2}, {"running", 2}}})
	}
	return nodes
}

func sim4Jobs() []TraceJob {
	return []TraceJob{
		{Name: "q1", Tasks: 4, User: "alice", Group: "physics", Account: "proj1", Class: "batch", WCLimit: 3600, Queue: 1795309624, Runtime: 3600},
		{Name: "q2", Tasks: 2, User: "bob", Group: "chem", Account: "proj2", Class: "batch", WCLimit: 1800, Queue: 1795309824, Runtime: 1800},
		{Name: "run1", Tasks: 2, User: "carol", Group: "bio", Account: "proj3", Class: "running", WCLimit: 1200, Queue: 1795316824, Runtime: 1200, HostList: []string{"n03", "n03"}},
		{Name: "run2", Tasks: 1, User: "dave", Group: "physics", Account: "proj1", Class: "running", WCLimit: 2400, Queue: 1795316824, Runtime: 2400, HostList: []string{"n04"}},
	}
}

func TestTraceWritersReproduceSim4(t *testing.T) {
	var res, wl bytes.Buffer
	if err := WriteResourceTrace(&res, sim4Nodes()); err != nil {
		t.Fatal(err)
	}
	if err := WriteWorkloadTrace(&wl, sim4Jobs()); err != nil {
		t.Fatal(err)
	}
	if want := readFixture(t, "sim4/traces/resource.trace"); !bytes.Equal(res.Bytes(), want) {
		t.Errorf("resource trace:\n%s\nwant:\n%s", res.Bytes(), want)
	}
	if want := readFixture(t, "sim4/traces/workload.trace"); !bytes.Equal(wl.Bytes(), want) {
		t.Errorf("workload trace:\n%s\nwant:\n%s", wl.Bytes(), want)
	}
}

func TestTraceWritersReproduceSim1(t *testing.T) {
	var nodes []TraceNode
	for _, n := range []string{"n01", "n02", "n03", "n04", "n05", "n06", "n07", "n08"} {
		nodes = append(nodes, TraceNode{Name: n, Procs: 2, MemMB: 2048, SwapMB: 4096, DiskMB: 10000, Classes: []ClassSlots{{"batch", 2}}})
	}
	var res bytes.Buffer
	if err := WriteResourceTrace(&res, nodes); err != nil {
		t.Fatal(err)
	}
	if want := readFixture(t, "sim1/traces/resource.trace"); !bytes.Equal(res.Bytes(), want) {
		t.Errorf("resource trace:\n%s\nwant:\n%s", res.Bytes(), want)
	}
	// The workload: read the captured trace, write it back.
	recs, err := ParseWorkload(bytes.NewReader(readFixture(t, "sim1/traces/workload.trace")))
	if err != nil {
		t.Fatal(err)
	}
	var jobs []TraceJob
	for _, r := range recs {
		jobs = append(jobs, TraceJob{Name: r.ID, Tasks: r.Tasks, User: r.User, Group: r.Group, Account: r.Account,
			Class: "batch", WCLimit: r.WCLimit, Queue: r.Queue, Runtime: r.Runtime(), HostList: r.HostList})
	}
	var wl bytes.Buffer
	if err := WriteWorkloadTrace(&wl, jobs); err != nil {
		t.Fatal(err)
	}
	if want := readFixture(t, "sim1/traces/workload.trace"); !bytes.Equal(wl.Bytes(), want) {
		t.Errorf("workload trace:\n%s\nwant:\n%s", wl.Bytes(), want)
	}
}

func TestTraceWritersRefuseFieldShifts(t *testing.T) {
	for _, bad := range []string{"a b", "", "x:y", "[z]"} {
		if err := WriteWorkloadTrace(&bytes.Buffer{}, []TraceJob{{Name: "j", User: bad, Group: "g", Class: "batch"}}); err == nil {
			t.Errorf("user %q accepted", bad)
		}
		if err := WriteResourceTrace(&bytes.Buffer{}, []TraceNode{{Name: bad}}); err == nil {
			t.Errorf("node %q accepted", bad)
		}
	}
}
