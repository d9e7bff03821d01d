package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"lookahead/internal/cli"
	"lookahead/replay"
)

// writeTrace writes an SWF trace of n good records, with the lines of
// bad put after the first one (after the header when n is 0), into dir.
func writeTrace(t *testing.T, dir, name string, n int, bad ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("; UnixStartTime: 1000000000\n")
	if n == 0 {
		b.WriteString(strings.Join(bad, "\n") + "\n")
	}
	for i := range n {
		b.WriteString(strings.Join([]string{strconv.Itoa(i + 1), strconv.Itoa(60 * i), "5", "600", "2", "-1", "-1", "2", "900", "-1", "1", "1", "1", "1", "1", "1", "-1", "-1"}, " ") + "\n")
		if i == 0 {
			for _, l := range bad {
				b.WriteString(l + "\n")
			}
		}
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// scenarioBeside writes a scenario file beside a trace of 20 good
// records, good.swf, in a new directory.
func scenarioBeside(t *testing.T, body string) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	writeTrace(t, dir, "good.swf", 20)
	path = filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, path
}

// TestReplayScenarioErrorsNameFileKeyAndWant: every bad scenario is one
// usage error naming the file, the key's path and what it wants.
func TestReplayScenarioErrorsNameFileKeyAndWant(t *testing.T) {
	dir := t.TempDir()
	writeTrace(t, dir, "good.swf", 20)
	if err := os.WriteFile(filepath.Join(dir, "notgz.swf.gz"), []byte("plain text"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeTrace(t, dir, "header.swf", 0)
	writeTrace(t, dir, "allbad.swf", 0, "1 2 3", "x y z")
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	const base = "sites: [{name: a, nodes: 8}]\nlocal: {trace: good.swf}\npolicies: [lookahead]\n"
	for _, c := range []struct{ name, body, want string }{
		{"empty file", "", "empty: nothing in it (see examples/replay/"},
		{"two documents", base + "---\nname: x\n", "more than one YAML document"},
		{"unknown top key", base + "colour: red\n", "line 4: colour: unknown key (known here: broker,"},
		{"unknown nested key", base + "grid: {redraw: {min: 1, max: 2, mux: 3}}\n", "grid.redraw.mux: unknown key (known here: max, min, share)"},
		{"unknown key in a list", strings.Replace(base, "nodes: 8", "nodes: 8, cpus: 2", 1), "sites[0].cpus: unknown key"},
		{"unknown key in a sweep", base + "sweep: {mix: [[{name: x, min: 1, max: 2, share: 1, foo: 2}]]}\n", "sweep.mix[0][0].foo: unknown key"},
		{"text for an integer", strings.Replace(base, "nodes: 8", "nodes: many", 1), `sites[0].nodes: line 1: got the text "many", want an integer`},
		{"mapping for a list", strings.Replace(base, "sites: [{name: a, nodes: 8}]", "sites: {name: a}", 1), "sites: line 1: got a mapping (key: value), want a list"},
		{"number for a list", base + "sweep: {multi_site_factor: 1.3}\n", `sweep.multi_site_factor: line 4: got the number "1.3", want a list (each a number)`},
		{"zero price", strings.Replace(base, "nodes: 8", "nodes: 8, price: 0", 1), "line 1: sites[0].price: 0: must be positive (leave the key out for its default, 1)"},
		{"zero speed", strings.Replace(base, "nodes: 8", "nodes: 8, speed: 0.0", 1), "sites[0].speed: 0: must be positive"},
		{"zero horizon", base + "forecast: {horizon: 0}\n", "line 4: forecast.horizon: 0: must be positive (leave the key out for its default, 48h)"},
		{"zero time scale", strings.Replace(base, "trace: good.swf", "trace: good.swf, time_scale: 0", 1), "local.time_scale: 0"},
		{"duration in words", base + "forecast: {horizon: 2 days}\n", `forecast.horizon: duration "2 days": want seconds`},
		{"missing trace", strings.Replace(base, "good.swf", "nowhere.swf", 1), `local.trace "nowhere.swf": open `},
		{"trace is a directory", strings.Replace(base, "good.swf", "adir", 1), `local.trace "adir": ` + filepath.Join(dir, "adir") + " is a directory"},
		{"trace not gzip", strings.Replace(base, "good.swf", "notgz.swf.gz", 1), "named .gz but not gzip data"},
		{"trace header only", strings.Replace(base, "good.swf", "header.swf", 1), `local.trace "header.swf": no job record`},
		{"trace all bad", strings.Replace(base, "good.swf", "allbad.swf", 1), `local.trace "allbad.swf": no usable job record: all 2 records left out; e.g. line 2: 3 fields, want 18`},
		{"trace in neither place", strings.Replace(base, "good.swf", "nowhere.swf", 1), `local.trace "nowhere.swf": not at ` + filepath.Join(dir, "nowhere.swf") + " either: open " + filepath.Join(dir, "adir", "nowhere.swf")},
	} {
		p := filepath.Join(dir, "s.yaml")
		if err := os.WriteFile(p, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		o := &replayOptions{seeds: 1, parallel: 1, progress: cli.ProgressNever}
		if c.name == "trace in neither place" {
			o.traceDir = filepath.Join(dir, "adir")
		}
		_, _, err := prepareScenario(&bytes.Buffer{}, o, p)
		if cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), "scenario "+p+": ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v (exit %d), want a usage error naming %s and %q", c.name, err, cli.ExitCode(err), p, c.want)
		}
	}
}

// TestReplayTraceWithBadLinesCarriesOn: a trace with malformed lines is
// replayed on its good records, and stderr says how many lines were left
// out and why.
func TestReplayTraceWithBadLinesCarriesOn(t *testing.T) {
	dir := t.TempDir()
	writeTrace(t, dir, "some-bad.swf", 20, "1001 1 2 3", "1002 x 5 600 2 -1 -1 2 900 -1 1 1 1 1 1 1 -1 -1")
	p := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(p, []byte("sites: [{name: a, nodes: 8}]\nlocal: {trace: some-bad.swf}\npolicies: [lookahead]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var errs bytes.Buffer
	_, in, err := prepareScenario(&errs, &replayOptions{seeds: 1, parallel: 1}, p)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(in.Traces["some-bad.swf"]); n != 20 {
		t.Errorf("%d jobs read, want the 20 good ones", n)
	}
	for _, want := range []string{"scenario " + p, "local.trace", "left out 2 of 22 records (2 malformed lines", "line 3: 4 fields, want 18", `line 4: field 2: "x" is not a number`} {
		if !strings.Contains(errs.String(), want) {
			t.Errorf("stderr %q: want %q", errs.String(), want)
		}
	}
	// the same, gzipped under a name without .gz, is read as gzip
	b, err := os.ReadFile(filepath.Join(dir, "some-bad.swf"))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write(b)
	w.Close()
	if err := os.WriteFile(filepath.Join(dir, "some-bad.swf"), gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, in, err = prepareScenario(&bytes.Buffer{}, &replayOptions{seeds: 1, parallel: 1}, p); err != nil || len(in.Traces["some-bad.swf"]) != 20 {
		t.Errorf("gzipped trace: %v, want its 20 good jobs", err)
	}
}

// TestReplayRefusesWorkloadsWithNothingToRun: a slice past the trace's
// end, or a horizon no grid job fits in, is an error naming the key,
// before any run.
func TestReplayRefusesWorkloadsWithNothingToRun(t *testing.T) {
	dir := t.TempDir()
	writeTrace(t, dir, "good.swf", 20)
	const base = "sites: [{name: a, nodes: 8}]\nlocal: {trace: good.swf, skip: 0}\ngrid: {share: 0.5}\npolicies: [lookahead]\n"
	for _, c := range []struct{ name, body, want string }{
		{"skip past the end", strings.Replace(base, "skip: 0", "skip: 25", 1), "no job to replay: local.skip 25"},
		// every job asks 900 s on 2 processors, a site holds 8
		{"horizon under every walltime", base + "forecast: {horizon: 10m}\n", "forecast.horizon 10m: not one of the"},
	} {
		p := filepath.Join(dir, "s.yaml")
		if err := os.WriteFile(p, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		o := &replayOptions{scenario: p, output: cli.FormatTable, seeds: 1, parallel: 1, progress: cli.ProgressNever}
		var out bytes.Buffer
		err := runReplay(t.Context(), &out, &bytes.Buffer{}, o)
		if cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), "scenario "+p+": "+c.want) || out.Len() > 0 {
			t.Errorf("%s: got %v (exit %d), output %q; want a usage error with %q and no output", c.name, err, cli.ExitCode(err), out.String(), c.want)
		}
	}
}

// TestReplayRecords: --records works without --study, is checked before
// the runs (a file where the directory goes is a usage error and nothing
// runs), and a run stopped by a signal says so and writes no records.
func TestReplayRecords(t *testing.T) {
	dir, p := scenarioBeside(t, "sites: [{name: a, nodes: 8}]\nlocal: {trace: good.swf}\ngrid: {share: 0.5}\npolicies: [lookahead]\n")
	run := func(ctx context.Context, records string) (string, string, error) {
		var out, errs bytes.Buffer
		o := &replayOptions{scenario: p, output: cli.FormatTable, seeds: 1, parallel: 1, progress: cli.ProgressNever, records: records}
		err := runReplay(ctx, &out, &errs, o)
		return out.String(), errs.String(), err
	}
	recs := filepath.Join(dir, "recs")
	if _, _, err := run(t.Context(), recs); err != nil {
		t.Fatal(err)
	}
	csvs, _ := filepath.Glob(filepath.Join(recs, "*.csv"))
	if len(csvs) != 1 || filepath.Base(csvs[0]) != "s-seed0--lookahead.csv" {
		t.Fatalf("records %v: want one file, the one run's, named by the scenario file (no name: in it)", csvs)
	}
	if b, err := os.ReadFile(csvs[0]); err != nil || !strings.HasPrefix(string(b), "id,grid,procs,submit,start,end,sites,credits\n") || strings.Count(string(b), "\n") != 21 {
		t.Errorf("records file: %v, %q: want the header and 20 jobs", err, b)
	}
	stop, cancel := context.WithCancel(t.Context())
	cancel()
	out, _, err := run(stop, p) // a file; checked before the runs, which the stopped context would fail
	if cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), "--records "+p+": ") || out != "" {
		t.Errorf("records to a file: %v (exit %d), output %q; want a usage error naming --records and no run", err, cli.ExitCode(err), out)
	}
	stopped := filepath.Join(dir, "stopped")
	out, errs, err := run(stop, stopped)
	if !errors.Is(err, context.Canceled) || !strings.Contains(errs, "interrupted") || out != "" {
		t.Errorf("stopped run: %v, stderr %q, output %q; want context.Canceled said on stderr, nothing printed", err, errs, out)
	}
	if csvs, _ := filepath.Glob(filepath.Join(stopped, "*")); len(csvs) != 0 {
		t.Errorf("stopped run wrote %v", csvs)
	}
}

// TestReplayPlotCheckedBeforeTheRuns: a --plot that cannot be written
// (a directory, a missing directory, with --study that draws nothing) is
// a usage error before any run; the table says whose earnings it lists
// and where its columns are defined.
func TestReplayPlotCheckedBeforeTheRuns(t *testing.T) {
	dir, p := scenarioBeside(t, "sites: [{name: a, nodes: 8}, {name: b, nodes: 4}]\nlocal: {trace: good.swf}\ngrid: {share: 0.5}\npolicies: [lookahead]\n")
	for _, c := range []struct {
		plot  string
		study bool
		want  string
	}{
		{dir, false, "is a directory"},
		{filepath.Join(dir, "nowhere", "p.svg"), false, "does not exist"},
		{filepath.Join(dir, "p.svg"), true, "not --study"},
	} {
		var out bytes.Buffer
		o := &replayOptions{scenario: p, output: cli.FormatTable, seeds: 1, parallel: 1, progress: cli.ProgressNever, plot: c.plot, study: c.study}
		// under a stopped context: checked before the runs, else the runs
		// would fail first
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		var err error
		if c.study {
			o.scenarios = []string{p}
			err = runStudy(ctx, &out, &bytes.Buffer{}, o)
		} else {
			err = runReplay(ctx, &out, &bytes.Buffer{}, o)
		}
		if cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), "--plot "+c.plot+": ") || !strings.Contains(err.Error(), c.want) || out.Len() > 0 {
			t.Errorf("--plot %s (study %v): %v (exit %d), output %q; want a usage error with %q before any run", c.plot, c.study, err, cli.ExitCode(err), out.String(), c.want)
		}
	}
	var out bytes.Buffer
	o := &replayOptions{scenario: p, output: cli.FormatTable, seeds: 1, parallel: 1, progress: cli.ProgressNever}
	if err := runReplay(t.Context(), &out, &bytes.Buffer{}, o); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"earned by site (s): a/b\n", "see docs/replay.md"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table %q: want %q", out.String(), want)
		}
	}
}

// TestReplayWarnsOfShortSlices: a slice asking more jobs than the trace
// has after its skip is said on stderr.
func TestReplayWarnsOfShortSlices(t *testing.T) {
	_, p := scenarioBeside(t, "sites: [{name: a, nodes: 8}]\nlocal: {trace: good.swf, skip: 5, jobs: 100}\npolicies: [lookahead]\n")
	var errs bytes.Buffer
	sc, in, err := prepareScenario(&errs, &replayOptions{seeds: 1, parallel: 1}, p)
	if err == nil {
		err = checkWorkload(&errs, p, []replay.Scenario{sc}, in)
	}
	if want := "local.jobs 100: trace good.swf has only 15 usable records after skip 5"; err != nil || !strings.Contains(errs.String(), want) {
		t.Errorf("%v, stderr %q: want %q", err, errs.String(), want)
	}
}
