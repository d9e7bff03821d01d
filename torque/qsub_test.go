package torque

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lookahead/forecast"
)

func TestQsubArgs(t *testing.T) {
	spec := QsubSpec{User: "alice", Name: "la.g17.0", Nodes: []forecast.HostProcs{{Node: "n001", Procs: 8}, {Node: "n002", Procs: 4}},
		Walltime: 7265, Bind: []string{"-A", "proj1", "-W", "x=FLAGS:ADVRES:la.g17.0"},
		Output: "/home/alice/la.g17.0.out", Error: "vm:/home/alice/la.g17.0.err",
		Env: []EnvVar{{"LOOKAHEAD_JOB", "g17"}, {"LOOKAHEAD_PARTS", "alpha:n001:8+alpha:n002:4+beta:b7:4"}}}
	got, err := QsubArgs(spec)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-P", "alice", "-N", "la.g17.0", "-l", "nodes=n001:ppn=8+n002:ppn=4", "-l", "walltime=02:01:05",
		"-A", "proj1", "-W", "x=FLAGS:ADVRES:la.g17.0", "-o", "/home/alice/la.g17.0.out", "-e", "vm:/home/alice/la.g17.0.err",
		"-v", "LOOKAHEAD_JOB=g17,LOOKAHEAD_PARTS=alpha:n001:8+alpha:n002:4+beta:b7:4"}
	if !slices.Equal(got, want) {
		t.Fatalf("args\n got %q\nwant %q", got, want)
	}
}

func TestQsubArgsRefuses(t *testing.T) {
	ok := QsubSpec{Name: "la.g1.0", Nodes: []forecast.HostProcs{{Node: "vm", Procs: 2}}, Walltime: 60}
	for name, mut := range map[string]func(*QsubSpec){
		"root":            func(s *QsubSpec) { s.User = "root" },
		"user with space": func(s *QsubSpec) { s.User = "al ice" },
		"user option":     func(s *QsubSpec) { s.User = "-x" },
		"no name":         func(s *QsubSpec) { s.Name = "" },
		"name space":      func(s *QsubSpec) { s.Name = "a b" },
		"long name":       func(s *QsubSpec) { s.Name = strings.Repeat("x", 257) },
		"no nodes":        func(s *QsubSpec) { s.Nodes = nil },
		"zero procs":      func(s *QsubSpec) { s.Nodes[0].Procs = 0 },
		"bad node":        func(s *QsubSpec) { s.Nodes[0].Node = "vm+x" },
		"no walltime":     func(s *QsubSpec) { s.Walltime = 0 },
		"env comma":       func(s *QsubSpec) { s.Env = []EnvVar{{"A", "x,y"}} },
		"env quote":       func(s *QsubSpec) { s.Env = []EnvVar{{"A", `x"`}} },
		"env space":       func(s *QsubSpec) { s.Env = []EnvVar{{"A", "x y"}} },
		"env name":        func(s *QsubSpec) { s.Env = []EnvVar{{"1A", "x"}} },
		"output relative": func(s *QsubSpec) { s.Output = "out" },
		"output comma":    func(s *QsubSpec) { s.Output = "/a,b" },
		"bind space":      func(s *QsubSpec) { s.Bind = []string{"-A x"} },
	} {
		s := ok
		s.Nodes = slices.Clone(ok.Nodes)
		mut(&s)
		if _, err := QsubArgs(s); !errors.Is(err, ErrBadSpec) {
			t.Errorf("%s: err %v, want ErrBadSpec", name, err)
		}
	}
	if _, err := QsubArgs(ok); err != nil {
		t.Fatal(err)
	}
}

// TestParseQsubIDCaptured reads the ids the real qsub of every version
// printed.
func TestParseQsubIDCaptured(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"testdata/qsub/torque-2.5.13/20_qsub_job3.out", "2.vm"},
		{"testdata/qsub/torque-4.2.10/20_qsub_job3.out", "2.vm"},
		{"testdata/qsub/torque-6.1.3/07_qsub_grid_advres_W.out", "5.vm"},
	} {
		data, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseQsubID(data)
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.file, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "\n", "qsub: submit error", "vm.12", "12 .vm"} {
		if id, err := ParseQsubID([]byte(bad)); err == nil {
			t.Errorf("%q: accepted as %q", bad, id)
		}
	}
}

// recordingRunner serves captures and remembers what it was given.
type recordingRunner struct {
	*FixtureRunner
	stdin [][]byte
	argv  [][]string
}

func (r *recordingRunner) RunInput(ctx context.Context, stdin []byte, name string, args ...string) (Result, error) {
	r.stdin = append(r.stdin, stdin)
	r.argv = append(r.argv, append([]string{name}, args...))
	return r.FixtureRunner.RunInput(ctx, stdin, name, args...)
}

func TestBatchDeleteClassifiesCaptures(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		dir, id string
		want    error
	}{
		{"torque-6.1.3/phaseB-with-maui", "999.vm", ErrUnknownJob},
		{"torque-6.1.3/phaseB-with-maui", "6.vm", ErrInvalidState}, // completed
		{"torque-4.2.10/phaseA-no-scheduler", "999.vm", ErrUnknownJob},
		{"torque-2.5.13/phaseA-no-scheduler", "999.vm", ErrUnknownJob},
	} {
		fr, err := NewFixtureRunner(filepath.Join("testdata", c.dir),
			FixtureAlias("qdel 6.vm", "su - griduser -c PATH=/usr/local/bin:$PATH qdel 6.vm"))
		if err != nil {
			t.Fatal(err)
		}
		argv, err := NewBatch(fr, BatchConfig{}).Delete(ctx, c.id)
		if !errors.Is(err, c.want) || !Gone(err) {
			t.Errorf("%s qdel %s: %v, want %v", c.dir, c.id, err, c.want)
		}
		if !slices.Equal(argv, []string{"qdel", c.id}) {
			t.Errorf("argv %q", argv)
		}
	}
}

func TestParseBatchJobsCaptured(t *testing.T) {
	exit := func(n int) *int { return &n }
	for _, v := range []string{"torque-6.1.3", "torque-4.2.10", "torque-2.5.13"} {
		dir := filepath.Join("testdata", v, "phaseA-no-scheduler")
		completed, deleted, deletedQueued := "27_qstat_f_x_completed_job1", "29_qstat_f_x_deleted_job2", "30_qstat_f_x_deleted_queued_job3"
		if v != "torque-6.1.3" {
			completed, deleted, deletedQueued = "32_qstat_f_x_completed_job1", "32c_qstat_f_x_deleted_job2", "32d_qstat_f_x_deleted_queued_job3"
		}
		for _, c := range []struct {
			file string
			exit *int
		}{{completed, exit(0)}, {deleted, exit(271)}, {deletedQueued, nil}} {
			f, err := os.Open(filepath.Join(dir, c.file+".out"))
			if err != nil {
				t.Fatal(err)
			}
			jobs, err := ParseBatchJobs(f)
			f.Close()
			if err != nil || len(jobs) != 1 {
				t.Fatalf("%s/%s: %v, %d jobs", v, c.file, err, len(jobs))
			}
			j := jobs[0]
			if !j.Done() || j.User != "griduser" || !strings.HasPrefix(j.Output, "vm:/home/griduser/") {
				t.Errorf("%s/%s: %+v", v, c.file, j)
			}
			if (j.ExitStatus == nil) != (c.exit == nil) || (c.exit != nil && *j.ExitStatus != *c.exit) {
				t.Errorf("%s/%s: exit %v, want %v", v, c.file, j.ExitStatus, c.exit)
			}
			if c.exit != nil && (j.Started == 0 || j.Ended < j.Started) {
				t.Errorf("%s/%s: started %d ended %d", v, c.file, j.Started, j.Ended)
			}
		}
	}
}

func TestParseBatchJobsBindingAndErrors(t *testing.T) {
	f, err := os.Open("testdata/torque-6.1.3/phaseB-with-maui/15_qstat_f_x_all.out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	jobs, err := ParseBatchJobs(f)
	if err != nil {
		t.Fatal(err)
	}
	bound := map[string]string{}
	for _, j := range jobs {
		bound[j.Name] = j.Reservation
	}
	if bound["gridadvresW"] != "grid1.0" || bound["gridinres"] != "" {
		t.Fatalf("reservations by name: %v", bound)
	}
	for _, bad := range []string{
		"<Data><Job><job_state>Q</job_state></Job></Data>",
		"<Data><Job><Job_Id>1.vm</Job_Id></Job></Data>",
		"<Data><Job><Job_Id>1.vm</Job_Id><job_state>C</job_state><exit_status>x</exit_status></Job></Data>",
		"<Data><Job><Job_Id>1.vm</Job_Id><job_state>C</job_state><comp_time>soon</comp_time></Job></Data>",
		"<Data><Job>",
	} {
		if _, err := ParseBatchJobs(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
	if jobs, err := ParseBatchJobs(strings.NewReader("")); err != nil || len(jobs) != 0 {
		t.Fatalf("empty: %v %v", jobs, err)
	}
}
