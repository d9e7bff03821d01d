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

const liveDir = "testdata/qsub/torque-6.1.3-live"

func TestParseQsubIDLive(t *testing.T) {
	for file, want := range map[string]string{"04_qsub_P_alice.out": "4.vm", "08_qsub_P_by_manager_at_vm_and_localhost.out": "13.vm",
		"18_qsub_bound_to_reservation.out": "22.vm"} {
		data, err := os.ReadFile(filepath.Join(liveDir, file))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := ParseQsubID(data); err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", file, got, err, want)
		}
	}
}

// TestBatchSubmitLiveRefusals replays qsub's real refusals through Batch:
// each is a *CommandError carrying qsub's words, and no job id.
func TestBatchSubmitLiveRefusals(t *testing.T) {
	fr, err := NewFixtureRunner(liveDir)
	if err != nil {
		t.Fatal(err)
	}
	spec := QsubSpec{User: "nosuchuser", Name: "dispatch.x3", Nodes: []forecast.HostProcs{{Node: "vm", Procs: 1}}, Walltime: 60}
	rr := &recordingRunner{FixtureRunner: fr}
	id, argv, err := NewBatch(rr, BatchConfig{Site: "vm"}).Submit(context.Background(), spec)
	var ce *CommandError
	if id != "" || !errors.As(err, &ce) || ce.ExitCode != 177 || !strings.Contains(err.Error(), "Bad UID for job execution") {
		t.Fatalf("qsub -P nosuchuser: %q %v", id, err)
	}
	want := []string{"qsub", "-P", "nosuchuser", "-N", "dispatch.x3", "-l", "nodes=vm:ppn=1", "-l", "walltime=00:01:00"}
	if !slices.Equal(argv, want) || len(rr.argv) != 1 {
		t.Fatalf("argv %q, ran %q", argv, rr.argv)
	}
	spec.User, spec.Name = "", "dispatch.x1"
	if _, _, err := NewBatch(fr, BatchConfig{}).Submit(context.Background(), spec); err == nil || !strings.Contains(err.Error(), "can not be run as root") {
		t.Fatalf("qsub as root: %v", err)
	}
}

// TestBatchSubmitLive submits the captured proxied part: the script goes
// to qsub's standard input and the id comes back.
func TestBatchSubmitLive(t *testing.T) {
	fr, err := NewFixtureRunner(liveDir)
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(liveDir, "part.sh"))
	if err != nil {
		t.Fatal(err)
	}
	spec := QsubSpec{User: "alice", Name: "la.dispatch-a.0", Nodes: []forecast.HostProcs{{Node: "vm", Procs: 2}}, Walltime: 120,
		Bind:   []string{"-A", "dispatchacct", "-W", "x=FLAGS:ADVRES:la.dispatch-a.0"},
		Output: "/home/alice/la.dispatch-a.0.out", Error: "/home/alice/la.dispatch-a.0.err", Script: script}
	rr := &recordingRunner{FixtureRunner: fr}
	id, _, err := NewBatch(rr, BatchConfig{}).Submit(context.Background(), spec)
	if err != nil || id != "22.vm" {
		t.Fatalf("submit: %q %v", id, err)
	}
	if len(rr.stdin) != 1 || string(rr.stdin[0]) != string(script) {
		t.Fatalf("stdin %q", rr.stdin)
	}
}

func TestParseBatchJobsLive(t *testing.T) {
	read := func(name string) []BatchJob {
		f, err := os.Open(filepath.Join(liveDir, name+".out"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		jobs, err := ParseBatchJobs(f)
		if err != nil {
			t.Fatal(err)
		}
		return jobs
	}
	if j := read("05_qstat_f_x_proxied_queued")[0]; j.User != "alice" || j.Name != "la.dispatch-p1.0" || j.State != "Q" || j.Started != 0 {
		t.Errorf("proxied queued: %+v", j)
	}
	if j := read("13_qstat_f_x_completed_exit3")[0]; !j.Done() || j.ExitStatus == nil || *j.ExitStatus != 3 || j.Ended < j.Started {
		t.Errorf("exit 3: %+v", j)
	}
	if j := read("17_qstat_f_x_deleted_queued")[0]; !j.Done() || j.ExitStatus != nil {
		t.Errorf("deleted queued: %+v", j)
	}
	running := read("19_qstat_f_x_running_in_reservation")
	if len(running) != 2 || running[0].Reservation != "la.dispatch-a.0" || running[0].Account != "dispatchacct" ||
		running[0].State != "R" || running[0].Started != 1795546203 {
		t.Errorf("running in reservation: %+v", running)
	}
	if j := read("20_qstat_f_x_waiting_for_reservation")[0]; j.Reservation != "la.dispatch-s1.0" || j.State != "Q" {
		t.Errorf("waiting: %+v", j)
	}
}

func TestBatchJobsAndDeleteLive(t *testing.T) {
	fr, err := NewFixtureRunner(liveDir, FixtureAlias("qstat -f -x", "qstat -f -x"))
	if err != nil {
		t.Fatal(err)
	}
	b := NewBatch(fr, BatchConfig{})
	jobs, argv, err := b.Jobs(context.Background())
	if err != nil || len(jobs) != 5 || !slices.Equal(argv, []string{"qstat", "-f", "-x"}) {
		t.Fatalf("jobs: %d %v %q", len(jobs), err, argv)
	}
	if _, err := b.Delete(context.Background(), "4.vm"); !errors.Is(err, ErrInvalidState) || !Gone(err) {
		t.Fatalf("qdel completed: %v", err)
	}
	if _, err := b.Delete(context.Background(), "999.vm"); !errors.Is(err, ErrUnknownJob) {
		t.Fatalf("qdel unknown: %v", err)
	}
	if _, err := b.Delete(context.Background(), "-x"); !errors.Is(err, ErrBadSpec) {
		t.Fatalf("qdel of an option: %v", err)
	}
}

// TestBatchServerLive replays qsub, qstat and qdel sent to a named
// pbs_server (torque.server), captured live: the destination goes as
// `-q @server`, `@server` and `id@server`, and a server that does not
// resolve is an error carrying the client's words.
func TestBatchServerLive(t *testing.T) {
	const dir = "testdata/qsub/torque-6.1.3-live-server"
	ctx := context.Background()
	fr, err := NewFixtureRunner(dir)
	if err != nil {
		t.Fatal(err)
	}
	spec := QsubSpec{User: "alice", Name: "la.srv-a.0", Nodes: []forecast.HostProcs{{Node: "vm", Procs: 1}}, Walltime: 60,
		Output: "/home/alice/la.srv-a.0.out", Error: "/home/alice/la.srv-a.0.err"}
	b := NewBatch(fr, BatchConfig{Site: "vm", Server: "vm"})
	if id, argv, err := b.Submit(ctx, spec); err != nil || id != "66.vm" || !slices.Contains(argv, "@vm") {
		t.Fatalf("qsub @vm: %q %q %v", id, argv, err)
	}
	spec.Name, spec.Queue, spec.Output, spec.Error = "la.srv-b.0", "batch", "", ""
	if id, _, err := b.Submit(ctx, spec); err != nil || id != "67.vm" {
		t.Fatalf("qsub batch@vm: %q %v", id, err)
	}
	jobs, argv, err := b.Jobs(ctx)
	if err != nil || len(jobs) == 0 || argv[len(argv)-1] != "@vm" {
		t.Fatalf("qstat @vm: %d jobs, %q, %v", len(jobs), argv, err)
	}
	if argv, err := b.Delete(ctx, "66.vm"); err != nil || !slices.Equal(argv, []string{"qdel", "66.vm@vm"}) {
		t.Fatalf("qdel: %q %v", argv, err)
	}
	if _, err := b.Delete(ctx, "999.vm"); !errors.Is(err, ErrUnknownJob) {
		t.Errorf("qdel of an unknown job at the server: %v, want ErrUnknownJob", err)
	}
	bad := NewBatch(fr, BatchConfig{Site: "vm", Server: "nosuchserver"})
	spec.Name, spec.Queue = "la.srv-c.0", ""
	if _, _, err := bad.Submit(ctx, spec); err == nil || !strings.Contains(err.Error(), "cannot connect to server nosuchserver") {
		t.Errorf("qsub to a server that does not resolve: %v", err)
	}
	if _, _, err := bad.Jobs(ctx); err == nil || !strings.Contains(err.Error(), "cannot connect to server nosuchserver") {
		t.Errorf("qstat at a server that does not resolve: %v", err)
	}
	if _, err := bad.Delete(ctx, "67.vm"); err == nil || Gone(err) {
		t.Errorf("qdel at a server that does not resolve: %v, want an error that is not Gone", err)
	}
	if _, err := QsubArgs(QsubSpec{Name: "x", Server: "vm;rm", Nodes: spec.Nodes, Walltime: 60}); !errors.Is(err, ErrBadSpec) {
		t.Errorf("server %q accepted: %v", "vm;rm", err)
	}
}
