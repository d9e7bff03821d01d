package slurm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The multi-node capture (testdata/README.md, capture-multinode.sh): an
// uneven core reservation over n1 (one core busy) and n2 lists no CoreIDs
// at first, so its per-node counts are not known; a few seconds later they
// are, and they are what was asked (3 and 4).
func TestUnevenReservationSplit(t *testing.T) {
	for _, tc := range []struct {
		file  string
		want  []NodeCPUs
		exact bool
	}{
		{"mn-show-reservation-uneven-nocoreids.txt", []NodeCPUs{{"n1", 4}, {"n2", 3}}, false},
		{"mn-show-reservation-uneven-coreids.txt", []NodeCPUs{{"n1", 3}, {"n2", 4}}, true},
	} {
		rs, err := ParseReservations(open(t, tc.file), time.UTC)
		if err != nil || len(rs) != 1 || rs[0].Name != "la.u1" || rs[0].CoreCount != 7 {
			t.Fatalf("%s: %+v, %v", tc.file, rs, err)
		}
		hosts, exact := rs[0].Split(map[string]int{"n1": 4, "n2": 4})
		if !slices.Equal(hosts, tc.want) || exact != tc.exact {
			t.Errorf("%s: split %v exact %v, want %v exact %v", tc.file, hosts, exact, tc.want, tc.exact)
		}
	}
	// While the counts are unknown a forecast must not offer any core the
	// reservation might hold: 4 of 4 on each node (7 less one for the
	// other node, at most the node's 4).
	rs, _ := ParseReservations(open(t, "mn-show-reservation-uneven-nocoreids.txt"), time.UTC)
	if got := rs[0].Hosts(map[string]int{"n1": 4, "n2": 4}); !slices.Equal(got, []NodeCPUs{{"n1", 4}, {"n2", 4}}) {
		t.Errorf("hosts while unknown: %v", got)
	}
	// One node: CoreCnt is exact without CoreIDs.
	one := Reservation{Nodes: "n2", CoreCount: 2}
	if got, exact := one.Split(nil); !exact || !slices.Equal(got, []NodeCPUs{{"n2", 2}}) {
		t.Errorf("one node: %v %v", got, exact)
	}
}

// A reservation widened by hand reads back with everything it admits.
func TestWidenedReservations(t *testing.T) {
	for _, tc := range []struct {
		file string
		ok   func(Reservation) bool
	}{
		{"mn-show-reservation-users-widened.txt", func(r Reservation) bool {
			return slices.Equal(r.Users, []string{"lookahead-slurmtest", "root"})
		}},
		{"mn-show-reservation-magnetic.txt", func(r Reservation) bool { return slices.Equal(r.Flags, []string{"SPEC_NODES", "MAGNETIC"}) }},
		{"mn-show-reservation-accounts.txt", func(r Reservation) bool { return slices.Equal(r.Accounts, []string{"root"}) }},
		{"mn-show-reservation-partition.txt", func(r Reservation) bool { return r.Partition == "short" }},
	} {
		rs, err := ParseReservations(open(t, tc.file), time.UTC)
		if err != nil || len(rs) != 1 || !tc.ok(rs[0]) {
			t.Errorf("%s: %+v, %v", tc.file, rs, err)
		}
	}
}

func TestPingAnswers(t *testing.T) {
	for _, tc := range []struct {
		file   string
		up     bool
		detail string
	}{
		{"mn-ping-up.txt", true, ""},
		{"mn-ping-down.txt", false, "Slurmctld(primary) at vm is DOWN"},
		{"mn-ping-nomunge.txt", false, "Munge encode failed"},
	} {
		b, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		up, detail := ParsePing(string(b))
		if up != tc.up || !strings.Contains(detail, tc.detail) || strings.Contains(detail, "***") {
			t.Errorf("%s: up %v, %q", tc.file, up, detail)
		}
		c := fixtureClient(FixtureRule{[]string{"scontrol", "ping"}, tc.file})
		if err := c.Ping(context.Background()); (err == nil) != tc.up || err != nil && !strings.Contains(err.Error(), tc.detail) {
			t.Errorf("%s: Ping = %v", tc.file, err)
		}
	}
}

// With slurmctld down sinfo --json exits 0 with an error and no node: an
// error, not an empty cluster.
func TestJSONErrorsAreErrors(t *testing.T) {
	if nodes, err := ParseSinfoJSON(open(t, "mn-sinfo-down.json")); err == nil || !strings.Contains(err.Error(), "Unspecified error") {
		t.Errorf("sinfo of a cluster whose slurmctld is down: %v, %v", nodes, err)
	}
	if _, err := ParseSqueueJSON(strings.NewReader(`{"errors":[{"error":"Unspecified error","errno":-1}],"jobs":[]}`)); err == nil {
		t.Error("squeue errors ignored")
	}
}

func TestConfigAndPartitions(t *testing.T) {
	for file, want := range map[string]string{"mn-show-config.txt": "select/cons_tres", "mn-linear-show-config.txt": "select/linear"} {
		cfg, err := ParseConfig(open(t, file))
		if err != nil || cfg["SelectType"] != want || cfg["SlurmUser"] != "root(0)" {
			t.Errorf("%s: SelectType %q SlurmUser %q, %v", file, cfg["SelectType"], cfg["SlurmUser"], err)
		}
	}
	ps, err := ParsePartitions(open(t, "mn-show-partition-batch.txt"))
	if err != nil || len(ps) != 1 || ps[0] != (PartitionInfo{Name: "batch", Default: true, Nodes: "n[1-2]", State: "UP"}) {
		t.Errorf("partitions %+v, %v", ps, err)
	}
	c := fixtureClient(FixtureRule{[]string{"scontrol", "show", "partition"}, "mn-show-partition-none.txt"})
	if _, err := c.Partitions(context.Background()); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("a missing partition: %v", err)
	}
}

// The refusals check and the agent explain: a partition that does not
// exist, and an unknown user (the same words as a caller who is no
// operator).
func TestCreateRefusalsOfTheMultinodeCapture(t *testing.T) {
	spec := ReservationSpec{Name: "la.x1", Users: []string{"u"}, Start: time.Unix(1e9, 0), Duration: time.Hour, Nodes: "n2", CoreCount: 1}
	for file, want := range map[string]Code{
		"mn-create-uneven.txt":          "", // another name's success
		"mn-create-wrong-partition.txt": BadPartition,
		"mn-create-unknown-user.txt":    NotOperator,
		"mn-linear-create-cores.txt":    NodesBusy,
	} {
		c := fixtureClient(FixtureRule{[]string{"scontrol", "create"}, file})
		a, err := c.CreateReservation(context.Background(), spec)
		if want == "" {
			if err == nil {
				t.Errorf("%s: %+v for la.x1", file, a)
			}
			continue
		}
		if err != nil || a.Code != want {
			t.Errorf("%s: %+v, %v; want %s", file, a, err, want)
		}
	}
}

// Narrowing a widened reservation in place (users=, accounts=, flags-=):
// the answers captured for it, and its argument vector.
func TestNarrowAnswersOfTheMultinodeCapture(t *testing.T) {
	for file, want := range map[string]Code{
		"mn-update-narrow.txt":       Updated,
		"mn-update-uneven-busy.txt":  NodesBusy,
		"mn-update-unknown-user.txt": NotOperator,
	} {
		c := fixtureClient(FixtureRule{[]string{"scontrol", "update"}, file})
		a, err := c.NarrowReservation(context.Background(), "la.t1", []string{"u"}, []string{"MAGNETIC"}, "")
		if err != nil || a.Code != want {
			t.Errorf("%s: %+v, %v; want %s", file, a, err, want)
		}
	}
	got := strings.Join(NarrowArgs("la.t1", []string{"u"}, []string{"MAGNETIC", "FLEX"}, "batch"), " ")
	if want := "update reservationname=la.t1 users=u accounts= flags-=MAGNETIC,FLEX partition=batch"; got != want {
		t.Errorf("args %q, want %q", got, want)
	}
}

// sbatch --uid takes the number: the job runs as that uid's user.
func TestSbatchByUID(t *testing.T) {
	args, err := SbatchArgs(SbatchSpec{User: "lookahead-slurmtest", UID: 999, Name: "p", Reservation: "r",
		Nodes: []NodeCPUs{{"n1", 1}}, TimeLimit: time.Minute, Output: "/o", Error: "/e"})
	if err != nil || !slices.Contains(args, "--uid=999") {
		t.Fatalf("args %q, %v", args, err)
	}
	if _, err := SbatchArgs(SbatchSpec{User: "x", Name: "p", Reservation: "r", Nodes: []NodeCPUs{{"n1", 1}}, TimeLimit: time.Minute}); !errors.Is(err, ErrBadSbatch) {
		t.Errorf("no uid: %v", err)
	}
	jobs, err := ParseSqueueJSON(open(t, "mn-squeue-uid-numeric.json"))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(jobs, func(j Job) bool { return j.Name == "by-uid" })
	if i < 0 || jobs[i].User != "lookahead-slurmtest" || jobs[i].UID != 999 {
		t.Errorf("the job submitted with --uid=999: %+v", jobs)
	}
}

// A node's RealMemory and active features reach the forecast: a grid job
// asking for memory or a feature is matched against them (before, every
// Slurm node was published with no memory and no feature, so such a job
// could never be placed on a Slurm site: "the largest node has 0").
func TestNodeMemoryAndFeatures(t *testing.T) {
	nodes, err := ParseSinfoJSON(open(t, "mn-sinfo-mem-features.json"))
	if err != nil {
		t.Fatal(err)
	}
	snap := ForecastSnapshot(Snapshot{Nodes: nodes}, "delta", time.Unix(1795922000, 0))
	got := ""
	for _, n := range snap.Nodes {
		got += fmt.Sprintf("%s:%d:%v ", n.Name, n.MemMB, n.Features)
	}
	if want := "n1:2000:[] n2:2000:[ib] n3:2000:[] "; got != want {
		t.Fatalf("nodes %q, want %q", got, want)
	}
}
