package torque

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func serverLogEvents(t *testing.T, dir string) []Event {
	t.Helper()
	var evs []Event
	for _, line := range readLines(t, filepath.Join("testdata", dir, "server_logs", "20261122")) {
		rec, err := ParseLogLine(line, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		if ev, ok := LogEvent(rec); ok {
			ev.Text = ""
			evs = append(evs, ev)
		}
	}
	return evs
}

func acctEvents(t *testing.T, dir string) []Event {
	t.Helper()
	var evs []Event
	for i, line := range readLines(t, filepath.Join("testdata", dir, "accounting", "20261122")) {
		rec, err := ParseAcctLine(line, time.UTC)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		evs = append(evs, AcctEvent(rec))
	}
	return evs
}

func kindsOf(evs []Event, job string) []EventKind {
	var out []EventKind
	for _, e := range evs {
		if e.Job == job && e.Kind != JobStateChanged {
			out = append(out, e.Kind)
		}
	}
	return out
}

// The server log and accounting of each version tell the same story about
// each job of the scenario; golden JSON keeps the full event lists.
func TestCapturedLogEvents(t *testing.T) {
	for _, v := range versions {
		t.Run(v.dir, func(t *testing.T) {
			slog, acct := serverLogEvents(t, v.dir), acctEvents(t, v.dir)
			// 0.vm: queued, run, ended with exit 0 — in both sources.
			for _, evs := range [][]Event{slog, acct} {
				k := kindsOf(evs, "0.vm")
				if !slices.Contains(k, JobQueued) || !slices.Contains(k, JobStarted) || !slices.Contains(k, JobEnded) {
					t.Errorf("0.vm: %v", k)
				}
			}
			// 1.vm deleted while running: Exit_status=271 in the E record.
			for _, e := range acct {
				if e.Job == "1.vm" && e.Kind == JobEnded && (e.ExitStatus == nil || *e.ExitStatus != 271) {
					t.Errorf("1.vm E record exit status %v", e.ExitStatus)
				}
			}
			// 2.vm deleted while queued: a D record and nothing after it.
			if k := kindsOf(acct, "2.vm"); !slices.Equal(k, []EventKind{JobQueued, JobDeleted}) {
				t.Errorf("2.vm accounting: %v", k)
			}
			// loglevel 4: every job start shows as a svr_setjobstate transition.
			if n := countState(slog, "RUNNING-RUNNING"); n == 0 {
				t.Error("no svr_setjobstate transitions to RUNNING-RUNNING")
			}
			if n := countKind(slog, ServerStarted); n < 2 {
				t.Errorf("%d server starts, the captures have a restart", n)
			}
			checkGolden(t, "events_serverlog_"+v.dir, slog)
			checkGolden(t, "events_accounting_"+v.dir, acct)
		})
	}
}

func countKind(evs []Event, k EventKind) int {
	n := 0
	for _, e := range evs {
		if e.Kind == k {
			n++
		}
	}
	return n
}

func countState(evs []Event, to string) int {
	n := 0
	for _, e := range evs {
		if e.Kind == JobStateChanged && e.To == to {
			n++
		}
	}
	return n
}

// Version quirks the captures show, pinned.
func TestAccountingVersionQuirks(t *testing.T) {
	find := func(evs []Event, job string, k EventKind) Event {
		for _, e := range evs {
			if e.Job == job && e.Kind == k {
				return e
			}
		}
		t.Fatalf("no %s for %s", k, job)
		return Event{}
	}
	e61 := find(acctEvents(t, "torque-6.1.3"), "1.vm", JobStarted)
	e42 := find(acctEvents(t, "torque-4.2.10"), "1.vm", JobStarted)
	e25 := find(acctEvents(t, "torque-2.5.13"), "1.vm", JobStarted)
	for _, c := range []struct{ got, want string }{
		{e61.Fields["exec_host"], "vm/1-2"}, {e42.Fields["exec_host"], "vm/1+vm/2"}, {e25.Fields["exec_host"], "vm/2+vm/1"},
		{e61.Fields["start_count"], "1"}, {e42.Fields["start_count"], ""},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	for _, e := range []Event{e61, e42, e25} {
		h, err := ParseExecHost(e.Fields["exec_host"])
		if err != nil || len(h) != 1 || h[0].Procs != 2 {
			t.Errorf("exec_host %q: %v %v", e.Fields["exec_host"], h, err)
		}
	}
	// 2.5.13 E records carry no resources_used.* at all.
	end25 := find(acctEvents(t, "torque-2.5.13"), "0.vm", JobEnded)
	for k := range end25.Fields {
		if strings.HasPrefix(k, "resources_used.") {
			t.Errorf("2.5.13 E record has %s", k)
		}
	}
	// Array: the parent gets only a Q record; subjobs their own S/E or D.
	a := acctEvents(t, "torque-4.2.10")
	if k := kindsOf(a, "3[].vm"); !slices.Equal(k, []EventKind{JobQueued}) {
		t.Errorf("array parent: %v", k)
	}
	if k := kindsOf(a, "3[2].vm"); !slices.Equal(k, []EventKind{JobDeleted}) {
		t.Errorf("3[2].vm: %v", k)
	}
}

func TestParseAcctLineRejects(t *testing.T) {
	for _, line := range []string{
		"", "11/22/2026 03:11:33;Q", "11/22/2026 03:11:33;X;0.vm;queue=batch",
		"11/22/2026 03:11:33;Q;;queue=batch", "11/22/2026 03:11:33;S;0.vm;novalue user=x",
		"11/22/2026 03:11:33.123;Q;0.vm;queue=batch",
	} {
		if _, err := ParseAcctLine(line, time.UTC); err == nil {
			t.Errorf("%q accepted", line)
		}
	}
}

// Job messages from Torque's message catalogue that the captures lack.
func TestLogEventCatalogueMessages(t *testing.T) {
	cases := map[string]EventKind{
		"Job Rerun at request of root@vm":                 JobRerun,
		"Holds u set at request of alice@vm":              JobModified,
		"Holds u released at request of alice@vm":         JobModified,
		"Job moved to long":                               JobModified,
		"Aborted by PBS Server ":                          JobAborted,
		"Job aborted on PBS Server initialization":        JobAborted,
		"Job deleted as result of dependency on job 7.vm": JobDeleted,
		"Job Modified at request of alice@vm":             JobModified,
		"preparing to send 'b' mail":                      "",
	}
	for msg, want := range cases {
		rec := LogRecord{Class: "Job", Object: "9.vm", Message: msg}
		ev, ok := LogEvent(rec)
		if (want == "") == ok || (ok && (ev.Kind != want || ev.Job != "9.vm")) {
			t.Errorf("%q: got %v %+v, want %v", msg, ok, ev.Kind, want)
		}
	}
}
