package agent

import (
	"context"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/maui"
)

// taken is when testdata/fairshare/diagnose_f.out was captured, in the
// interval starting at 1795624080 (FSINTERVAL 120 s); the FS files are
// the two intervals before it.
const fsTaken = 1795624138

func liveFSPolicy(t *testing.T) sim.Policy {
	t.Helper()
	f, err := os.Open("testdata/fairshare/maui.cfg")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mc, err := sim.ReadMauiConfig(f)
	if err != nil || mc.Policy.Fairshare == nil {
		t.Fatalf("maui.cfg: %v, fairshare %v", err, mc.Policy.Fairshare)
	}
	return mc.Policy
}

func TestFairshareFilesLive(t *testing.T) {
	p := liveFSPolicy(t)
	st, err := FairshareFiles("testdata/fairshare")(context.Background(), fsTaken, p.Fairshare)
	if err != nil {
		t.Fatal(err)
	}
	a := st.Cred[sim.FSUser]["alice"]
	if st.Interval != 1795624080 || a == nil || a.Usage[0] != 0 || a.Usage[1] != 570.54 || a.Usage[2] != 175.96 ||
		st.Total.Usage[1] != 775.9 || st.Total.Usage[2] != 351.92 || st.Cred[sim.FSGroup]["bob"].Usage[1] != 104.1 {
		t.Errorf("state %+v, alice %+v", st, a)
	}
	// a fresh site (no file in the window) has no data: not an error to
	// note, the forecast starts from zero
	_, err = FairshareFiles("testdata/fairshare")(context.Background(), fsTaken+3600, p.Fairshare)
	if !errors.Is(err, ErrNoFairshareData) {
		t.Errorf("no file in the window: %v, want ErrNoFairshareData", err)
	}
}

// diagnose -f gives the same state, rounded: each interval's share of a
// total printed in tenths of processor-hours.
func TestStateFromDiagnose(t *testing.T) {
	b, err := os.ReadFile("testdata/fairshare/diagnose_f.out")
	if err != nil {
		t.Fatal(err)
	}
	d, err := maui.ParseDiagnoseFairshare(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	st := StateFromDiagnose(d, fsTaken)
	a := st.Cred[sim.FSUser]["alice"]
	if st.Interval != 1795624080 || math.Abs(a.Usage[1]-0.7353*720) > 1e-9 || math.Abs(a.Usage[0]-0.6289*360) > 1e-9 ||
		st.Total.Usage[1] != 720 || st.Cred[sim.FSUser]["carol"].Usage[2] != 0 {
		t.Errorf("state %+v alice %+v", st, a)
	}
}

func TestFirstFairshare(t *testing.T) {
	p := liveFSPolicy(t)
	none := func(context.Context, int64, *sim.Fairshare) (sim.FSState, error) {
		return sim.FSState{}, ErrNoFairshareData
	}
	broken := func(context.Context, int64, *sim.Fairshare) (sim.FSState, error) {
		return sim.FSState{}, errors.New("diagnose -f: exit 1")
	}
	diag := FairshareDiagnose(func(context.Context) ([]byte, error) { return os.ReadFile("testdata/fairshare/diagnose_f.out") })
	st, err := FirstFairshare(none, diag)(context.Background(), fsTaken, p.Fairshare)
	if err != nil || st.Total.Usage[1] != 720 {
		t.Errorf("fallback to diagnose -f: %v %+v", err, st.Total)
	}
	if _, err := FirstFairshare(none, none)(context.Background(), fsTaken, p.Fairshare); !errors.Is(err, ErrNoFairshareData) {
		t.Errorf("no source has data: %v", err)
	}
	if _, err := FirstFairshare(none, broken)(context.Background(), fsTaken, p.Fairshare); err == nil || errors.Is(err, ErrNoFairshareData) {
		t.Errorf("a broken source: %v, want an error that is not ErrNoFairshareData", err)
	}
}

// The built-in engine's forecast starts from the site's fairshare: alice,
// far over her target in the captured files, is forecast after carol,
// just under her floor, though she submitted first; a source that fails
// is said in the forecast.
func TestBuiltinEngineFairshare(t *testing.T) {
	p := liveFSPolicy(t)
	snap := forecast.Snapshot{Site: "vm", Nodes: []forecast.SnapshotNode{{Name: "vm", Procs: 8, State: []string{forecast.NodeFree}}},
		Jobs: []forecast.LocalJob{
			{ID: "1", User: "bob", Group: "bob", State: "R", Procs: 8, Walltime: 100, Submitted: fsTaken - 60, Started: fsTaken - 50,
				Hosts: []forecast.HostProcs{{Node: "vm", Procs: 8}}},
			{ID: "2", User: "alice", Group: "alice", State: "Q", Procs: 8, Walltime: 100, Submitted: fsTaken - 40},
			{ID: "3", User: "carol", Group: "carol", State: "Q", Procs: 8, Walltime: 100, Submitted: fsTaken - 10},
		}}
	order := func(e BuiltinEngine) (map[string]int64, []string) {
		f, preds, err := e.Forecast(context.Background(), snap, time.Unix(fsTaken, 0))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, p := range preds {
			got[p.Job] = p.Start
		}
		return got, f.Unmodelled
	}
	e := BuiltinEngine{Horizon: time.Hour, Policy: p, Pricing: forecast.DefaultPricing()}
	if got, _ := order(e); got["2"] >= got["3"] {
		t.Errorf("no usage read: starts %v, want alice's 2 first (queue time)", got)
	}
	e.Fairshare = FairshareFiles("testdata/fairshare")
	if got, notes := order(e); got["3"] >= got["2"] || len(notes) != 0 {
		t.Errorf("site usage read: starts %v (notes %q), want carol's 3 first", got, notes)
	}
	e.Fairshare = func(context.Context, int64, *sim.Fairshare) (sim.FSState, error) {
		return sim.FSState{}, errors.New("stats: permission denied")
	}
	if got, notes := order(e); got["2"] >= got["3"] || len(notes) != 1 || !strings.Contains(notes[0], "fairshare usage not read (stats: permission denied)") {
		t.Errorf("failing source: starts %v, notes %q", got, notes)
	}
}
