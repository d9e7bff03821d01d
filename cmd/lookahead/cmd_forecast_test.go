package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lookahead/forecast"
	"lookahead/internal/cli"
)

func TestForecastExample(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	o := forecastOptions{snapshot: "../../examples/snapshot/snapshot.json", pricing: "../../examples/snapshot/pricing.yaml",
		horizon: 12 * time.Hour, policy: "easy", output: cli.FormatJSON, predictions: filepath.Join(dir, "pred.json")}
	if err := runForecast(context.Background(), o, &out); err != nil {
		t.Fatal(err)
	}
	f, err := forecast.DecodeForecast(&out)
	if err != nil {
		t.Fatalf("output is not a valid v1 forecast: %v", err)
	}
	for _, s := range f.Slots {
		if s.Node == "n04" {
			t.Errorf("down node n04 has a slot %+v", s)
		}
		if s.Price != 1 && s.Price != 2 && s.Price != 3 {
			t.Errorf("slot %+v: prices must be base 1, queue low 2x or batch 3x (urgent is never offered)", s)
		}
	}
	b, err := os.ReadFile(o.predictions)
	if err != nil {
		t.Fatal(err)
	}
	var preds []forecast.Prediction
	if err := json.Unmarshal(b, &preds); err != nil {
		t.Fatal(err)
	}
	// 104 (urgent, priority 1000) is first in the queue; it needs 16
	// processors, free once 102 ends at 1763783000. Nothing may backfill
	// in a way that delays it.
	for _, p := range preds {
		if p.Job == "104.alpha" && p.Start != 1763783000 {
			t.Errorf("104.alpha predicted at %d, want 1763783000", p.Start)
		}
		if p.Job == "106.alpha" {
			t.Errorf("held job 106.alpha must not be predicted to run")
		}
	}
}

func TestForecastBadPricing(t *testing.T) {
	p := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(p, []byte("base: 1\ndefault: {multiplier: 0.5}\n"), 0o644)
	o := forecastOptions{snapshot: "../../examples/snapshot/snapshot.json", pricing: p, horizon: time.Hour, policy: "easy", output: cli.FormatJSON}
	err := runForecast(context.Background(), o, &bytes.Buffer{})
	if err == nil || cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), "multiplier") {
		t.Fatalf("err %v (exit %d), want a usage error about the multiplier", err, cli.ExitCode(err))
	}
	os.WriteFile(p, []byte("base: 1\nbogus: 3\n"), 0o644)
	if err := runForecast(context.Background(), o, &bytes.Buffer{}); err == nil || cli.ExitCode(err) != cli.ExitUsage {
		t.Fatalf("unknown key: err %v, want a usage error", err)
	}
}

func TestSimulateSlice(t *testing.T) {
	var out bytes.Buffer
	sched := filepath.Join(t.TempDir(), "s.jsonl")
	o := simulateOptions{trace: "../../forecast/swf/testdata/KTH-SP2-1996-2.1-cln.head800.swf", policy: "conservative",
		output: cli.FormatJSON, progress: "never", schedule: sched}
	if err := runSimulate(context.Background(), o, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var rep simulateReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Procs != 100 || rep.Metrics.Jobs+rep.Metrics.Rejected != 800 || rep.Metrics.Utilization <= 0 {
		t.Errorf("report %+v: want 100 procs, 800 jobs", rep)
	}
	b, _ := os.ReadFile(sched)
	if n := strings.Count(string(b), "\n"); n != rep.Metrics.Jobs {
		t.Errorf("schedule has %d lines, want %d", n, rep.Metrics.Jobs)
	}
}

func TestSimulateBadTrace(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.swf")
	os.WriteFile(p, []byte("; MaxProcs: 8\n1 0 5 10 4 -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1\n2 5 5 ten 4 -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1\n"), 0o644)
	o := simulateOptions{trace: p, policy: "easy", output: cli.FormatTable, progress: "never"}
	err := runSimulate(context.Background(), o, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "line 3") || cli.ExitCode(err) != cli.ExitUsage {
		t.Fatalf("err %v, want a usage error naming line 3", err)
	}
}
