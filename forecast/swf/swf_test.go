package swf

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"lookahead/forecast"
	"lookahead/forecast/sim"
)

func readFile(t testing.TB, name string) *Trace {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := Read(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestReadRealSlices(t *testing.T) {
	cases := []struct {
		file     string
		maxProcs int
	}{
		{"CTC-SP2-1996-3.1-cln.head800.swf", 338},
		{"KTH-SP2-1996-2.1-cln.head800.swf", 100},
	}
	for _, c := range cases {
		tr := readFile(t, c.file)
		if tr.Header.MaxProcs != c.maxProcs {
			t.Errorf("%s: MaxProcs %d, want %d", c.file, tr.Header.MaxProcs, c.maxProcs)
		}
		if got := len(tr.Jobs) + len(tr.Skipped); got != 800 {
			t.Errorf("%s: %d jobs + %d skipped, want 800 records", c.file, len(tr.Jobs), len(tr.Skipped))
		}
	}
	// CTC's first record: "1 0 588530 937 306 142.00 -1 -1 35100 ..." asks
	// for -1 processors, so the 306 allocated count.
	ctc := readFile(t, "CTC-SP2-1996-3.1-cln.head800.swf")
	j := ctc.Jobs[0]
	if j.ID != 1 || j.Submit != 0 || j.Run != 937 || j.Procs() != 306 || j.Walltime() != 35100 {
		t.Errorf("first CTC job %+v: want id 1, submit 0, run 937, 306 procs, walltime 35100", j)
	}
}

func TestReadErrors(t *testing.T) {
	ok := "1 0 5 10 4 -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1\n"
	cases := map[string]string{
		"fields":   ok + "2 5 5 10 4 -1 -1 4 100 -1 1 1 1 1 1 1 -1\n",
		"number":   ok + "2 5 5 10 x -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1\n",
		"negative": ok + "2 5 5 10 -4 -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1\n",
		"unsorted": ok + "2 -1 5 10 4 -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1\n" + "3 0 5 10 4 -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1\n",
		"dup":      ok + ok,
	}
	for name, in := range cases {
		_, err := Read(strings.NewReader("; MaxProcs: 8\n"+in), 0)
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "line ") {
			t.Errorf("%s: err %v, want ErrFormat naming a line", name, err)
		}
	}
	// a missing submit time is the archive's -1 convention: skipped, then
	// the next record is compared with the last kept one... the skipped
	// record still counts for order, so submit -1 after 0 is an error above;
	// a missing run time is skipped.
	tr, err := Read(strings.NewReader(ok+"2 0 5 -1 4 -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1\n"), 0)
	if err != nil || len(tr.Jobs) != 1 || len(tr.Skipped) != 1 || tr.Skipped[0].Line != 2 {
		t.Fatalf("missing run time: %+v, %v; want one job and line 2 skipped", tr, err)
	}
}

// TestReadLenientSkipsBadLines: ReadLenient leaves each malformed line
// out with its line and reason and keeps the good records around it.
func TestReadLenientSkipsBadLines(t *testing.T) {
	rec := func(id, submit, run string) string {
		return id + " " + submit + " 5 " + run + " 4 -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1\n"
	}
	in := "; MaxProcs: 8\n" + rec("1", "3", "10") +
		"2 5 5 10\n" + // too few fields
		rec("3", "6", "ten") + // not a number
		rec("4", "7", "-5") + // negative other than -1
		rec("1", "8", "10") + // repeats job 1
		rec("6", "2", "10") + // submitted before the previous record
		rec("7", "9", "-1") + // run time missing: the archive's convention
		rec("8", "9", "10")
	tr, err := ReadLenient(strings.NewReader(in), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Jobs) != 2 || tr.Jobs[0].ID != 1 || tr.Jobs[1].ID != 8 {
		t.Fatalf("jobs %+v: want jobs 1 and 8", tr.Jobs)
	}
	want := []struct {
		line      int
		reason    string
		malformed bool
	}{{3, "4 fields, want 18", true}, {4, `field 4: "ten" is not a number`, true}, {5, "field 4: -5 is negative", true},
		{6, "job 1 repeats line 2", true}, {7, "submit time 2 is before", true}, {8, "run time missing", false}}
	if len(tr.Skipped) != len(want) {
		t.Fatalf("skipped %+v: want %d", tr.Skipped, len(want))
	}
	for i, w := range want {
		s := tr.Skipped[i]
		if s.Line != w.line || !strings.HasPrefix(s.Reason, w.reason) || s.Malformed != w.malformed {
			t.Errorf("skip %d: %+v, want line %d, reason %q..., malformed %v", i, s, w.line, w.reason, w.malformed)
		}
	}
	if _, err := Read(strings.NewReader(in), 0); !errors.Is(err, ErrFormat) {
		t.Errorf("Read: %v, want the first bad line an error", err)
	}
	// a cut file is still an error
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	for i := range 2000 {
		w.Write([]byte(rec(strconv.Itoa(i+1), strconv.Itoa(i), "10")))
	}
	w.Close()
	zr, err := gzip.NewReader(bytes.NewReader(gz.Bytes()[:gz.Len()/2]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadLenient(zr, 0); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("cut gzip: %v, want an error saying it is truncated", err)
	}
}

// Replays of real trace slices hold the invariants under every policy.
func TestReplayRealSlices(t *testing.T) {
	for _, file := range []string{"CTC-SP2-1996-3.1-cln.head800.swf", "KTH-SP2-1996-2.1-cln.head800.swf"} {
		tr := readFile(t, file)
		jobs := tr.SimJobs()
		c := sim.PoolCluster(tr.Header.MaxProcs)
		for _, p := range []sim.Policy{sim.FCFS, sim.EASY, sim.Conservative, {Depth: 4}} {
			res, err := sim.Run(c, jobs, p)
			if err != nil {
				t.Fatal(err)
			}
			if err := sim.Verify(c, jobs, res); err != nil {
				t.Fatalf("%s %v: %v", file, p, err)
			}
			if p == sim.FCFS {
				checkFCFSOrder(t, res)
			}
			t.Logf("%s %v: %d ran, %d rejected, AWWT %.0f s, util %.3f", file, p, res.Metrics.Jobs, res.Metrics.Rejected, res.Metrics.AWWT, res.Metrics.Utilization)
		}
	}
}

// With FCFS and no priorities, jobs start in submit order.
func checkFCFSOrder(t *testing.T, res sim.Result) {
	t.Helper()
	rs := append([]sim.JobResult(nil), res.Jobs...)
	sortBySubmit(rs)
	for i := 1; i < len(rs); i++ {
		if rs[i].Start < rs[i-1].Start {
			t.Fatalf("FCFS: job %s (submit %d) starts at %d before job %s (submit %d) at %d",
				rs[i].ID, rs[i].Submit, rs[i].Start, rs[i-1].ID, rs[i-1].Submit, rs[i-1].Start)
		}
	}
}

func FuzzRead(f *testing.F) {
	for _, name := range []string{"CTC-SP2-1996-3.1-cln.head800.swf", "KTH-SP2-1996-2.1-cln.head800.swf"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b[:min(len(b), 4000)]))
	}
	f.Add("1 0 5 10 4 1.5 -1 4 100 -1 1 1 1 1 1 1 -1 -1\n")
	f.Add("1 0 5 9223372036854775000 4 -1 -1 4 9223372036854775000 -1 1 1 1 1 1 1 -1 -1\n")
	f.Fuzz(func(t *testing.T, in string) {
		lt, lerr := ReadLenient(strings.NewReader(in), 0)
		if lerr != nil && !errors.Is(lerr, bufio.ErrTooLong) {
			t.Fatalf("ReadLenient: %v; only a line too long to read fails it", lerr)
		}
		tr, err := Read(strings.NewReader(in), 0)
		if err == nil && (len(lt.Jobs) != len(tr.Jobs) || len(lt.Skipped) != len(tr.Skipped)) {
			t.Fatalf("ReadLenient kept %d jobs and skipped %d, Read %d and %d", len(lt.Jobs), len(lt.Skipped), len(tr.Jobs), len(tr.Skipped))
		}
		if lerr == nil {
			checkKept(t, lt)
		}
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		checkKept(t, tr)
	})
}

// checkKept fails on a kept job the simulator cannot take.
func checkKept(t *testing.T, tr *Trace) {
	t.Helper()
	for _, j := range tr.Jobs {
		if j.Procs() <= 0 || j.Procs() > forecast.MaxProcs || j.Walltime() <= 0 || j.Walltime() > forecast.MaxDuration ||
			j.Run < 0 || j.Run > forecast.MaxDuration || j.Submit < 0 || j.Submit > forecast.MaxInstant {
			t.Fatalf("kept a job the simulator cannot take: %+v", j)
		}
	}
}

// Issue 23.1: run and requested time 9223372036854775000 gave an absurd
// utilization and AWRT with exit 0; values past the model's limits are
// refused with the line and field named.
func TestReadRefusesPastTheLimits(t *testing.T) {
	const ok = "1 0 5 10 4 -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1\n"
	if _, err := Read(strings.NewReader(ok), 0); err != nil {
		t.Fatal(err)
	}
	for field, want := range map[int]string{2: "field 2 (submit time)", 4: "field 4 (run time)", 9: "field 9 (requested time)",
		5: "field 5 (allocated processors)", 8: "field 8 (requested processors)", 3: "field 3 (wait time)"} {
		f := strings.Fields(ok)
		f[field-1] = "9223372036854775000"
		_, err := Read(strings.NewReader("; MaxProcs: 8\n"+strings.Join(f, " ")+"\n"), 0)
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "line 2 "+want) {
			t.Errorf("field %d: %v, want ErrFormat naming line 2 %s", field, err, want)
		}
	}
}

// Issue 23.4: a gzip cut mid-stream was reported as a short last line
// ("2 fields, want 18"); it is a truncated file.
func TestReadReportsATruncatedGzip(t *testing.T) {
	b, err := os.ReadFile("testdata/KTH-SP2-1996-2.1-cln.head800.swf")
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(b)
	w.Close()
	for _, cut := range []int{z.Len() / 2, z.Len() / 3, z.Len() - 10} {
		zr, err := gzip.NewReader(bytes.NewReader(z.Bytes()[:cut]))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Read(zr, 0)
		if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "truncated") {
			t.Errorf("cut at %d of %d bytes: %v, want a truncated file", cut, z.Len(), err)
		}
	}
}
