package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
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
	if err := runForecast(context.Background(), o, &out, io.Discard); err != nil {
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
	err := runForecast(context.Background(), o, &bytes.Buffer{}, io.Discard)
	if err == nil || cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), "multiplier") {
		t.Fatalf("err %v (exit %d), want a usage error about the multiplier", err, cli.ExitCode(err))
	}
	os.WriteFile(p, []byte("base: 1\nbogus: 3\n"), 0o644)
	if err := runForecast(context.Background(), o, &bytes.Buffer{}, io.Discard); err == nil || cli.ExitCode(err) != cli.ExitUsage {
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

// A malformed line is left out and said, and the run carries on with the
// good records; a trace with no good record is a usage error naming the
// lines.
func TestSimulateBadTrace(t *testing.T) {
	good, bad := "1 0 5 10 4 -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1\n", "2 5 5 ten 4 -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1\n"
	p := filepath.Join(t.TempDir(), "bad.swf")
	os.WriteFile(p, []byte("; MaxProcs: 8\n"+good+bad), 0o644)
	o := simulateOptions{trace: p, policy: "easy", output: cli.FormatJSON, progress: "never"}
	var out, errOut bytes.Buffer
	if err := runSimulate(context.Background(), o, &out, &errOut); err != nil {
		t.Fatalf("a trace with one malformed line: %v", err)
	}
	for _, want := range []string{p, "left out 1 of 2 records (1 malformed lines", "line 3: "} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr %q\nwant %q", errOut.String(), want)
		}
	}
	var rep struct{ Metrics struct{ Jobs int } }
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.Metrics.Jobs != 1 {
		t.Errorf("report %s (%v): want the good job simulated", out.String(), err)
	}
	os.WriteFile(p, []byte("; MaxProcs: 8\n"+bad), 0o644)
	err := runSimulate(context.Background(), o, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "no usable job record") || !strings.Contains(err.Error(), "line 2") || cli.ExitCode(err) != cli.ExitUsage {
		t.Fatalf("err %v, want a usage error: no usable job record, naming line 2", err)
	}
}

// Issue 23.3: the CLI started from a zero pricing, so a file without
// default: (the agent's quickstart pricing) was refused, rules: [{}] was
// blamed on default, and base 1e308 printed +Inf prices.
func TestForecastPricingStartsFromTheDefaults(t *testing.T) {
	p := filepath.Join(t.TempDir(), "p.yaml")
	run := func(body string) (forecast.Forecast, error) {
		t.Helper()
		os.WriteFile(p, []byte(body), 0o644)
		var out bytes.Buffer
		o := forecastOptions{snapshot: "../../examples/snapshot/snapshot.json", pricing: p, horizon: 48 * time.Hour, policy: "easy", output: cli.FormatJSON}
		err := runForecast(context.Background(), o, &out, io.Discard)
		var f forecast.Forecast
		if err == nil {
			json.Unmarshal(out.Bytes(), &f)
		}
		return f, err
	}
	f, err := run("base: 1.5\n")
	if err != nil {
		t.Fatalf("base only: %v", err)
	}
	prices := map[float64]bool{}
	for _, s := range f.Slots {
		prices[s.Price] = true
	}
	if !prices[1.5] || !prices[3] {
		t.Errorf("base 1.5 with the default displacement (2x): prices %v, want 1.5 and 3 among them", prices)
	}
	for body, want := range map[string]string{
		"base: 1\nrules: [{}]\n":                    "rules[0]",
		"base: 1e308\n":                             "pricing base",
		"base: 1e8\ndefault: {multiplier: 1e300}\n": "default: ",
		"base: 1\n  bad: [\n":                       "line",
	} {
		_, err := run(body)
		if err == nil || cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v (exit %d), want a usage error naming %q", body, err, cli.ExitCode(err), want)
		}
	}
}
