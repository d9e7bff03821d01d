package maui

import (
	"bytes"
	"strings"
	"testing"

	"lookahead/forecast"
)

// The live site's maui.cfg sets JOBNODEMATCHPOLICY EXACTNODE. Maui's
// trace reader then sets every job's node count to its task count
// (MTrace.c), so a nodes=1:ppn=4 job is "corrupt" (TPN:4 * N:4 != T:4)
// and a running job's four tasks need four nodes. The simulation config
// leaves EXACTNODE out and the traces carry the node count the live PBS
// interface derives (MPBSI.c: tasks / max(1, tasks per node)).
func TestExactNodeTranslated(t *testing.T) {
	site := readFixture(t, "live-site/maui.cfg")
	if !SiteExactNode(site) || SiteExactNode([]byte("JOBNODEMATCHPOLICY EXACTPROC\n")) || SiteExactNode(nil) {
		t.Fatal("SiteExactNode")
	}
	var buf bytes.Buffer
	if err := WriteSimConfig(&buf, bytes.NewReader(append(site, "JOBNODEMATCHPOLICY EXACTNODE EXACTPROC\n"...)), SimConfig{Host: "vm", Port: 40000}); err != nil {
		t.Fatal(err)
	}
	var policy []string
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.HasPrefix(l, "JOBNODEMATCHPOLICY") {
			policy = append(policy, l)
		}
	}
	if len(policy) != 1 || policy[0] != "JOBNODEMATCHPOLICY EXACTPROC" {
		t.Errorf("policy lines %q, want only EXACTPROC kept", policy)
	}
	snap := forecast.Snapshot{Site: "vm", Nodes: []forecast.SnapshotNode{{Name: "vm", Procs: 8, State: []string{"free"}}},
		Jobs: []forecast.LocalJob{
			{ID: "1.vm", User: "alice", State: "R", Procs: 4, Nodes: 1, PPN: 4, Walltime: 600, Started: 900, Used: 89,
				Hosts: []forecast.HostProcs{{Node: "vm", Procs: 4}}},
			{ID: "2.vm", User: "alice", State: "Q", Procs: 6, Nodes: 1, PPN: 6, Walltime: 600, Submitted: 950},
			{ID: "3.vm", User: "bob", State: "Q", Procs: 2, Nodes: 2, PPN: 1, Walltime: 60, Submitted: 960},
		}}
	tr, err := BuildTraces(snap, TraceOptions{Now: 1000, ExactNode: true})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ParseWorkload(bytes.NewReader(tr.Workload))
	if err != nil || len(recs) != 3 {
		t.Fatalf("%v %v", recs, err)
	}
	for _, want := range []struct {
		id           string
		nodes, tasks int
		tpn          string
	}{{"j00001", 0, 4, "0"}, {"j00002", 1, 6, "6"}, {"j00003", 2, 2, "1"}} {
		r := recs[map[string]int{"j00001": 0, "j00002": 1, "j00003": 2}[want.id]]
		if r.ID != want.id || r.Nodes != want.nodes || r.Tasks != want.tasks || r.Fields[wfTPN] != want.tpn {
			t.Errorf("%s: nodes %d tasks %d tpn %s, want %+v", r.ID, r.Nodes, r.Tasks, r.Fields[wfTPN], want)
		}
	}
	// Without EXACTNODE the node count stays 0 (any), as before.
	tr, _ = BuildTraces(snap, TraceOptions{Now: 1000})
	if recs, _ := ParseWorkload(bytes.NewReader(tr.Workload)); recs[1].Nodes != 0 {
		t.Errorf("node count %d without EXACTNODE", recs[1].Nodes)
	}
}

// A running job is held until started + walltime: Torque's
// resources_used.walltime lags (here 89 s at 100 s elapsed), and limit −
// used would move the predicted end with every snapshot.
func TestRunningJobHeldToStartPlusWalltime(t *testing.T) {
	snap := forecast.Snapshot{Site: "vm", Nodes: []forecast.SnapshotNode{{Name: "vm", Procs: 8, State: []string{"free"}}},
		Jobs: []forecast.LocalJob{{ID: "1.vm", User: "alice", State: "R", Procs: 4, Walltime: 600, Started: 900, Used: 89,
			Hosts: []forecast.HostProcs{{Node: "vm", Procs: 4}}}}}
	for _, now := range []int64{1000, 1007, 1030} {
		tr, err := BuildTraces(snap, TraceOptions{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if j := tr.Jobs["j00001"]; now+j.Runtime != 1500 || j.WCLimit != j.Runtime {
			t.Errorf("now %d: runtime %d ends at %d, want 1500", now, j.Runtime, now+j.Runtime)
		}
	}
}

// Jobs bound to a reservation of the snapshot run inside it: the
// simulation holds the reservation, not the jobs again.
func TestBoundJobsNotSimulated(t *testing.T) {
	snap := forecast.Snapshot{Site: "vm", Nodes: []forecast.SnapshotNode{{Name: "vm", Procs: 8, State: []string{"free"}}},
		Reservations: []forecast.Reservation{{ID: "la.g1.0", Job: "g1", Start: 900, End: 2000, Hosts: []forecast.HostProcs{{Node: "vm", Procs: 4}}}},
		Jobs: []forecast.LocalJob{
			{ID: "1.vm", User: "alice", State: "R", Procs: 4, Walltime: 600, Started: 950, Reservation: "la.g1.0", Hosts: []forecast.HostProcs{{Node: "vm", Procs: 4}}},
			{ID: "2.vm", User: "alice", State: "Q", Procs: 4, Walltime: 600, Reservation: "la.g1.0"},
			{ID: "3.vm", User: "bob", State: "Q", Procs: 2, Walltime: 600, Reservation: "gone.0"},
		}}
	tr, err := BuildTraces(snap, TraceOptions{Now: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Jobs) != 1 || tr.IDs["j00001"] != "3.vm" || len(tr.Skipped) != 2 {
		t.Errorf("jobs %v skipped %v", tr.IDs, tr.Skipped)
	}
}
