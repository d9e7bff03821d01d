package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"lookahead/internal/cli"
	"lookahead/internal/config"
)

// TestStrictConfigInEveryCommand: a duration without a unit (the agent
// hot-looped on `refresh: 60`) and a misspelt key are errors naming the
// key and the file line, in `check`, in `config` and at start (`run`),
// with exit code 2.
func TestStrictConfigInEveryCommand(t *testing.T) {
	file := writeFile(t, "agent.yaml", "site: alpha\nintervals:\n  refresh: 60\nnats: {ulr: nats://elsewhere:4222}\n")
	if _, err := execute(t, "config", "--config", writeFile(t, "a.yaml", "site: a\nlog_level: verbose\n")); err == nil || !strings.Contains(err.Error(), "log_level") {
		t.Errorf("log_level verbose: %v", err)
	}
	for _, cmd := range []string{"check", "config", "run", "forecast"} {
		_, err := execute(t, cmd, "--once", "--config", file)
		if cmd != "forecast" {
			_, err = execute(t, cmd, "--config", file)
		}
		if err == nil {
			t.Fatalf("%s: accepted", cmd)
		}
		for _, want := range []string{file + ":3: intervals.refresh: 60 has no unit", file + ":4: nats.ulr: unknown key; did you mean nats.url?"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error lacks %q:\n%v", cmd, want, err)
			}
		}
		if code := cli.ExitCode(err); code != cli.ExitUsage {
			t.Errorf("%s: exit code %d, want %d", cmd, code, cli.ExitUsage)
		}
	}
}

func TestUnitlessDurationsFromEnvAndFlags(t *testing.T) {
	file := writeFile(t, "agent.yaml", "site: alpha\n")
	t.Setenv("LOOKAHEAD_INTERVALS_REFRESH", "60")
	_, err := execute(t, "config", "--config", file)
	if err == nil || !strings.Contains(err.Error(), "LOOKAHEAD_INTERVALS_REFRESH=60: intervals.refresh: 60 has no unit") {
		t.Fatalf("env: %v", err)
	}
	t.Setenv("LOOKAHEAD_INTERVALS_REFRESH", "1ns")
	_, err = execute(t, "config", "--config", file)
	if err == nil || !strings.Contains(err.Error(), "LOOKAHEAD_INTERVALS_REFRESH: intervals.refresh: 1ns is below the least allowed, 1s") {
		t.Fatalf("1ns refresh: %v", err)
	}
	t.Setenv("LOOKAHEAD_INTERVALS_REFRESH", "")
	_, err = execute(t, "forecast", "--once", "--config", file, "--horizon", "48")
	if err == nil || !strings.Contains(err.Error(), "--horizon 48: horizon: 48 has no unit") {
		t.Fatalf("flag: %v", err)
	}
}

// TestConfigCommand prints the effective config with the file's key
// names, values from the file, the environment and flags.
func TestConfigCommand(t *testing.T) {
	file := writeFile(t, "agent.yaml", "site: alpha\nintervals: {refresh: 90s}\ntorque:\n  speeds: {NodeA: 1.5}\n")
	t.Setenv("LOOKAHEAD_NATS_URL", "nats://env:4222")
	root := newRootCommand()
	var stdout, stderr bytes.Buffer
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	root.SetArgs([]string{"config", "--config", file, "--site", "beta"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	iv, _ := m["intervals"].(map[string]any)
	nats, _ := m["nats"].(map[string]any)
	torque, _ := m["torque"].(map[string]any)
	speeds, _ := torque["speeds"].(map[string]any)
	if m["site"] != "beta" || iv["refresh"] != "1m30s" || m["horizon"] != "24h" || nats["url"] != "nats://env:4222" || speeds["NodeA"] != 1.5 {
		t.Fatalf("config output:\n%s", out)
	}
	if _, leaked := nats["password"]; leaked {
		t.Fatal("password printed")
	}
}

// TestPackagedConfigDocumentsEveryKey: /etc/lookahead/agent.yaml shows
// every key (set or as a commented-out example), and the examples are
// valid config too.
func TestPackagedConfigDocumentsEveryKey(t *testing.T) {
	if err := config.CheckDocumented(config.SchemaOf(Config{}), "../../packaging/config/agent.yaml"); err != nil {
		t.Fatal(err)
	}
}

// TestMetricsListenOff: "off" turns the agent's metrics listener off, as it
// does the broker's (one rule for every listen address), and a port-less
// address is refused naming the key.
func TestMetricsListenOff(t *testing.T) {
	c, _, err := readConfig(writeFile(t, "a.yaml", "site: alpha\nmetrics: {listen: \"off\"}\n"), true, nil, true)
	if err != nil {
		t.Fatalf("metrics.listen off: %v", err)
	}
	if c.Metrics.Listen != "" {
		t.Errorf("metrics.listen off loaded as %q, want off (\"\")", c.Metrics.Listen)
	}
	_, _, err = readConfig(writeFile(t, "b.yaml", "site: alpha\nmetrics: {listen: \"9464\"}\n"), true, nil, true)
	if err == nil || !strings.Contains(err.Error(), "metrics.listen") {
		t.Errorf("metrics.listen 9464: %v, want an error naming metrics.listen", err)
	}
}

// Issue 22.9: the quickstart's relative state_dir broke `check` with
// engine: maui (Maui's simulation runs in its own directory); paths are
// made absolute at load, from the directory the agent starts in.
func TestRelativePathsAreMadeAbsolute(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	file := writeFile(t, "agent.yaml", "site: alpha\nstate_dir: ./alpha-state\nmaui: {home: mauihome}\n")
	c, err := loadConfig(file, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.StateDir != filepath.Join(dir, "alpha-state") || c.Maui.Home != filepath.Join(dir, "mauihome") {
		t.Fatalf("state_dir %q, maui.home %q: want them under %s", c.StateDir, c.Maui.Home, dir)
	}
	if !filepath.IsAbs(c.gridState()) {
		t.Fatalf("grid state %q", c.gridState())
	}
}

// TestSiteRequiredNamesTheFileRead: without a site, the error says where
// to set it — in the file --config named, not the packaged default path.
func TestSiteRequiredNamesTheFileRead(t *testing.T) {
	for _, body := range []string{"", "log_level: info\n"} {
		file := writeFile(t, "mine.yaml", body)
		_, err := execute(t, "config", "--config", file)
		if err == nil || !strings.Contains(err.Error(), "site: required; set site: in "+file+",") {
			t.Errorf("%q: %v, want the error to name %s", body, err, file)
		}
		if code := cli.ExitCode(err); code != cli.ExitUsage {
			t.Errorf("%q: exit code %d, want %d", body, code, cli.ExitUsage)
		}
	}
}
