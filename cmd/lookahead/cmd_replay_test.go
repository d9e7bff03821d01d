package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lookahead/internal/cli"
	"lookahead/replay"
)

const tinyScenario = `name: tiny
seed: 1
sites:
  - {name: a, nodes: 16}
  - {name: b, nodes: 8, heterogeneity: 1.4}
local:
  trace: %s
  jobs: 60
  max_width: 16
grid: {share: 0.4, payment: {min: 1, max: 3}}
forecast: {period: 10m, horizon: 1d}
broker: {cycle: 60, commit_lead: 5m, multi_site_factor: 1.2}
policies: [lookahead, single-site-earliest]
`

func writeScenario(t *testing.T, body string) string {
	t.Helper()
	trace, err := filepath.Abs("../../replay/testdata/ctc-sp2-first5000.swf.gz")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(p, []byte(strings.Replace(body, "%s", trace, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReplayJSONAndPlot(t *testing.T) {
	var out, errs bytes.Buffer
	svg := filepath.Join(t.TempDir(), "p.svg")
	o := &replayOptions{scenario: writeScenario(t, tinyScenario), output: cli.FormatJSON, plot: svg, seeds: 1, parallel: 1, progress: cli.ProgressNever}
	if err := runReplay(context.Background(), &out, &errs, o); err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Results []struct {
			Policy  string
			Metrics struct{ Grid, Local struct{ Jobs int } }
		}
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("stdout is not the JSON report: %v", err)
	}
	if len(rep.Results) != 2 || rep.Results[0].Metrics.Local.Jobs == 0 {
		t.Fatalf("report %+v", rep)
	}
	b, err := os.ReadFile(svg)
	if err != nil || !bytes.HasPrefix(b, []byte("<svg")) {
		t.Fatalf("plot: %v %q", err, b[:min(len(b), 20)])
	}
}

func TestReplayRefusesBadScenarios(t *testing.T) {
	for name, body := range map[string]string{
		"unknown field":    tinyScenario + "colour: red\n",
		"unknown strategy": strings.Replace(tinyScenario, "single-site-earliest", "fastest", 1),
		"missing trace":    strings.Replace(tinyScenario, "trace: %s", "trace: nowhere.swf", 1),
	} {
		o := &replayOptions{scenario: writeScenario(t, body), output: cli.FormatTable, seeds: 1, parallel: 1, progress: cli.ProgressNever}
		err := runReplay(context.Background(), &bytes.Buffer{}, &bytes.Buffer{}, o)
		if cli.ExitCode(err) != cli.ExitUsage {
			t.Errorf("%s: got %v (exit %d), want a usage error", name, err, cli.ExitCode(err))
		}
	}
}

// TestReplaySeedsAndEarnings: --seeds runs the study once per seed and
// folds each point and strategy into mean [min–max]; what the sites' owners
// earned adds up to what the grid jobs paid.
func TestReplaySeedsAndEarnings(t *testing.T) {
	var out, errs bytes.Buffer
	o := &replayOptions{scenario: writeScenario(t, tinyScenario), output: cli.FormatJSON, seeds: 2, parallel: 1, progress: cli.ProgressNever}
	if err := runReplay(context.Background(), &out, &errs, o); err != nil {
		t.Fatal(err)
	}
	var rep seedReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("stdout is not the seeds report: %v", err)
	}
	if len(rep.Reports) != 2 || len(rep.Rows) != 2 || rep.Seeds[0] != 1 || rep.Seeds[1] != 2 {
		t.Fatalf("seeds %v, %d reports, %d rows", rep.Seeds, len(rep.Reports), len(rep.Rows))
	}
	for _, r := range rep.Reports {
		for _, res := range r.Results {
			var earned float64
			for _, e := range res.Metrics.SiteEarnings {
				earned += e
			}
			if res.Metrics.Credits == 0 || math.Abs(earned-res.Metrics.Credits) > 1e-6*res.Metrics.Credits {
				t.Fatalf("%s: owners earned %v, grid jobs paid %v", res.Policy, earned, res.Metrics.Credits)
			}
		}
	}
	for _, row := range rep.Rows {
		if row.Seeds != 2 || row.GridAWRT.Min > row.GridAWRT.Mean || row.GridAWRT.Mean > row.GridAWRT.Max || len(row.Earnings) != 2 {
			t.Fatalf("row %+v", row)
		}
	}
}

// The replay runs on the trace's clock (CTC's UnixStartTime) unless told
// otherwise; its sites follow no rule tied to the time of day, so the
// report is the same from 1970 (--start 1); a bad --start is a usage
// error naming the flag (0 too: an unset start is the trace's clock).
func TestReplayOnTheTracesClock(t *testing.T) {
	scenario := writeScenario(t, tinyScenario)
	run := func(start string) string {
		t.Helper()
		var out bytes.Buffer
		o := &replayOptions{scenario: scenario, output: cli.FormatJSON, start: start, seeds: 1, parallel: 1, progress: cli.ProgressNever}
		if err := runReplay(context.Background(), &out, &bytes.Buffer{}, o); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if own, epoch := run(""), run("1"); own != epoch {
		t.Errorf("the report moved with the clock:\n%s\n%s", own, epoch)
	}
	for _, bad := range []string{"noon", "0"} {
		o := &replayOptions{scenario: scenario, output: cli.FormatJSON, start: bad, seeds: 1, parallel: 1, progress: cli.ProgressNever}
		if err := runReplay(context.Background(), &bytes.Buffer{}, &bytes.Buffer{}, o); cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), "--start") {
			t.Errorf("--start %s: %v, want a usage error naming the flag", bad, err)
		}
	}
}

// --study runs each scenario under the seeds and reports every broker
// against the better simple one, with lookahead's classes; --records
// writes each run's job records.
func TestReplayStudy(t *testing.T) {
	body := strings.Replace(tinyScenario, "policies: [lookahead, single-site-earliest]",
		"policies: [single-site-earliest, greedy-multisite, lookahead, \"lookahead[order=fcfs]\"]", 1)
	dir := t.TempDir()
	var out, errs bytes.Buffer
	o := &replayOptions{scenarios: []string{writeScenario(t, body)}, output: cli.FormatJSON, seeds: 2, parallel: 2,
		progress: cli.ProgressNever, study: true, records: dir}
	if err := runStudy(context.Background(), &out, &errs, o); err != nil {
		t.Fatal(err)
	}
	var pts []replay.StudyPoint
	if err := json.Unmarshal(out.Bytes(), &pts); err != nil {
		t.Fatalf("stdout is not the study: %v\n%s", err, out.String())
	}
	if len(pts) != 1 || pts[0].Seeds != 2 || len(pts[0].Brokers) != 4 || pts[0].Best == "" || len(pts[0].Classes) == 0 {
		t.Fatalf("study %+v", pts)
	}
	for _, b := range pts[0].Brokers {
		if b.VsBest < 1 && b.Policy != "lookahead" && b.Policy != "lookahead[order=fcfs]" {
			t.Errorf("%s: %v × the best simple broker's AWRT, and it is one of them", b.Policy, b.VsBest)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.csv"))
	if len(files) != 8 {
		t.Fatalf("records: %d files, want 2 seeds × 4 policies: %v", len(files), files)
	}
	var table bytes.Buffer
	o.output = cli.FormatTable
	o.records = ""
	if err := runStudy(context.Background(), &table, &errs, o); err != nil || !strings.Contains(table.String(), "vs best simple") ||
		!strings.Contains(table.String(), "grid AWRT (s)") {
		t.Fatalf("%v\n%s", err, table.String())
	}
}
