package agent

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lookahead/forecast"
	"lookahead/wire"
)

// aclReserver records what the repair asks of it: a Slurm-like reserver
// that can restore an ACL in place (or refuses, as slurmctld does while
// another job runs on the reservation's nodes).
type aclReserver struct {
	refuse bool
	calls  []string
}

func (r *aclReserver) Reserve(_ context.Context, spec ReserveSpec) (Reserved, error) {
	r.calls = append(r.calls, "reserve")
	return Reserved{Reservations: []wire.Reservation{{ID: "la." + spec.Job, Job: spec.Job, Start: spec.Start, End: spec.End,
		Nodes: spec.Nodes, Identity: spec.Identity}}}, nil
}

func (r *aclReserver) Release(context.Context, string) (Released, error) {
	r.calls = append(r.calls, "release") // on Slurm: cancels the parts queued in it
	return Released{}, nil
}

func (r *aclReserver) List(context.Context) ([]wire.Reservation, error) { return nil, nil }

func (r *aclReserver) RestoreACL(_ context.Context, spec ReserveSpec) (Reserved, error) {
	r.calls = append(r.calls, "restore")
	if r.refuse {
		return Reserved{Commands: [][]string{{"scontrol", "update"}}}, errors.New("nodes_busy")
	}
	return Reserved{Reservations: []wire.Reservation{{ID: "la." + spec.Job, Job: spec.Job, Start: spec.Start, End: spec.End,
		Nodes: spec.Nodes, Identity: spec.Identity}}}, nil
}

// A reservation whose ACL alone was widened by hand is narrowed in place
// when the reserver can: a release would cancel the part queued in it
// (on Slurm a reservation with queued jobs cannot be deleted), and the
// grid job failed ("8 was deleted or aborted before it ran"; seen live,
// users+=slbbother on a reservation with its part queued). When the
// in-place update is refused, the reservation is re-created as before.
func TestRepairRestoresAnAlteredACLInPlace(t *testing.T) {
	start := int64(6000)
	made := wire.Reservation{ID: "la.m4", Job: "m4", Site: "delta", Start: start, End: start + 600,
		Nodes: []wire.NodeProcs{{Node: "n2", Procs: 4}}, Identity: wire.Identity{User: "slbbgrid"}}
	widened, extra, moved := made, made, made
	widened.Identity.User = "slbbgrid,slbbother"
	extra.Extra = []string{"flag MAGNETIC"}
	moved.Identity.User, moved.End = "slbbgrid,slbbother", start+900
	entry := heldEntry{Spec: ReserveSpec{Job: "m4", Start: start, End: start + 600, Nodes: made.Nodes, Identity: made.Identity},
		Reservations: []wire.Reservation{made}}
	l := heldLedger{Version: heldLedgerVersion, Jobs: map[string]heldEntry{"m4": entry}}
	for _, tc := range []struct {
		name   string
		listed wire.Reservation
		refuse bool
		want   string
	}{
		{"users widened", widened, false, "restore"},
		{"a flag added", extra, false, "restore"},
		{"refused in place", widened, true, "restore release reserve"},
		{"times moved too", moved, false, "release reserve"},
	} {
		repair, _ := checkHeld(l, []wire.Reservation{tc.listed}, start-100, heldTol)
		if len(repair) != 1 || repair[0].Why != HeldAltered {
			t.Fatalf("%s: repairs %+v, want m4 altered", tc.name, repair)
		}
		res := &aclReserver{refuse: tc.refuse}
		a, err := New(Config{Site: "delta", HoldState: filepath.Join(t.TempDir(), "grid-holds.json")},
			Deps{Snapshotter: TorqueSnapshotter{}, Engine: BuiltinEngine{}, Reserver: res, Now: func() time.Time { return time.Unix(start-100, 0) }})
		if err != nil {
			t.Fatal(err)
		}
		snap := forecast.Snapshot{Site: "delta", Nodes: []forecast.SnapshotNode{{Name: "n2", Procs: 4, State: []string{forecast.NodeFree}}}}
		a.repairHeld(context.Background(), repair[0], snap, start-100)
		if got := strings.Join(res.calls, " "); got != tc.want {
			t.Errorf("%s: the repair ran %q, want %q", tc.name, got, tc.want)
		}
	}
}
