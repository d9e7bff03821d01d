package replay

import (
	"fmt"
	"strings"
	"testing"

	"lookahead/forecast/swf"
)

func TestReadSWFSlice(t *testing.T) {
	jobs := ctcSlice(t)
	if len(jobs) != 5000 {
		t.Fatalf("%d jobs, want 5000", len(jobs))
	}
	j := jobs[0]
	if j.ID != "1" || j.Procs <= 0 || j.Walltime <= 0 || j.Run < 0 {
		t.Fatalf("first job %+v", j)
	}
	for i := 1; i < len(jobs); i++ {
		if jobs[i].Submit < jobs[i-1].Submit {
			t.Fatalf("job %s submitted before job %s", jobs[i].ID, jobs[i-1].ID)
		}
	}
}

// TestReadSWFSkipsBadLines: a malformed line is left out with its line
// and reason, and the good records around it are kept.
func TestReadSWFSkipsBadLines(t *testing.T) {
	good := "1 0 5 100 4 -1 -1 -1 200 -1 1 1 1 1 1 -1 -1 -1\n"
	last := "9 20 5 100 4 -1 -1 -1 200 -1 1 1 1 1 1 -1 -1 -1\n"
	// every case keeps one record and skips one malformed line
	cases := map[string]string{
		"; header\n" + "2 10 5 100 4 -1 -1\n" + last:                                      "line 2: 7 fields",
		"2 x 5 100 4 -1 -1 -1 200 -1 1 1 1 1 1 -1 -1 -1\n" + last:                         "line 1: field 2",
		strings.Replace(good, "1 0", "3 30", 1) + strings.Replace(good, "1 0", "3 40", 1): "line 2: job 3 repeats line 1",
	}
	for in, want := range cases {
		jobs, st, err := ReadSWF(strings.NewReader(in))
		if err != nil || len(jobs) != 1 || len(st.Skips) != 1 || malformed(st.Skips) != 1 {
			t.Errorf("%q: %d jobs, %+v, %v: want one job and one malformed line", in, len(jobs), st, err)
			continue
		}
		if got := fmt.Sprintf("line %d: %s", st.Skips[0].Line, st.Skips[0].Reason); !strings.HasPrefix(got, want) {
			t.Errorf("%q: skipped %q, want %q", in, got, want)
		}
	}
	jobs, st, err := ReadSWF(strings.NewReader(good + "2 10 5 -1 4 -1 -1 -1 200 -1 1 1 1 1 1 -1 -1 -1\n"))
	if err != nil || len(jobs) != 1 || st.Skipped != 1 || malformed(st.Skips) != 0 {
		t.Fatalf("unknown run time: %d jobs, %+v, %v", len(jobs), st, err)
	}
}

// malformed counts the skips that were malformed lines.
func malformed(skips []swf.Skip) int {
	n := 0
	for _, k := range skips {
		if k.Malformed {
			n++
		}
	}
	return n
}
