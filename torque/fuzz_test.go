package torque

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"lookahead/forecast"
)

func seedLines(f *testing.F, sub string) {
	for _, v := range versions {
		data, err := os.ReadFile(filepath.Join("testdata", v.dir, sub, "20261122"))
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			f.Add(string(line))
		}
	}
}

func FuzzParseLogLine(f *testing.F) {
	seedLines(f, "server_logs")
	f.Add("11/22/2026 04:24:09;0001;PBS_Server;Svr;PBS_Server;[continued] x")
	f.Fuzz(func(t *testing.T, line string) {
		rec, err := ParseLogLine(line, time.UTC)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if rec.Time.IsZero() || rec.Format == FormatUnknown {
			t.Fatalf("accepted %q as %+v", line, rec)
		}
		LogEvent(rec) // must not panic
	})
}

func FuzzParseAcctLine(f *testing.F) {
	seedLines(f, "accounting")
	f.Fuzz(func(t *testing.T, line string) {
		rec, err := ParseAcctLine(line, time.UTC)
		if err != nil {
			return
		}
		if rec.Job == "" || rec.Time.IsZero() {
			t.Fatalf("accepted %q as %+v", line, rec)
		}
		ev := AcctEvent(rec)
		if ev.Kind == "" {
			t.Fatalf("no kind for %q", line)
		}
		if h, ok := rec.Fields["exec_host"]; ok {
			ParseExecHost(h)
		}
	})
}

func seedXML(f *testing.F, prefix string) {
	for _, d := range phaseDirs {
		files, _ := filepath.Glob(filepath.Join("testdata", d, "*.out"))
		for _, p := range files {
			data, err := os.ReadFile(p)
			if err == nil && bytes.HasPrefix(data, []byte("<Data>")) && bytes.Contains(data, []byte(prefix)) {
				f.Add(data)
			}
		}
	}
}

func FuzzParseQstatXML(f *testing.F) {
	seedXML(f, "<Job>")
	if data, err := os.ReadFile(filepath.Join(liveFeatures, "qstat-f-t-bigmem.xml")); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		jobs, err := ParseQstatXML(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, j := range jobs {
			if j.ID == "" || j.State == "" || j.Procs < 1 {
				t.Fatalf("accepted job %+v", j)
			}
		}
	})
}

func FuzzParsePbsnodesXML(f *testing.F) {
	seedXML(f, "<Node>")
	for _, name := range []string{"pbsnodes-3jobs.xml", "pbsnodes-gap.xml"} {
		if data, err := os.ReadFile(filepath.Join(live, name)); err == nil {
			f.Add(data)
		}
	}
	if data, err := os.ReadFile(filepath.Join(liveFeatures, "pbsnodes-bigmem.xml")); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		nodes, err := ParsePbsnodesXML(bytes.NewReader(data))
		var sk *SkippedError
		if err != nil && !errors.As(err, &sk) {
			return
		}
		for _, n := range nodes {
			if n.Name == "" || len(n.State) == 0 || n.Procs < 0 {
				t.Fatalf("accepted node %+v", n)
			}
		}
		if sk != nil && len(sk.Items) == 0 {
			t.Fatal("skipped error without items")
		}
	})
}

// FuzzParseNodeJobs: any input gives jobs with ids and in-range slots, or
// names what it skipped; skipping never loses a well-formed item.
func FuzzParseNodeJobs(f *testing.F) {
	for _, s := range []string{"0-1/42.vm,4-5/44.vm,2-3,6-7/45.vm", "0-1,6-7/9.vm", "0/9.vm",
		"0/0.vm, 1/3[0].vm", "0-1/5.vm,2-3/4.vm", "2-3", "0-1/", "3-1/4.vm", "0//", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		jobs, err := ParseNodeJobs(s)
		var it *ItemError
		if err != nil && (!errors.As(err, &it) || it.Item == "") {
			t.Fatalf("%q: error %v is not an ItemError naming an item", s, err)
		}
		for _, j := range jobs {
			if j.Job == "" || strings.ContainsAny(j.Job, ",/") || len(j.Slots) == 0 {
				t.Fatalf("%q: accepted %+v", s, j)
			}
		}
		if good, bad := ParseNodeJobs(s + ",0/zz.vm"); !slices.ContainsFunc(good, func(j forecast.NodeJob) bool { return j.Job == "zz.vm" }) {
			t.Fatalf("%q + a good item: %v, %v", s, good, bad)
		}
	})
}

func FuzzParseExecHost(f *testing.F) {
	for _, s := range []string{"vm/2-3,6-7", "vm/0-3", "vm/0+vm/1", "vm/2+vm/1", "n1/0-1,3+n2/0", "vm/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hosts, err := ParseExecHost(s)
		if err != nil {
			return
		}
		for _, h := range hosts {
			if h.Node == "" || h.Procs < 1 {
				t.Fatalf("%q: accepted %+v", s, h)
			}
		}
	})
}

func FuzzReadSchedCmd(f *testing.F) {
	for _, b := range [][]byte{{0, 0, 0, 10}, {0, 0, 0, 1}, {0, 0}, {}, []byte("GET /")} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		code, err := ReadSchedCmd(bytes.NewReader(data))
		if err == nil && (!code.Known() || len(data) < 4) {
			t.Fatalf("accepted %x as %v", data, code)
		}
	})
}
