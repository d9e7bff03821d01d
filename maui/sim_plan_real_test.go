package maui

import (
	"context"
	"reflect"
	"testing"

	"lookahead/forecast"
)

// TestRealMauiPlanSameAsPlain: the planned run (the built-in simulator's
// stops, Maui running through them) forecasts exactly what the plain
// exact stepping forecasts, on sim1's snapshot and on the same with two
// jobs running on named hosts and a hold reservation (the oracle pins
// them and holds it as Maui does); and it is planned, not a fallback.
func TestRealMauiPlanSameAsPlain(t *testing.T) {
	bin := mauiBin(t)
	snap, now := sim1Snapshot(t)
	busy := snap
	busy.Jobs = append([]forecast.LocalJob(nil), snap.Jobs...)
	// j01 (4 tasks) and j03 (2) run, on named hosts.
	busy.Jobs[0].State, busy.Jobs[0].Started = forecast.JobRunning, now-120
	busy.Jobs[0].Hosts = []forecast.HostProcs{{Node: "n03", Procs: 2}, {Node: "n04", Procs: 2}}
	busy.Jobs[2].State, busy.Jobs[2].Started = forecast.JobRunning, now-300
	busy.Jobs[2].Hosts = []forecast.HostProcs{{Node: "n06", Procs: 2}}
	// The hold starts after every job Maui may start at +0 has ended: the
	// private Maui gets the holds only after its first iteration (a job
	// it starts at +0 may overlap one; the oracle, which has the hold from
	// the start, then disagrees and the run falls back, as seen with a
	// hold from +1800 s).
	busy.Reservations = []forecast.Reservation{{ID: "la.g1.0", Job: "g1", Start: now + 4*3600, End: now + 5*3600,
		Hosts: []forecast.HostProcs{{Node: "n07", Procs: 2}, {Node: "n08", Procs: 2}}}}
	for name, sn := range map[string]forecast.Snapshot{"sim1": snap, "sim1+running+hold": busy} {
		var got [2][]forecast.Prediction
		for i, p := range []StepPolicy{{Plain: true}, {}} {
			s := NewSimulator(SimulatorConfig{BinDir: bin, WorkDir: t.TempDir(), SiteConfig: "testdata/sim1/maui.cfg", Policy: p})
			preds, st, err := s.ForecastOrdered(context.Background(), sn, nil, now, now+6*3600)
			if err != nil {
				t.Fatalf("%s %+v: %v", name, p, err)
			}
			t.Logf("%s %+v: %+v", name, p, st)
			if i == 1 && (!st.Planned || st.Diverged != "" || st.Late != "" || st.OracleOff != "") {
				t.Errorf("%s: not planned: %+v", name, st)
			}
			got[i] = preds
		}
		if !reflect.DeepEqual(got[0], got[1]) {
			t.Errorf("%s: planned forecast differs from the plain one:\nplain   %+v\nplanned %+v", name, got[0], got[1])
		}
	}
}
