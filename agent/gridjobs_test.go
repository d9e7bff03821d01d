package agent

import (
	"os"
	"testing"

	"lookahead/forecast"
	"lookahead/maui"
	"lookahead/torque"
	"lookahead/wire"
)

func qstatSnapshot(t *testing.T, file string) forecast.Snapshot {
	t.Helper()
	return qstatSnapshotAt(t, "testdata/torque-6.1.3/"+file)
}

// qstatSnapshotAt is site vm's snapshot of the jobs in the captured
// qstat -f -x output at path.
func qstatSnapshotAt(t *testing.T, path string) forecast.Snapshot {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	jobs, err := torque.ParseQstatXML(f)
	if err != nil {
		t.Fatal(err)
	}
	return forecast.Snapshot{Site: "vm", Jobs: jobs}
}

// On the captured Torque 6.1.3 output, job 5.vm runs bound to Maui
// reservation grid1.0 (qsub -W x=FLAGS:ADVRES:grid1.0) and later completes:
// the grid job of that reservation is reported started, then finished,
// each once. The capture's reservation was named by hand, so the namer's
// prefix is "g" and the grid job "rid1".
func TestGridJobEventsFromCapturedQstat(t *testing.T) {
	namer := MauiReserver{Config: maui.ClientConfig{Prefix: "g"}}
	var g gridTracker
	steps := []struct {
		file string
		want []string
	}{
		{"15_qstat_f_x_all.out", []string{"rid1 started"}},
		{"15_qstat_f_x_all.out", nil},
		{"27_qstat_f_x_final.out", []string{"rid1 finished"}},
		{"27_qstat_f_x_final.out", nil},
	}
	for i, st := range steps {
		evs := g.observe(qstatSnapshot(t, st.file), namer, nil, int64(100+i))
		var got []string
		for _, ev := range evs {
			if ev.Type != wire.TypeJobEvent || ev.Time != int64(100+i) {
				t.Fatalf("step %d: event %+v", i, ev)
			}
			got = append(got, ev.Job+" "+ev.State)
		}
		if len(got) != len(st.want) || (len(got) > 0 && got[0] != st.want[0]) {
			t.Fatalf("step %d (%s): events %v, want %v", i, st.file, got, st.want)
		}
	}
}

// Reservations that are not lookahead's name no grid job.
func TestGridJobEventsIgnoreForeignReservations(t *testing.T) {
	namer := MauiReserver{Config: maui.ClientConfig{}} // prefix "la."
	var g gridTracker
	if evs := g.observe(qstatSnapshot(t, "15_qstat_f_x_all.out"), namer, nil, 1); len(evs) != 0 {
		t.Fatalf("events %+v for a reservation lookahead did not make", evs)
	}
}

// A part this agent dispatched (la.<job>.<part>, bound to its reservation)
// is reported by the part follower, with its real times and exit status;
// the grid job tracker reports it only on a site that does not dispatch
// (seen live: both reported "started", the broker logged the part twice).
func TestGridJobEventsLeaveDispatchedPartsToTheFollower(t *testing.T) {
	snap := qstatSnapshotAt(t, "testdata/dispatch/19_qstat_f_x_running_in_reservation.out")
	namer := MauiReserver{}
	for _, c := range []struct {
		name string
		deps Deps
		want int
	}{
		{"dispatching site", Deps{Executor: torque.NewBatch(nil, torque.BatchConfig{})}, 0},
		{"site without dispatch", Deps{}, 2},
	} {
		a := &Agent{deps: c.deps}
		var g gridTracker
		if evs := g.observe(snap, namer, a.dispatchedPart, 1); len(evs) != c.want {
			t.Errorf("%s: events %+v, want %d", c.name, evs, c.want)
		}
	}
}
