package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lookahead/forecast"
	"lookahead/internal/cli"
)

func writeJSON(t *testing.T, dir, name string, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Issue 23.2: a slot ending 26 h past the horizon got a job placed there,
// one before generated a job nine days in the past. Slots are clipped to
// the forecast's window (or dropped), with a warning.
func TestPlanClipsSlotsToTheForecastWindow(t *testing.T) {
	const g, h = 1763780000, 1763780000 + 3600
	dir := t.TempDir()
	node := []forecast.Node{{Name: "n1", Procs: 8, Speed: 1}}
	for name, c := range map[string]struct {
		slot forecast.Slot
		warn string
	}{
		"ends 26 h past the horizon": {forecast.Slot{Node: "n1", Procs: 8, Start: g, End: h + 26*3600, Price: 1}, "1 slots clipped"},
		"nine days before generated": {forecast.Slot{Node: "n1", Procs: 8, Start: g - 9*86400, End: g - 8*86400, Price: 1}, "1 wholly outside it dropped"},
	} {
		fc := forecast.Forecast{Version: 1, Site: "alpha", Generated: g, Horizon: h, Nodes: node, Slots: []forecast.Slot{c.slot}}
		jobs := []forecast.JobRequest{{ID: "g1", Procs: 8, Walltime: 7200, MaxPrice: 2}}
		var out, warn bytes.Buffer
		o := planOptions{forecasts: []string{writeJSON(t, dir, "f.json", fc)}, jobs: writeJSON(t, dir, "q.json", jobs), output: cli.FormatJSON, warn: &warn}
		if err := runPlan(context.Background(), o, nil, &out); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var allocs []forecast.Allocation
		if err := json.Unmarshal(out.Bytes(), &allocs); err != nil || len(allocs) != 1 {
			t.Fatalf("%s: %v %s", name, err, out.String())
		}
		if allocs[0].Placed() {
			t.Errorf("%s: g1 placed at [%d, %d) outside the window [%d, %d]", name, allocs[0].Start, allocs[0].End, g, h)
		}
		if !strings.Contains(warn.String(), c.warn) {
			t.Errorf("%s: warning %q, want %q", name, warn.String(), c.warn)
		}
	}
}

// Issue 23.4: the planner's own forecast check dropped the file name
// ("plan: forecast 0 (site ...)").
func TestPlanErrorsNameTheForecastFile(t *testing.T) {
	dir := t.TempDir()
	fc := forecast.Forecast{Version: 1, Site: "alpha", Generated: 10, Horizon: 100, Nodes: []forecast.Node{{Name: "n1", Procs: 8, Speed: 1}}}
	a, b := writeJSON(t, dir, "a.json", fc), writeJSON(t, dir, "b.json", fc)
	q := writeJSON(t, dir, "q.json", []forecast.JobRequest{{ID: "g1", Procs: 1, Walltime: 60}})
	err := runPlan(context.Background(), planOptions{forecasts: []string{a, b}, jobs: q, output: cli.FormatJSON}, nil, &bytes.Buffer{})
	if cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), b) || !strings.Contains(err.Error(), a) {
		t.Fatalf("two forecasts of one site: %v (exit %d), want both files named", err, cli.ExitCode(err))
	}
}
