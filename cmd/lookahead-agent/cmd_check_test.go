package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// serve installs a command that prints real captured outputs: for each
// argument string in cases, the file's bytes (stdout, or stderr when the
// file ends in .err) and the exit code.
func serve(t *testing.T, dir, name string, cases map[string]struct {
	file string
	exit int
}) {
	t.Helper()
	var b strings.Builder
	b.WriteString("#!/bin/sh\ncase \"$*\" in\n")
	for args, c := range cases {
		abs, err := filepath.Abs(c.file)
		if err != nil {
			t.Fatal(err)
		}
		redirect := ""
		if strings.HasSuffix(c.file, ".err") {
			redirect = " >&2"
		}
		b.WriteString("\"" + args + "\") cat '" + abs + "'" + redirect + "; exit " + string(rune('0'+c.exit)) + ";;\n")
	}
	b.WriteString("esac\necho \"unexpected arguments: $*\" >&2; exit 9\n")
	if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
}

type served = map[string]struct {
	file string
	exit int
}

const live = "../../agent/testdata/maui/live-agent/"

// check runs the Torque and Maui clients and reads their answers (the
// live site's, recorded), rather than only finding the binaries; a Maui
// client that cannot reach the server fails with advice.
func TestCheckRunsTheClients(t *testing.T) {
	bin := t.TempDir()
	serve(t, bin, "pbsnodes", served{"-x": {live + "01_pbsnodes.out", 0}})
	serve(t, bin, "qstat", served{"-f -x -t": {live + "02_qstat.out", 0}})
	serve(t, bin, "showres", served{"": {live + "15_showres.out", 0}, "-n": {live + "16_showres.out", 0}})
	serve(t, bin, "diagnose", served{"-r": {live + "17_diagnose.out", 0}})
	serve(t, bin, "showq", served{"-i": {"../../maui/testdata/sim1-iter011/showq_i.out", 0}})
	serve(t, bin, "setres", served{})
	serve(t, bin, "releaseres", served{})
	cfg := writeFile(t, "agent.yaml", "site: vm\nstate_dir: "+t.TempDir()+"\ntorque:\n  qstat: "+bin+"/qstat\n  pbsnodes: "+bin+"/pbsnodes\n"+
		"maui:\n  showres: "+bin+"/showres\n  setres: "+bin+"/setres\n  releaseres: "+bin+"/releaseres\n")
	byName := runChecks(t, cfg)
	for name, want := range map[string]string{
		"torque pbsnodes": "1 nodes, 1 usable", "torque qstat": "jobs", "maui showres": "1 reservations in force",
		"maui showq": "3 idle jobs", "maui setres": bin + "/setres",
	} {
		if r := byName[name]; !r.OK || !strings.Contains(r.Detail, want) {
			t.Errorf("%s: %+v, want ok with %q", name, r, want)
		}
	}
	serve(t, bin, "showres", served{"": {"../../maui/testdata/live-errors/showres_nohome.err", 1}})
	byName = runChecks(t, cfg)
	if r := byName["maui showres"]; r.OK || !strings.Contains(r.Detail, "cannot connect") || !strings.Contains(r.Fix, "maui.home") {
		t.Errorf("unreachable Maui: %+v", r)
	}
	if r := byName["forecast"]; r.OK {
		t.Errorf("forecast passed without Maui's reservations: %+v", r)
	}
}

func runChecks(t *testing.T, cfg string) map[string]checkResult {
	t.Helper()
	out, _ := execute(t, "check", "--config", cfg, "--skip", "logs,nats", "-o", "json")
	var results []checkResult
	if err := json.Unmarshal([]byte(out), &results); err != nil {
		t.Fatalf("check output: %v\n%s", err, out)
	}
	byName := map[string]checkResult{}
	for _, r := range results {
		byName[r.Name] = r
	}
	return byName
}
