package main

import (
	"os"
	"strings"
	"testing"

	"lookahead/torque"
)

// check's torque output line on the live stack's captures
// (torque/testdata/torque-6.1.3/live-output): a --disable-spool pbs_mom
// without $spool_as_final_name is a warning with the fix while it still
// knows its copy command (it delivers from ~/.pbs_spool), a failure once
// a SIGHUP made it lose it, ok with $spool_as_final_name.
func TestCheckOutputOnLiveCaptures(t *testing.T) {
	parse := func(name string) *os.File {
		f, err := os.Open("../../torque/testdata/torque-6.1.3/live-output/" + name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	b := must[torque.MomBuild](t)(torque.ParseMomAbout(parse("pbs_mom_about.out")))
	cfg := must[torque.MomConfig](t)(torque.ParseMomConfig(parse("mom_config")))
	final := must[torque.MomConfig](t)(torque.ParseMomConfig(parse("mom_config_final_name")))
	fresh := must[torque.MomDiag](t)(torque.ParseMomDiag(parse("momctl_d3_fresh.out")))
	hup := must[torque.MomDiag](t)(torque.ParseMomDiag(parse("momctl_d3_after_hup.out")))
	if r := outputCheck(torque.Delivery(&b, &cfg, &fresh)); !r.OK || !r.Warn || !strings.Contains(r.Fix, "$spool_as_final_name true") {
		t.Errorf("fresh pbs_mom: %+v, want a warning with the fix", r)
	}
	if r := outputCheck(torque.Delivery(&b, &cfg, &hup)); r.OK || !strings.Contains(r.Fix, "restart pbs_mom") {
		t.Errorf("pbs_mom sent SIGHUP: %+v, want a failure", r)
	}
	if r := outputCheck(torque.Delivery(&b, &final, &hup)); !r.OK || r.Warn || r.Fix != "" {
		t.Errorf("$spool_as_final_name: %+v, want ok", r)
	}
}

// must returns a parser's value, failing the test on its error.
func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}
