package torque

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lookahead/forecast"
)

// snapshotPoints are instants of the captures at which a complete
// qstat + pbsnodes pair exists. The client runs `qstat -f -x -t`; each
// point says which captured command stands for it and why that is exact.
var snapshotPoints = []struct {
	name, dir, at, qstatFrom, why string
}{
	{"6.1.3-queued", "torque-6.1.3/phaseA-no-scheduler", "08_pbsnodes_x", "qstat -f -x 0.vm", "0.vm is the only job"},
	{"6.1.3-running", "torque-6.1.3/phaseA-no-scheduler", "17_pbsnodes_x_running", "qstat -f -x 0.vm", "0.vm is the only job"},
	{"6.1.3-maui-reserved", "torque-6.1.3/phaseB-with-maui", "16_pbsnodes_x", "qstat -f -x", "no arrays, so -t changes nothing"},
	{"6.1.3-maui-final", "torque-6.1.3/phaseB-with-maui", "29_pbsnodes_x_final", "qstat -f -x", "no arrays, so -t changes nothing"},
	{"4.2.10-queued", "torque-4.2.10/phaseA-no-scheduler", "08_pbsnodes_x", "qstat -f -x 0.vm", "0.vm is the only job"},
	{"4.2.10-running", "torque-4.2.10/phaseA-no-scheduler", "17_pbsnodes_x_running", "qstat -f -x 0.vm", "0.vm is the only job"},
	{"4.2.10-final", "torque-4.2.10/phaseA-no-scheduler", "34b_pbsnodes_x_final", "qstat -x -t", "-x implies -f (32e and 32h are byte-equal)"},
	{"2.5.13-queued", "torque-2.5.13/phaseA-no-scheduler", "08_pbsnodes_x", "qstat -f -x 0.vm", "0.vm is the only job"},
	{"2.5.13-running", "torque-2.5.13/phaseA-no-scheduler", "17_pbsnodes_x_running", "qstat -f -x 0.vm", "0.vm is the only job"},
	{"2.5.13-final", "torque-2.5.13/phaseA-no-scheduler", "34b_pbsnodes_x_final", "qstat -x -t", "-x implies -f (32e and 32h are byte-equal)"},
}

func TestSnapshotGolden(t *testing.T) {
	taken := time.Unix(1795321500, 0)
	for _, p := range snapshotPoints {
		t.Run(p.name, func(t *testing.T) {
			fr, err := NewFixtureRunner(filepath.Join("testdata", p.dir),
				FixtureAt(p.at), FixtureAlias("qstat -f -x -t", p.qstatFrom))
			if err != nil {
				t.Fatal(err)
			}
			c := NewClient(fr, ClientConfig{Site: "vm", Now: func() time.Time { return taken },
				Default: NodeConfig{Speed: 1, Features: []string{"grid"}},
				Nodes:   map[string]NodeConfig{"vm": {Speed: 2.5, MemMB: 16000}}})
			snap, err := c.Snapshot(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			checkSnapshot(t, snap)
			checkGolden(t, "snapshot_"+p.name, snap)
		})
	}
}

func checkSnapshot(t *testing.T, s *forecast.Snapshot) {
	t.Helper()
	if len(s.Nodes) == 0 {
		t.Fatal("no nodes")
	}
	for _, n := range s.Nodes {
		want := 1.0
		if n.Name == "vm" {
			want = 2.5
		}
		if n.Speed != want {
			t.Errorf("node %s speed %v, want %v", n.Name, n.Speed, want)
		}
	}
	for _, j := range s.Jobs {
		if j.State == forecast.JobCompleted || IsArrayParent(j.ID) {
			t.Errorf("snapshot keeps %s in state %s", j.ID, j.State)
		}
	}
}

func TestSnapshotErrorsClassified(t *testing.T) {
	cases := []struct {
		dir, at, qstatFrom string
		want               error
	}{
		{"torque-6.1.3/phaseB-with-maui", "34_qstat_err_unknown", "qstat -f 999.vm", ErrUnknownJob},
		{"torque-4.2.10/phaseA-no-scheduler", "29b_qstat_f_err_unknown", "qstat -f 999.vm", ErrUnknownJob},
		{"torque-2.5.13/phaseA-no-scheduler", "29b_qstat_f_err_unknown", "qstat -f 999.vm", ErrUnknownJob},
	}
	for _, tc := range cases {
		fr, err := NewFixtureRunner(filepath.Join("testdata", tc.dir), FixtureAt(tc.at),
			FixtureAlias("qstat -f -x -t", tc.qstatFrom))
		if err != nil {
			t.Fatal(err)
		}
		_, err = NewClient(fr, ClientConfig{}).Jobs(context.Background())
		var ce *CommandError
		if !errors.Is(err, tc.want) || !errors.As(err, &ce) || ce.Stderr == "" {
			t.Errorf("%s: got %v, want %v with stderr", tc.dir, err, tc.want)
		}
	}
	// pbsnodes -x on an unknown node exits 1: a plain command failure.
	fr, err := NewFixtureRunner(filepath.Join("testdata", "torque-4.2.10/phaseA-no-scheduler"),
		FixtureAlias("pbsnodes -x", "pbsnodes -x nosuchnode"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewClient(fr, ClientConfig{}).Nodes(context.Background())
	if !errors.Is(err, ErrCommand) || errors.Is(err, ErrNoNodes) {
		t.Errorf("pbsnodes unknown node: %v", err)
	}
}

func TestClassifyExit(t *testing.T) {
	cases := []struct {
		tool string
		code int
		want error
	}{
		{"qstat", 0, nil}, {"qdel", 153, ErrUnknownJob}, {"qdel", 170, ErrInvalidState},
		{"pbsnodes", 2, ErrNoNodes}, {"qrun", 2, ErrCommand}, {"qdel", 159, ErrCommand},
	}
	for _, tc := range cases {
		err := ClassifyExit(tc.tool, nil, Result{ExitCode: tc.code})
		if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("%s exit %d: got %v, want %v", tc.tool, tc.code, err, tc.want)
		}
	}
}

func TestFixtureRunnerUnknownCommand(t *testing.T) {
	fr, err := NewFixtureRunner(filepath.Join("testdata", phaseDirs[0]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fr.Run(context.Background(), "qstat", "-Q"); !errors.Is(err, ErrNoFixture) {
		t.Fatalf("got %v", err)
	}
	if _, err := NewFixtureRunner(filepath.Join("testdata", phaseDirs[0]), FixtureAt("nope")); err == nil {
		t.Fatal("unknown point accepted")
	}
}

// Every captured run that exited non-zero is classified by its code, with
// what the program printed kept in the error.
func TestCapturedErrorExits(t *testing.T) {
	want := map[int]error{153: ErrUnknownJob, 170: ErrInvalidState, 1: ErrCommand, 2: ErrCommand, 159: ErrCommand}
	n := 0
	for _, d := range phaseDirs {
		rows, err := readIndex(filepath.Join("testdata", d, "INDEX.tsv"))
		if err != nil {
			t.Fatal(err)
		}
		fr, err := NewFixtureRunner(filepath.Join("testdata", d))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.exit == 0 {
				continue
			}
			argv := strings.Fields(r.argv)
			res, err := fr.Run(context.Background(), argv[0], argv[1:]...)
			if err != nil {
				t.Fatal(err)
			}
			tool := argv[len(argv)-2] // "qdel 999.vm", also inside "su - u -c … qdel 6.vm"
			if argv[0] != "su" {
				tool = argv[0]
			}
			cerr := ClassifyExit(tool, argv[1:], res)
			if !errors.Is(cerr, want[r.exit]) {
				t.Errorf("%s/%s exit %d: %v", d, r.name, r.exit, cerr)
			}
			// 4.2.10's qdel of an unknown job prints nothing: the error says so.
			if len(res.Stderr) == 0 && !strings.Contains(cerr.Error(), "(no stderr)") {
				t.Errorf("%s/%s: %v", d, r.name, cerr)
			}
			n++
		}
	}
	if n < 15 {
		t.Fatalf("only %d error captures", n)
	}
}

func TestParseXMLRequiredAndUnknownElements(t *testing.T) {
	_, err := ParseQstatXML(strings.NewReader(`<Data><Job><Job_Id>1.vm</Job_Id><queue>q</queue></Job></Data>`))
	if err == nil || !strings.Contains(err.Error(), "missing job_state") || !strings.Contains(err.Error(), "1.vm") {
		t.Fatalf("got %v", err)
	}
	jobs, err := ParseQstatXML(strings.NewReader(`<Data><Job><Job_Id>1.vm</Job_Id><job_state>Q</job_state><future_attr><x>1</x></future_attr></Job></Data>`))
	if err != nil || len(jobs) != 1 || jobs[0].Procs != 1 {
		t.Fatalf("unknown element: %v %+v", err, jobs)
	}
	_, err = ParsePbsnodesXML(strings.NewReader(`<Data><Node><name>n1</name><state>free</state></Node></Data>`))
	if err == nil || !strings.Contains(err.Error(), "missing np") {
		t.Fatalf("got %v", err)
	}
	if _, err := ParseQstatXML(strings.NewReader(`<Data><Job><Job_Id>1`)); err == nil {
		t.Fatal("truncated XML accepted")
	}
	if jobs, err := ParseQstatXML(strings.NewReader("")); err != nil || len(jobs) != 0 {
		t.Fatalf("empty output: %v %v", jobs, err)
	}
}
