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
	dir := "../../torque/testdata/torque-6.1.3/live-output/"
	open := func(name string) *os.File {
		f, err := os.Open(dir + name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	b, err := torque.ParseMomAbout(open("pbs_mom_about.out"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := torque.ParseMomConfig(open("mom_config"))
	if err != nil {
		t.Fatal(err)
	}
	final, err := torque.ParseMomConfig(open("mom_config_final_name"))
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := torque.ParseMomDiag(open("momctl_d3_fresh.out"))
	if err != nil {
		t.Fatal(err)
	}
	hup, err := torque.ParseMomDiag(open("momctl_d3_after_hup.out"))
	if err != nil {
		t.Fatal(err)
	}
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
