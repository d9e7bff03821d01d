package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lookahead/forecast/sim"
	"lookahead/internal/cli"
)

const kthHead = "../../forecast/swf/testdata/KTH-SP2-1996-2.1-cln.head800.swf"

// --maui-config replays with the site's policy and says, once, what it
// cannot model.
func TestSimulateMauiConfig(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "maui.cfg")
	os.WriteFile(cfg, []byte("RESERVATIONDEPTH 4\nBACKFILLPOLICY BESTFIT\nXFACTORWEIGHT 10\nBYPASSWEIGHT 3\n"), 0o644)
	var out, errOut bytes.Buffer
	o := simulateOptions{trace: kthHead, nodes: 25, ppn: 4, mauiCfg: cfg, output: cli.FormatJSON, progress: "never"}
	if err := runSimulate(context.Background(), o, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	var rep simulateReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Policy != "maui.cfg "+cfg || len(rep.Unmodelled) != 1 || !strings.Contains(rep.Unmodelled[0], "BYPASSWEIGHT") {
		t.Errorf("report policy %q, unmodelled %q", rep.Policy, rep.Unmodelled)
	}
	if strings.Count(errOut.String(), "warning: not modelled: maui.cfg:4: BYPASSWEIGHT") != 1 {
		t.Errorf("stderr %q", errOut.String())
	}
	// the metrics are those of that policy
	tr, err := readSWF(kthHead, 0)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(cfg)
	defer f.Close()
	mc, err := sim.ReadMauiConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.RunWith(sim.UniformCluster(25, 4), tr.SimJobs(), mc.Policy, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Metrics != rep.Metrics {
		t.Errorf("metrics %+v, want %+v", rep.Metrics, res.Metrics)
	}
	easy, _ := sim.RunWith(sim.UniformCluster(25, 4), tr.SimJobs(), sim.EASY, sim.Options{})
	if easy.Metrics == rep.Metrics {
		t.Errorf("the maui.cfg policy changed nothing against easy")
	}
}

func TestSimulateMauiConfigErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "maui.cfg")
	os.WriteFile(bad, []byte("RESERVATIONDEPTH\nRESERVATIONPOLICY SOMETIMES\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--trace", kthHead, "--maui-config", bad}, "maui.cfg:1"},
		{[]string{"--trace", kthHead, "--maui-config", bad + ".missing"}, "--maui-config"},
		{[]string{"--trace", kthHead, "--maui-config", bad, "--policy", "easy"}, "exclude each other"},
	} {
		cmd := newSimulateCommand()
		cmd.SetArgs(c.args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		err := cmd.Execute()
		if err == nil || cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err %v (exit %d), want a usage error with %q", c.args, err, cli.ExitCode(err), c.want)
		}
	}
}

// --slurm-config replays with a slurm.conf's policy (the captured
// cluster's: backfill to depth 500) and says what it cannot model; it
// excludes --policy and --maui-config.
func TestSimulateSlurmConfig(t *testing.T) {
	cfg := "../../slurm/testdata/slurm.conf"
	var out, errOut bytes.Buffer
	o := simulateOptions{trace: kthHead, nodes: 25, ppn: 4, slurmCfg: cfg, output: cli.FormatJSON, progress: "never"}
	if err := runSimulate(context.Background(), o, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	var rep simulateReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Policy != "slurm.conf "+cfg || !strings.Contains(strings.Join(rep.Unmodelled, "\n"), "bf_interval=5") ||
		!strings.Contains(errOut.String(), "warning: not modelled: SchedulerParameters bf_window=1440") {
		t.Errorf("report policy %q, unmodelled %q, stderr %q", rep.Policy, rep.Unmodelled, errOut.String())
	}
	if _, code := run(t, "simulate", "--trace", kthHead, "--slurm-config", cfg, "--maui-config", cfg); code != cli.ExitUsage {
		t.Errorf("--slurm-config with --maui-config: exit %d", code)
	}
}
