package simsite

import (
	"strings"
	"testing"
)

// A malformed line of a simulated site's trace is left out and returned,
// with the records the archive marks missing; the site runs on the good
// records. A trace with no good record is an error naming its lines.
func TestReadWorkloadLeavesOutMalformedLines(t *testing.T) {
	good := "1 0 5 10 4 -1 -1 4 100 -1 1 7 1 1 1 1 -1 -1\n"
	missing := "2 3 5 -1 4 -1 -1 4 100 -1 1 7 1 1 1 1 -1 -1\n" // run time unknown (-1)
	bad := "3 5 5 ten 4 -1 -1 4 100 -1 1 7 1 1 1 1 -1 -1\n"
	jobs, skipped, err := ReadWorkload(strings.NewReader("; MaxProcs: 8\n"+good+missing+bad), "s")
	if err != nil {
		t.Fatalf("a trace with one malformed line: %v", err)
	}
	if len(jobs) != 1 || jobs[0].ID != "s.1" || len(skipped) != 2 || skipped[0].Line != 3 || !skipped[1].Malformed || skipped[1].Line != 4 {
		t.Fatalf("jobs %+v, left out %+v: want s.1, and lines 3 (missing) and 4 (malformed)", jobs, skipped)
	}
	if _, _, err := ReadWorkload(strings.NewReader(bad), "s"); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("a trace with no good record: %v, want an error naming line 1", err)
	}
}
