package agent

import (
	"os"
	"strings"
	"testing"

	"lookahead/forecast"
	"lookahead/maui"
	"lookahead/torque"
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
// reservation grid1.0 (qsub -W x=FLAGS:ADVRES:grid1.0) under the name
// gridadvresW: it does not carry the grid job's part name, so it is not
// the part (a stray job of the reservation's user gets in the same way):
// it is reported foreign once while it runs, and the grid job is never
// reported started nor finished. The capture's reservation was named by
// hand, so the namer's prefix is "g" and the grid job "rid1".
func TestGridJobEventsFromCapturedQstat(t *testing.T) {
	namer := MauiReserver{Config: maui.ClientConfig{Prefix: "g"}}
	var g gridTracker
	steps := []struct {
		file    string
		foreign []string
	}{
		{"15_qstat_f_x_all.out", []string{"5.vm rid1 grid1.0"}},
		{"15_qstat_f_x_all.out", nil},
		{"27_qstat_f_x_final.out", nil},
		{"27_qstat_f_x_final.out", nil},
	}
	for i, st := range steps {
		evs, foreign := g.observe(qstatSnapshot(t, st.file), namer, nil, int64(100+i))
		if len(evs) != 0 {
			t.Fatalf("step %d (%s): events %+v: a job without the part name is no part", i, st.file, evs)
		}
		var got []string
		for _, f := range foreign {
			got = append(got, f.LocalID+" "+f.Job+" "+f.Reservation)
		}
		if strings.Join(got, ";") != strings.Join(st.foreign, ";") {
			t.Fatalf("step %d (%s): foreign %v, want %v", i, st.file, got, st.foreign)
		}
	}
}

// Reservations that are not lookahead's name no grid job.
func TestGridJobEventsIgnoreForeignReservations(t *testing.T) {
	namer := MauiReserver{Config: maui.ClientConfig{}} // prefix "la."
	var g gridTracker
	if evs, foreign := g.observe(qstatSnapshot(t, "15_qstat_f_x_all.out"), namer, nil, 1); len(evs)+len(foreign) != 0 {
		t.Fatalf("events %+v, foreign %+v for a reservation lookahead did not make", evs, foreign)
	}
}

// A part this agent dispatched (known by its local id) is reported by the
// part follower, with its real times and exit status; the grid job
// tracker reports the same job (named la.<job>.<part>) as the grid job's
// part only on a site that did not dispatch it (seen live: both reported
// "started", the broker logged the part twice). A job named like a part
// of a grid job whose parts the agent dispatched, but not submitted by
// the agent, is foreign.
func TestGridJobEventsLeaveDispatchedPartsToTheFollower(t *testing.T) {
	snap := qstatSnapshotAt(t, "testdata/dispatch/19_qstat_f_x_running_in_reservation.out")
	namer := MauiReserver{}
	for _, c := range []struct {
		name          string
		parts         *partTracker
		want, foreign int
	}{
		{"dispatching site", &partTracker{dispatched: map[string]string{"22.vm": "dispatch-a", "23.vm": "dispatch-b"}}, 0, 0},
		{"site without dispatch", nil, 2, 0},
		{"one part not the agent's", &partTracker{dispatched: map[string]string{"22.vm": "dispatch-a", "99.vm": "dispatch-b"}}, 0, 1},
	} {
		var g gridTracker
		var parts Dispatched
		if c.parts != nil {
			parts = c.parts
		}
		evs, foreign := g.observe(snap, namer, parts, 1)
		if len(evs) != c.want || len(foreign) != c.foreign {
			t.Errorf("%s: events %+v foreign %+v, want %d and %d", c.name, evs, foreign, c.want, c.foreign)
		}
	}
}
