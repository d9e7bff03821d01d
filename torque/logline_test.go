package torque

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var versions = []struct {
	dir    string
	format LogFormat
}{
	{"torque-6.1.3", Format61},
	{"torque-4.2.10", Format42},
	{"torque-2.5.13", Format25},
}

func readLines(t testing.TB, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

// Every line of every captured server log parses, with the format the
// README describes for its version, and times that never go backwards.
func TestParseLogLineCaptures(t *testing.T) {
	for _, v := range versions {
		t.Run(v.dir, func(t *testing.T) {
			lines := readLines(t, filepath.Join("testdata", v.dir, "server_logs", "20261122"))
			var prev time.Time
			for i, line := range lines {
				rec, err := ParseLogLine(line, time.UTC)
				if err != nil {
					t.Fatalf("line %d: %v\n%s", i+1, err, line)
				}
				if rec.Format != v.format {
					t.Fatalf("line %d: format %v, want %v", i+1, rec.Format, v.format)
				}
				if rec.Time.Before(prev) || rec.Time.Format("01/02/2006") != line[:10] {
					t.Fatalf("line %d: time %v", i+1, rec.Time)
				}
				prev = rec.Time
				if rec.Daemon != "PBS_Server" || rec.Class == "" {
					t.Fatalf("line %d: %+v", i+1, rec)
				}
			}
		})
	}
}

func TestParseLogLineFields(t *testing.T) {
	cases := []struct {
		line string
		want LogRecord
	}{
		{"11/22/2026 03:11:41.439;08;PBS_Server.11641;Job;0.vm;Job Run at request of root@localhost",
			LogRecord{Format: Format61, EventType: 8, Daemon: "PBS_Server", Thread: 11641, Class: "Job", Object: "0.vm", Message: "Job Run at request of root@localhost"}},
		{"11/22/2026 03:15:39.701;128;PBS_Server.11641;Req;req_reject;Reject reply code=15018(x;y)",
			LogRecord{Format: Format61, EventType: 128, Daemon: "PBS_Server", Thread: 11641, Class: "Req", Object: "req_reject", Message: "Reject reply code=15018(x;y)"}},
		{"11/22/2026 04:17:44;000d;PBS_Server.23080;Job;0.vm;preparing",
			LogRecord{Format: Format42, EventType: 13, Daemon: "PBS_Server", Thread: 23080, Class: "Job", Object: "0.vm", Message: "preparing"}},
		{"11/22/2026 04:17:44;0100;   pbs_mom.13355;Job;0.vm;x",
			LogRecord{Format: Format42, EventType: 256, Daemon: "pbs_mom", Thread: 13355, Class: "Job", Object: "0.vm", Message: "x"}},
		{"11/22/2026 04:24:09;0001;PBS_Server;Svr;PBS_Server;svr_setjobstate: y",
			LogRecord{Format: Format25, EventType: 1, Daemon: "PBS_Server", Class: "Svr", Object: "PBS_Server", Message: "svr_setjobstate: y"}},
		{"11/22/2026 04:24:09;0001;PBS_Server;Svr;PBS_Server;[continued] tail of it",
			LogRecord{Format: Format25, EventType: 1, Daemon: "PBS_Server", Class: "Svr", Object: "PBS_Server", Message: "tail of it", Continued: true}},
	}
	for _, tc := range cases {
		got, err := ParseLogLine(tc.line, time.UTC)
		if err != nil {
			t.Fatalf("%s: %v", tc.line, err)
		}
		got.Time = time.Time{}
		if got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.line, got, tc.want)
		}
	}
}

// Log times are local time of the server: the configured location decides
// the instant.
func TestParseLogLineLocation(t *testing.T) {
	loc := time.FixedZone("MSK", 3*3600)
	rec, err := ParseLogLine("11/22/2026 03:11:41.439;08;PBS_Server.1;Job;0.vm;x", loc)
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 11, 22, 0, 11, 41, 439e6, time.UTC)
	if !rec.Time.Equal(want) || rec.Time.Location() != time.UTC {
		t.Fatalf("got %v, want %v", rec.Time, want)
	}
}

func TestParseLogLineRejects(t *testing.T) {
	bad := []string{
		"", "garbage", "11/22/2026 03:11:41;0008;PBS_Server;Job;0.vm",
		"13/22/2026 03:11:41;0008;PBS_Server;Job;0.vm;x",
		"11/22/2026 03:11:41;zz;PBS_Server;Job;0.vm;x",
		"11/22/2026 03:11:41.12;08;PBS_Server.1;Job;0.vm;x",
		"11/22/2026 03:11:41.123;08;PBS_Server.x;Job;0.vm;x",
		"11/22/2026 03:11:41;0008;;Job;0.vm;x",
	}
	for _, line := range bad {
		if _, err := ParseLogLine(line, time.UTC); err == nil || !strings.Contains(err.Error(), "malformed") {
			t.Errorf("%q: got %v", line, err)
		}
	}
}
