package maui

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seed adds every fixture file matching the globs to f's corpus.
func seed(f *testing.F, globs ...string) {
	for _, g := range globs {
		files, _ := filepath.Glob(filepath.Join("testdata", g))
		for _, file := range files {
			if b, err := os.ReadFile(file); err == nil {
				f.Add(b)
			}
		}
	}
}

func FuzzParseShowres(f *testing.F) {
	seed(f, "*/*showres*.out", "*/*_showres.out")
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := ParseShowres(bytes.NewReader(b))
		if err == nil {
			for _, r := range rows {
				if r.ID == "" {
					t.Fatalf("row without id: %+v", r)
				}
			}
		}
		_, _ = ParseShowresNodes(bytes.NewReader(b))
	})
}

func FuzzParseDiagnoseRes(f *testing.F) {
	seed(f, "*/*diagnose_r*.out", "*/*_diagnose.out")
	f.Fuzz(func(t *testing.T, b []byte) {
		ds, err := ParseDiagnoseRes(bytes.NewReader(b))
		if err == nil {
			for _, d := range ds {
				_ = perNode(d)
				for _, e := range append(d.ACL, d.CL...) {
					// The name keeps no flag; a restored ACL ("alice++*")
					// keeps its extra '+' in the name.
					if e.Type == "" || e.Name == "" || strings.Trim(e.Mod, "+-=^*!") != "" ||
						strings.ContainsAny(e.Name[len(e.Name)-1:], "^*!") {
						t.Fatalf("ACL entry %+v: empty, a flag left in its name, or not a modifier", e)
					}
				}
				_, _, _, _ = aclIdentity(d)
			}
		}
	})
}

func FuzzParseReplies(f *testing.F) {
	seed(f, "*/*setres*.out", "*/*releaseres*.out")
	f.Fuzz(func(t *testing.T, b []byte) {
		if r, err := ParseSetres(bytes.NewReader(b)); err == nil && r.ID == "" {
			t.Fatal("setres reply without id")
		}
		_, _ = ParseReleaseres(bytes.NewReader(b))
	})
}

func FuzzParseShowq(f *testing.F) {
	seed(f, "*/showq*.out", "*/*_showq*.out")
	f.Fuzz(func(t *testing.T, b []byte) {
		if q, err := ParseShowq(bytes.NewReader(b)); err == nil && q.Total != len(q.Active)+len(q.Idle)+len(q.Blocked) {
			t.Fatalf("accepted with a wrong total: %+v", q)
		}
		_, _ = ParseShowqIdle(bytes.NewReader(b))
	})
}

func FuzzParseWorkload(f *testing.F) {
	seed(f, "sim1/stats/simstat.out", "sim1/traces/workload.trace", "sim4/traces/workload.trace")
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, err := ParseWorkload(bytes.NewReader(b))
		if err == nil {
			for _, r := range recs {
				if len(r.Fields) != workloadFieldCount {
					t.Fatalf("record with %d fields", len(r.Fields))
				}
			}
		}
	})
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"00:00:00", "-00:00:33", "1:02:00:00", "99:99:99", "+1", "INFINITE"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseDuration(s)
		if err == nil && !strings.HasPrefix(s, "-") && v >= 0 {
			back, err := ParseDuration(FormatDuration(v))
			if err != nil || back != v {
				t.Fatalf("%q -> %d -> %q -> %d %v", s, v, FormatDuration(v), back, err)
			}
		}
	})
}

func FuzzParseDiagnoseFairshare(f *testing.F) {
	seed(f, "live-fairshare/diagnose_f*.out")
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := ParseDiagnoseFairshare(bytes.NewReader(b))
		if err != nil {
			return
		}
		if d.Interval <= 0 || len(d.Weights) > len(d.Columns) || len(d.TotalHours) > len(d.Columns) {
			t.Fatalf("diagnose -f %+v: interval not positive or more values than columns", d)
		}
		for _, c := range d.Creds {
			if c.Name == "" || len(c.Usage) != len(d.Columns) || !fsKinds[c.Kind] {
				t.Fatalf("credential %+v: no name, a usage per column or kind", c)
			}
		}
	})
}

func FuzzParseFSFile(f *testing.F) {
	seed(f, "live-fairshare/FS.*")
	f.Fuzz(func(t *testing.T, b []byte) {
		ff, err := ParseFSFile(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, r := range ff.Rows {
			if !fsFileTypes[r.Type] || r.Name == "" {
				t.Fatalf("row %+v: unknown type or no name", r)
			}
		}
	})
}

// FuzzResourceNodes: the oracle's reader of a resource trace agrees with
// ResourceProcs on every input both accept, and names every node.
func FuzzResourceNodes(f *testing.F) {
	seed(f, "sim5/resource64.trace", "*/traces/resource.trace")
	f.Fuzz(func(t *testing.T, b []byte) {
		nodes, err := resourceNodes(b)
		procs, perr := ResourceProcs(b)
		if (err == nil) != (perr == nil) {
			t.Fatalf("resourceNodes %v, ResourceProcs %v", err, perr)
		}
		if err != nil {
			return
		}
		sum := 0
		for _, n := range nodes {
			if n.Name == "" {
				t.Fatalf("node without name: %+v", n)
			}
			sum += n.Procs
		}
		if sum != procs {
			t.Fatalf("%d processors, ResourceProcs %d", sum, procs)
		}
	})
}
