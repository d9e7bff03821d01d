package agent

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lookahead/forecast"
	"lookahead/wire"
)

// takenReserver re-creates a job's reservation bound to la.acct3, as Maui
// does when the account the job's parts were told is named by a
// reservation the agent does not know (a ledger lost): the binding
// cannot be kept.
type takenReserver struct{}

func (takenReserver) Reserve(_ context.Context, spec ReserveSpec) (Reserved, error) {
	id := "la." + spec.Job + ".0"
	return Reserved{Reservations: []wire.Reservation{{ID: id, Job: spec.Job, Start: spec.Start, End: spec.End,
		Nodes: []wire.NodeProcs{{Node: "vm", Procs: 4}}, Submit: "-A la.acct3 -W x=FLAGS:ADVRES:" + id + " -N " + id}}}, nil
}

func (takenReserver) Release(context.Context, string) (Released, error) { return Released{}, nil }

func (takenReserver) List(context.Context) ([]wire.Reservation, error) { return nil, nil }

// Issue 35 (left): a repair that cannot keep the binding account tells the
// broker, with the reservation as it is now (the submit options that get
// in) and why, so the job's status stops giving the old options. Before,
// only the site's audit said so.
func TestRepairThatRebindsTellsTheBroker(t *testing.T) {
	nc, sub := eventsOf(t, "r1")
	a, err := New(Config{Site: "vm", HoldState: filepath.Join(t.TempDir(), "grid-holds.json")},
		Deps{Conn: nc, Snapshotter: TorqueSnapshotter{}, Engine: BuiltinEngine{}, Reserver: takenReserver{}, Now: func() time.Time { return time.Unix(5000, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	start := int64(6000)
	old := wire.Reservation{ID: "la.r1.0", Job: "r1", Site: "vm", Start: start, End: start + 600,
		Nodes: []wire.NodeProcs{{Node: "vm", Procs: 4}}, Submit: "-A la.acct0 -W x=FLAGS:ADVRES:la.r1.0 -N la.r1.0"}
	entry := heldEntry{Spec: ReserveSpec{Job: "r1", Start: start, End: start + 600, Bind: "la.acct0"}, Reservations: []wire.Reservation{old}}
	snap := forecast.Snapshot{Site: "vm", Nodes: []forecast.SnapshotNode{{Name: "vm", Procs: 4, State: []string{forecast.NodeFree}}}}
	a.repairHeld(context.Background(), heldCheck{Job: "r1", Why: HeldMissing, Detail: "not listed", Entry: entry}, snap, 5000)
	ev := nextEvent(t, sub)
	if ev.State != "rebound" || ev.Job != "r1" || ev.Site != "vm" || !strings.Contains(ev.Message, "parts submitted with -A la.acct0 no longer get in") {
		t.Fatalf("event %+v, want r1 rebound with why", ev)
	}
	if len(ev.Reservations) != 1 || !strings.HasPrefix(ev.Reservations[0].Submit, "-A la.acct3 ") || ev.Reservations[0].Site != "vm" {
		t.Errorf("the event's reservations %+v, want la.r1.0 with -A la.acct3", ev.Reservations)
	}
}
