package slurm

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

func fixtureClient(rules ...FixtureRule) *Client {
	return &Client{Run: &FixtureRunner{Dir: "testdata", Rules: rules}}
}

func TestSnapshotFromFixtures(t *testing.T) {
	c := fixtureClient(
		FixtureRule{[]string{"scontrol", "ping"}, "mn-ping-up.txt"},
		FixtureRule{[]string{"sinfo", "--json"}, "sinfo.json"},
		FixtureRule{[]string{"squeue", "--json"}, "squeue.json"},
		FixtureRule{[]string{"scontrol", "show", "reservation"}, "show-reservation-two.txt"},
	)
	s, err := c.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Nodes) != 3 || len(s.Jobs) != 6 || len(s.Reservations) != 2 {
		t.Fatalf("snapshot: %d nodes, %d jobs, %d reservations", len(s.Nodes), len(s.Jobs), len(s.Reservations))
	}
}

func TestSnapshotClientFails(t *testing.T) {
	// sinfo answered with a refusal: the snapshot is an error naming it.
	c := fixtureClient(FixtureRule{[]string{"scontrol", "ping"}, "mn-ping-up.txt"}, FixtureRule{[]string{"sinfo"}, "create-reservation-busy.txt"})
	_, err := c.Snapshot(context.Background())
	if err == nil || !strings.Contains(err.Error(), "sinfo --json: exit 1") {
		t.Fatalf("err = %v", err)
	}
	// slurmctld down: the ping says so, and nothing else runs.
	c = fixtureClient(FixtureRule{[]string{"scontrol", "ping"}, "mn-ping-down.txt"})
	if _, err := c.Snapshot(context.Background()); err == nil || !strings.Contains(err.Error(), "slurmctld does not answer") {
		t.Fatalf("err = %v", err)
	}
}

func TestReservationAnswers(t *testing.T) {
	spec := ReservationSpec{Name: "grid-r1", Users: []string{"root"}, Start: time.Date(2026, 11, 25, 17, 35, 58, 0, time.UTC),
		Duration: 30 * time.Minute, NodeCount: 1, CoreCount: 4, Partition: "batch"}
	for _, tc := range []struct {
		file string
		want Code
	}{
		{"create-reservation-ok.txt", Created},
		{"create-reservation-overlap.txt", NodesBusy},
		{"create-reservation-busy.txt", NodesBusy},
		{"create-reservation-notadmin.txt", NotOperator},
		{"lifecycle-create-reservation-exists.txt", Exists},
	} {
		c := fixtureClient(FixtureRule{[]string{"scontrol", "create"}, tc.file})
		a, err := c.CreateReservation(context.Background(), spec)
		if err != nil || a.Code != tc.want || a.Ok() != (tc.want == Created) || (!a.Ok() && a.Reason == "") {
			t.Errorf("%s: %+v, %v; want %s", tc.file, a, err, tc.want)
		}
	}
	// Another reservation's success is not ours.
	c := fixtureClient(FixtureRule{[]string{"scontrol", "create"}, "create-reservation-maint.txt"})
	if a, err := c.CreateReservation(context.Background(), spec); err == nil {
		t.Errorf("maint-1's answer for grid-r1: %+v", a)
	}
	for _, tc := range []struct {
		file string
		want Code
	}{
		{"delete-reservation-ok.txt", Deleted},
		{"delete-reservation-inuse.txt", InUse},
		{"lifecycle-delete-reservation-unknown.txt", NoSuch},
	} {
		c := fixtureClient(FixtureRule{[]string{"scontrol", "delete"}, tc.file})
		a, err := c.DeleteReservation(context.Background(), "grid-r1")
		if err != nil || a.Code != tc.want {
			t.Errorf("%s: %+v, %v; want %s", tc.file, a, err, tc.want)
		}
	}
}

func TestCreateArgs(t *testing.T) {
	loc := time.FixedZone("X", 3600)
	start := time.Date(2026, 11, 25, 17, 0, 0, 0, time.UTC)
	got, err := CreateArgs(ReservationSpec{Name: "g1", Users: []string{"alice", "bob"}, Start: start,
		Duration: 26*time.Hour + 90*time.Second, NodeCount: 1, CoreCount: 4, Partition: "batch",
		Flags: []string{"ignore_jobs"}}, loc)
	want := []string{"create", "reservation", "reservationname=g1", "users=alice,bob",
		"starttime=2026-11-25T18:00:00", "duration=1-02:01:30", "nodecnt=1", "corecnt=4",
		"partition=batch", "flags=ignore_jobs"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("CreateArgs = %q, %v\nwant %q", got, err, want)
	}
	got, err = CreateArgs(ReservationSpec{Name: "g2", Users: []string{"u"}, Start: start, Duration: time.Minute, Nodes: "n[1-2]"}, time.UTC)
	if err != nil || !slices.Contains(got, "nodes=n[1-2]") || slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "nodecnt") }) {
		t.Errorf("by nodes: %q, %v", got, err)
	}
	for _, bad := range []ReservationSpec{
		{Users: []string{"u"}, Start: start, Duration: time.Minute, NodeCount: 1},
		{Name: "x", Start: start, Duration: time.Minute, NodeCount: 1},
		{Name: "x", Users: []string{"u"}, Duration: time.Minute, NodeCount: 1},
		{Name: "x", Users: []string{"u"}, Start: start, NodeCount: 1},
		{Name: "x", Users: []string{"u"}, Start: start, Duration: time.Minute},
		{Name: "x", Users: []string{"u"}, Start: start, Duration: time.Minute, NodeCount: 1, Nodes: "n1"},
	} {
		if _, err := CreateArgs(bad, time.UTC); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

func TestFixtureRunnerUnknownCommand(t *testing.T) {
	if _, err := fixtureClient().Reservations(context.Background()); err == nil {
		t.Fatal("no error without an answer")
	}
}
