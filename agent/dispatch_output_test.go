package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lookahead/torque"
)

// livePartAt is a completed job captured on the live stack (alice, -o/-e
// under /home/alice; testdata/README.md) with its paths moved to home, a
// temporary directory standing for alice's home.
func livePartAt(t *testing.T, name, home string) torque.BatchJob {
	t.Helper()
	jobs := capturedJobs(t, name)
	if len(jobs) != 1 || !jobs[0].Done() {
		t.Fatalf("%s: %+v", name, jobs)
	}
	j := jobs[0]
	j.Output = strings.Replace(j.Output, ":/home/alice/", ":"+home+"/", 1)
	j.Error = strings.Replace(j.Error, ":/home/alice/", ":"+home+"/", 1)
	return j
}

// placeFiles creates the files under home as Torque left them on the live
// stack (torque/testdata/torque-6.1.3/live-output/README.md).
func placeFiles(t *testing.T, home string, files ...string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(home, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func outputAgent(home string, copied bool) *Agent {
	return &Agent{cfg: Config{Dispatch: DispatchConfig{OutputCopied: copied}},
		deps: Deps{Users: func(name string) (LocalUser, error) { return LocalUser{Name: name, UID: 1001, Home: home}, nil }}}
}

// After a part ends, the agent reports where its output is: at its -o/-e
// paths when pbs_mom delivered it (39.vm, fresh pbs_mom), in
// ~/.pbs_spool when pbs_mom kept it there (40.vm, pbs_mom sent SIGHUP),
// with a note; the next dispatch then says output may stay there, until a
// part's output is delivered again.
func TestFinishedPartReportsWhereItsOutputIs(t *testing.T) {
	home := t.TempDir()
	a := outputAgent(home, true)
	if a.outputLocator() != nil {
		t.Fatal("a site without a Torque executor looks for output files")
	}
	a.deps.Executor = &torque.Batch{}
	if a.outputLocator() == nil {
		t.Fatal("a Torque site does not look where its parts' output is")
	}
	if err := os.Mkdir(filepath.Join(home, ".pbs_spool"), 0o755); err != nil { // the live stack's users have one
		t.Fatal(err)
	}
	kept := livePartAt(t, "live_output_kept.xml", home)
	placeFiles(t, home, ".pbs_spool/40.vm.OU", ".pbs_spool/40.vm.ER")
	a.parts = partTracker{dispatched: map[string]string{"40.vm": "d1"}}
	evs := a.parts.observe([]torque.BatchJob{kept}, 1795925900, a.locatePartOutput)
	if len(evs) != 1 || evs[0].State != "finished" || evs[0].Output != home+"/.pbs_spool/40.vm.OU" || evs[0].Error != home+"/.pbs_spool/40.vm.ER" ||
		!strings.Contains(evs[0].Message, "stdout not delivered to "+home+"/oG1.out: pbs_mom left it at "+home+"/.pbs_spool/40.vm.OU") {
		t.Fatalf("kept output: %+v", evs)
	}
	if note := a.outputNote(home, "41.vm"); !strings.Contains(note, "40.vm: stdout not delivered") || !strings.Contains(note, home+"/.pbs_spool/41.vm.OU") {
		t.Fatalf("next dispatch's note: %q", note)
	}

	delivered := livePartAt(t, "live_output_delivered.xml", home)
	placeFiles(t, home, "oF1.out", "oF1.err")
	a.parts.dispatched["39.vm"] = "d2"
	evs = a.parts.observe([]torque.BatchJob{delivered}, 1795925900, a.locatePartOutput)
	if len(evs) != 1 || evs[0].Output != home+"/oF1.out" || evs[0].Error != home+"/oF1.err" || evs[0].Message != "output found at the paths given" {
		t.Fatalf("delivered output: %+v", evs)
	}
	if note := a.outputNote(home, "42.vm"); note != "" {
		t.Fatalf("after a delivered part the note is %q, want none", note)
	}
}

// A part whose output is nowhere is reported as not found, naming where
// the agent looked; a user without ~/.pbs_spool is told at dispatch that
// the output will stay in the home directory (pbs_mom copies only from
// ~/.pbs_spool: 33.vm on the live stack).
func TestPartOutputNotFoundAndNoPbsSpool(t *testing.T) {
	home := t.TempDir()
	a := outputAgent(home, true)
	j := livePartAt(t, "live_output_kept.xml", home)
	a.parts = partTracker{dispatched: map[string]string{"40.vm": "d1"}}
	evs := a.parts.observe([]torque.BatchJob{j}, 1795925900, a.locatePartOutput)
	if len(evs) != 1 || evs[0].Output != "" || !strings.Contains(evs[0].Message, "stdout not found (looked at "+home+"/oG1.out, "+home+"/.pbs_spool/40.vm.OU and "+home+"/40.vm.OU)") {
		t.Fatalf("nowhere: %+v", evs)
	}
	if note := a.outputNote(home, "43.vm"); !strings.Contains(note, "stay in "+home+"/43.vm.OU") {
		t.Fatalf("no ~/.pbs_spool: note %q", note)
	}
	if note := outputAgent(home, false).outputNote(home, "43.vm"); note != "" {
		t.Fatalf("a pbs_mom that does not copy: note %q", note)
	}
}
