package sim

import (
	"strings"
	"testing"
)

// NODECFG SPEED changes nothing in Maui 3.3.1 unless USEMACHINESPEED is
// TRUE (MUNLGetMinAVal answers 1.0), so it is read without a note; the
// parameter that would make it count is listed.
func TestNodeSpeedNotes(t *testing.T) {
	mc := readCfg(t, "NODECFG[n1] SPEED=2.0\nNODECFG[n2] SPEED=0.5\n")
	if len(mc.Unmodelled) != 0 {
		t.Errorf("Unmodelled %q, want none (SPEED alone has no effect)", mc.Unmodelled)
	}
	mc = readCfg(t, "USEMACHINESPEED TRUE\nNODECFG[n1] SPEED=2.0\n")
	if len(mc.Unmodelled) != 1 || !strings.Contains(mc.Unmodelled[0], "USEMACHINESPEED TRUE: node speed is not modelled") {
		t.Errorf("Unmodelled %q, want the USEMACHINESPEED note", mc.Unmodelled)
	}
	mc = readCfg(t, "USEMACHINESPEED FALSE\n")
	if len(mc.Unmodelled) != 0 {
		t.Errorf("Unmodelled %q, want none", mc.Unmodelled)
	}
}
