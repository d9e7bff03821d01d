package torque

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"lookahead/forecast"
)

// live is the capture of non-adjacent cores on the live Torque 6.1.3
// (testdata/torque-6.1.3/live-noncontiguous/README.md).
const live = "testdata/torque-6.1.3/live-noncontiguous"

func readLive(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(live, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParseNodeJobsForms(t *testing.T) {
	cases := []struct {
		in   string
		want []forecast.NodeJob
	}{
		{"0-1/42.vm,4-5/44.vm,2-3,6-7/45.vm", []forecast.NodeJob{ // 6.1.3, captured live
			{Job: "42.vm", Slots: []int{0, 1}}, {Job: "44.vm", Slots: []int{4, 5}}, {Job: "45.vm", Slots: []int{2, 3, 6, 7}}}},
		{"0-1,6-7/9.vm", []forecast.NodeJob{{Job: "9.vm", Slots: []int{0, 1, 6, 7}}}},
		{"0/9.vm", []forecast.NodeJob{{Job: "9.vm", Slots: []int{0}}}},
		{"0/0.vm, 1/3[0].vm", []forecast.NodeJob{{Job: "0.vm", Slots: []int{0}}, {Job: "3[0].vm", Slots: []int{1}}}},
		{"0/5.vm,1,3/6.vm,2/5.vm", []forecast.NodeJob{{Job: "5.vm", Slots: []int{0, 2}}, {Job: "6.vm", Slots: []int{1, 3}}}},
		{"", nil},
	}
	for _, c := range cases {
		got, err := ParseNodeJobs(c.in)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseNodeJobs(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestParseNodeJobsSkipsBadItems(t *testing.T) {
	cases := []struct {
		in, bad string
		keep    []string
	}{
		{"0-1/42.vm,x-1/43.vm,4-5/44.vm", "x-1/43.vm", []string{"42.vm", "44.vm"}},
		{"0-1/42.vm,2-3", "2-3", []string{"42.vm"}},
		{"0-1/,2/44.vm", "0-1/", []string{"44.vm"}},
		{"3-1/42.vm", "3-1/42.vm", nil},
	}
	for _, c := range cases {
		got, err := ParseNodeJobs(c.in)
		var it *ItemError
		if !errors.As(err, &it) || it.Item != c.bad {
			t.Errorf("ParseNodeJobs(%q): err %v, want the item %q named", c.in, err, c.bad)
		}
		var ids []string
		for _, j := range got {
			ids = append(ids, j.Job)
		}
		if !slices.Equal(ids, c.keep) {
			t.Errorf("ParseNodeJobs(%q) kept %v, want %v", c.in, ids, c.keep)
		}
	}
}

func TestParseExecHostForms(t *testing.T) {
	cases := map[string][]forecast.HostProcs{
		"vm/2-3,6-7":       {{Node: "vm", Procs: 4}}, // 6.1.3, captured live
		"vm/0-3":           {{Node: "vm", Procs: 4}},
		"vm/0+vm/1":        {{Node: "vm", Procs: 2}},
		"vm/0-1,6-7+n2/0":  {{Node: "vm", Procs: 4}, {Node: "n2", Procs: 1}},
		" vm/0 + vm/1 ":    {{Node: "vm", Procs: 2}},
		"n1/0-1,3+n2/0-15": {{Node: "n1", Procs: 3}, {Node: "n2", Procs: 16}},
	}
	for in, want := range cases {
		got, err := ParseExecHost(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseExecHost(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
}

// TestLiveNoncontiguousCapture reads the live pbsnodes -x and qstat -f -x
// of jobs 42, 44 (2 procs each) and 45 (4 procs on 2-3,6-7).
func TestLiveNoncontiguousCapture(t *testing.T) {
	nodes, err := ParsePbsnodesXML(strings.NewReader(string(readLive(t, "pbsnodes-gap.xml"))))
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 1 || !nodes[0].Usable() {
		t.Fatalf("nodes %+v", nodes)
	}
	held := 0
	for _, j := range nodes[0].Jobs {
		held += len(j.Slots)
	}
	if held != 8 || len(nodes[0].Jobs) != 3 || !slices.Equal(nodes[0].Jobs[2].Slots, []int{2, 3, 6, 7}) {
		t.Errorf("jobs %+v", nodes[0].Jobs)
	}
	jobs, err := ParseQstatXML(strings.NewReader(string(readLive(t, "qstat-f-gap.xml"))))
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if len(j.Hosts) != 1 || j.Hosts[0].Procs != j.Procs {
			t.Errorf("job %s: procs %d, hosts %+v", j.ID, j.Procs, j.Hosts)
		}
	}
}

// mapRunner answers each tool with fixed bytes and records the argv.
type mapRunner struct {
	out  map[string][]byte
	argv [][]string
}

func (m *mapRunner) Run(_ context.Context, name string, args ...string) (Result, error) {
	m.argv = append(m.argv, append([]string{name}, args...))
	return Result{Stdout: m.out[name]}, nil
}

// TestSnapshotGoesOnPastBadItems: the live capture with one item made
// unparseable in each tool still gives a snapshot; the node is not offered
// and the job keeps its processors without a placement.
func TestSnapshotGoesOnPastBadItems(t *testing.T) {
	nodesXML := strings.Replace(string(readLive(t, "pbsnodes-gap.xml")), "4-5/44.vm", "4-x/44.vm", 1)
	qstatXML := strings.Replace(string(readLive(t, "qstat-f-gap.xml")), "<exec_host>vm/2-3,6-7<", "<exec_host>vm/2-3,6-<", 1)
	r := &mapRunner{out: map[string][]byte{"pbsnodes": []byte(nodesXML), "qstat": []byte(qstatXML)}}
	var told []string
	c := NewClient(r, ClientConfig{OnSkipped: func(it *ItemError) { told = append(told, it.Where) }})
	snap, err := c.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.Skipped() != 2 || !slices.Equal(told, []string{"node vm jobs", "job 45.vm exec_host"}) {
		t.Errorf("skipped %d, told %v", c.Skipped(), told)
	}
	n := snap.Nodes[0]
	if n.Usable() || !slices.Contains(n.State, forecast.NodeUnknown) || len(n.Jobs) != 2 {
		t.Errorf("node %+v: want kept, not usable, with its 2 good jobs", n)
	}
	var j45 *forecast.LocalJob
	for i := range snap.Jobs {
		if snap.Jobs[i].ID == "45.vm" {
			j45 = &snap.Jobs[i]
		}
	}
	if j45 == nil || j45.Procs != 4 || j45.Hosts != nil || !j45.Running() {
		t.Errorf("45.vm %+v: want kept running with 4 procs and no hosts", j45)
	}
}

func TestServerPassedToClients(t *testing.T) {
	r := &mapRunner{out: map[string][]byte{}}
	c := NewClient(r, ClientConfig{Server: "pbs.example:15001"})
	if _, err := c.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"pbsnodes", "-s", "pbs.example:15001", "-x"}, {"qstat", "-f", "-x", "-t", "@pbs.example:15001"}}
	if !reflect.DeepEqual(r.argv, want) {
		t.Errorf("argv %q, want %q", r.argv, want)
	}
}
