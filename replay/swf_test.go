package replay

import (
	"strings"
	"testing"
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

func TestReadSWFErrorsNameTheLine(t *testing.T) {
	good := "1 0 5 100 4 -1 -1 -1 200 -1 1 1 1 1 1 -1 -1 -1\n"
	cases := map[string]string{
		"; header\n" + good + "2 10 5 100 4 -1 -1\n":                                                 "line 3",
		good + "2 x 5 100 4 -1 -1 -1 200 -1 1 1 1 1 1 -1 -1 -1\n":                                    "line 2 field 2",
		"2 10 5 100 4 -1 -1 -1 200 -1 1 1 1 1 1 -1 -1 -1\n" + strings.Replace(good, "1 0", "3 5", 1): "before",
	}
	for in, want := range cases {
		if _, _, err := ReadSWF(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error with %q", in, err, want)
		}
	}
	jobs, st, err := ReadSWF(strings.NewReader(good + "2 10 5 -1 4 -1 -1 -1 200 -1 1 1 1 1 1 -1 -1 -1\n"))
	if err != nil || len(jobs) != 1 || st.Skipped != 1 {
		t.Fatalf("unknown run time: %d jobs, %+v, %v", len(jobs), st, err)
	}
}
