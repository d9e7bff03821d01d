package maui

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func readFixture(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]int64{
		"00:00:00": 0, "2:00:00": 7200, "-00:00:33": -33, "00:30:00": 1800, "10:00:00": 36000,
		"1:02:00:00": 93600, "59": 59, "1:00": 60, "100:00:00": 360000,
	} {
		got, err := ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %d, %v; want %d", in, got, err, want)
		}
		if want >= 0 {
			back, err := ParseDuration(FormatDuration(want))
			if err != nil || back != want {
				t.Errorf("round trip %d -> %q -> %d, %v", want, FormatDuration(want), back, err)
			}
		}
	}
	for _, bad := range []string{"", "-", "a:00", "1:2:3:4:5", "1::0", "+5", "INFINIT"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
}

func TestParseClockYearInference(t *testing.T) {
	ref := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	got, err := ParseClock("Sun Nov 22 03:03:00", time.UTC, ref)
	if err != nil || !got.Equal(time.Date(2026, 11, 22, 3, 3, 0, 0, time.UTC)) {
		t.Fatalf("got %v, %v", got, err)
	}
	// Around new year the stamp belongs to the year nearest the reference.
	got, _ = ParseClock("Thu Jan  1 00:10:00", time.UTC, time.Date(2026, 12, 31, 23, 50, 0, 0, time.UTC))
	if got.Year() != 2027 {
		t.Fatalf("new year: got %v", got)
	}
	got, err = ParseClock("Sun Nov 22 03:03:00 2026", time.UTC, time.Time{})
	if err != nil || got.Year() != 2026 {
		t.Fatalf("with year: %v %v", got, err)
	}
}

func TestParseShowresFixtures(t *testing.T) {
	cases := []struct {
		file  string
		n     int
		check func(t *testing.T, rows []ShowresRow)
	}{
		{"sim2-setres/03_showres.out", 4, func(t *testing.T, rows []ShowresRow) {
			want := ShowresRow{ID: "gridres1.0", Type: "User", State: "-", Start: 0, End: 3600, Duration: 3600, Nodes: 1, Procs: 2, StartTime: "Sun Nov 22 03:03:00"}
			if rows[3] != want {
				t.Errorf("row 3 = %+v, want %+v", rows[3], want)
			}
			if rows[0].ID != "r01" || rows[0].Nodes != 6 || rows[0].Procs != 12 || rows[0].State != "R" {
				t.Errorf("row 0 = %+v", rows[0])
			}
		}},
		{"sim2-setres/05_showres_v.out", 4, func(t *testing.T, rows []ShowresRow) {
			if rows[1].StartTime != "Sun Nov 22 05:03:00 2026" || rows[1].Start != 7200 {
				t.Errorf("row 1 = %+v", rows[1])
			}
		}},
		{"sim2-setres/09_showres_gridres1.out", 0, nil},
		{"sim2-setres/12_showres_xml.out", 4, nil},
		{"sim2-setres/15_showres_gridres1.0.out", 1, nil},
		{"sim2-setres/33_showres_after.out", 15, func(t *testing.T, rows []ShowresRow) {
			if rows[11].ID != "abstime.0" || rows[11].Start != 6*3600+57*60+40 || rows[11].StartTime != "Sun Nov 22 10:00:40" {
				t.Errorf("abstime row = %+v", rows[11])
			}
		}},
		{"sim2-setres/47_showres_after_release.out", 5, nil},
		{"phaseB/11_showres.out", 4, func(t *testing.T, rows []ShowresRow) {
			if rows[3].ID != "grid1.0" || rows[3].Start != -33 || rows[3].End != 9*60+27 || rows[3].Procs != 4 {
				t.Errorf("grid1.0 row = %+v", rows[3])
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			rows, err := ParseShowres(bytes.NewReader(readFixture(t, c.file)))
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != c.n {
				t.Fatalf("%d rows, want %d", len(rows), c.n)
			}
			if c.check != nil {
				c.check(t, rows)
			}
		})
	}
}

func TestParseShowresRejects(t *testing.T) {
	full := string(readFixture(t, "sim2-setres/03_showres.out"))
	trunc := strings.Replace(full, "gridres1.0          User -    00:00:00     1:00:00     1:00:00    1/2    Sun Nov 22 03:03:00\n", "", 1)
	for name, in := range map[string]string{
		"truncated":   trunc,
		"not showres": string(readFixture(t, "sim2-setres/04_showres_n.out")),
		"bad N/P":     strings.Replace(full, "1/2 ", "1-2 ", 1),
		"empty":       "",
	} {
		if _, err := ParseShowres(strings.NewReader(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestParseShowresNodesFixtures(t *testing.T) {
	sn, err := ParseShowresNodes(bytes.NewReader(readFixture(t, "sim2-setres/34_showres_n_after.out")))
	if err != nil {
		t.Fatal(err)
	}
	if len(sn.Rows) != 33 || sn.At != "Sun Nov 22 03:03:00" {
		t.Fatalf("%d rows at %q", len(sn.Rows), sn.At)
	}
	want := ShowresNodeRow{Node: "n07", Type: "User", ID: "abstime.0", JobState: "N/A", Tasks: 1, Start: 25060, Duration: 3600, StartTime: "Sun Nov 22 10:00:40"}
	if sn.Rows[21] != want {
		t.Errorf("row 21 = %+v, want %+v", sn.Rows[21], want)
	}
	sn, err = ParseShowresNodes(bytes.NewReader(readFixture(t, "phaseB/12_showres_n.out")))
	if err != nil || len(sn.Rows) != 4 || sn.Rows[0].Start != -33 || sn.Rows[2].JobState != "Idle" {
		t.Fatalf("phaseB: %+v %v", sn, err)
	}
	sn, err = ParseShowresNodes(bytes.NewReader(readFixture(t, "sim2-setres/16_showres_n_gridres1.0.out")))
	if err != nil || len(sn.Rows) != 1 || sn.Rows[0].ID != "gridres1.0" {
		t.Fatalf("single: %+v %v", sn, err)
	}
	if _, err := ParseShowresNodes(bytes.NewReader(readFixture(t, "sim2-setres/11_showres_n_gridres1.out"))); err == nil {
		t.Error("empty output of a failed showres -n accepted")
	}
}

func TestParseDiagnoseResFixtures(t *testing.T) {
	ds, err := ParseDiagnoseRes(bytes.NewReader(readFixture(t, "sim2-setres/35_diagnose_r_after.out")))
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 15 {
		t.Fatalf("%d reservations, want 15", len(ds))
	}
	g := ds[3]
	if g.ID != "gridres1.0" || g.Type != "User" || g.Nodes != 1 || g.Tasks != 1 || g.Procs != 2 || g.HostList != "n01" || g.TaskProcs != "[ALL]" {
		t.Errorf("gridres1.0 = %+v", g)
	}
	wantACL := []ACLEntry{{"RES", "gridres1", "="}, {"USER", "griduser", "+"}, {"GROUP", "grid", "+"}, {"ACCT", "gridacct", "+"}}
	if !reflect.DeepEqual(g.ACL, wantACL) {
		t.Errorf("ACL = %+v", g.ACL)
	}
	if !reflect.DeepEqual(g.Flags, []string{"PREEMPTEE"}) {
		t.Errorf("flags = %v", g.Flags)
	}
	w := ds[10] // withdesc.0: -r PROCS=1, TASKS==4
	if w.ID != "withdesc.0" || w.TaskProcs != "1" || w.Procs != 4 || w.HostList != "n08|n07" {
		t.Errorf("withdesc.0 = %+v", w)
	}
	if got := ds[0].ACLNames("JOB"); !reflect.DeepEqual(got, []string{"r01"}) {
		t.Errorf("r01 JOB acl = %v", got)
	}
	pb, err := ParseDiagnoseRes(bytes.NewReader(readFixture(t, "phaseB/17_diagnose_r.out")))
	if err != nil || len(pb) != 4 || pb[0].Start != -33 || len(pb[0].Warnings) != 1 {
		t.Fatalf("phaseB: %+v %v", pb, err)
	}
	if _, err := ParseDiagnoseRes(strings.NewReader("Diagnosing Reservations\nx User DEF 1 2 3 4 5\n")); err == nil {
		t.Error("short row accepted")
	}
}

func TestParseSetresFixtures(t *testing.T) {
	cases := map[string]SetresReply{
		"sim2-setres/01_setres_gridres1.out":        {ID: "gridres1.0", Nodes: 1, Tasks: 2, Hosts: []HostTasks{{"n01", 1}}},
		"sim2-setres/18_setres_hostregex_multi.out": {ID: "gridres3.0", Nodes: 2, Tasks: 4, Hosts: []HostTasks{{"n03", 1}, {"n04", 1}}},
		"sim2-setres/28_setres_resdesc.out":         {ID: "withdesc.0", Nodes: 2, Tasks: 4, Hosts: []HostTasks{{"n08", 2}, {"n07", 2}}},
		"sim2-setres/24_setres_dup_name.out":        {ID: "gridres1.1", Nodes: 1, Tasks: 2, Hosts: []HostTasks{{"n08", 1}}},
		"phaseB/01_setres_grid1.out":                {ID: "grid1.0", Nodes: 1, Tasks: 4, Hosts: []HostTasks{{"vm", 1}}},
	}
	for file, want := range cases {
		got, err := ParseSetres(bytes.NewReader(readFixture(t, file)))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, %v; want %+v", file, got, err, want)
		}
	}
	for _, file := range []string{"sim2-setres/02_setres_gridres2.out", "sim2-setres/19_setres_err_unknown_node.out"} {
		if _, err := ParseSetres(bytes.NewReader(readFixture(t, file))); err == nil {
			t.Errorf("%s: empty stdout of a failed setres accepted", file)
		}
	}
}

func TestClassifySetresFixtures(t *testing.T) {
	for file, want := range map[string]Code{
		"sim2-setres/02_setres_gridres2.err":             CodeNoResources,
		"sim2-setres/19_setres_err_unknown_node.err":     CodeUnknownNode,
		"sim2-setres/21_setres_err_too_many_tasks.err":   CodeNoResources,
		"sim2-setres/22_setres_err_bad_time.err":         CodeBadTime,
		"sim2-setres/23_setres_err_end_before_start.err": CodeBadTime,
		"sim2-setres/26_setres_past_start.err":           CodeBadTime,
		"phaseB/35_setres_err_unknown_host.err":          CodeUnknownNode,
	} {
		if got := classifySetres(readFixture(t, file), nil); got != want {
			t.Errorf("%s: %s, want %s", file, got, want)
		}
	}
}

func TestParseReleaseresFixtures(t *testing.T) {
	cases := map[string][]ReleaseLine{
		"sim2-setres/40_releaseres_overlap1.out":    {{ID: "overlap1.0", Type: "User", Released: true}},
		"sim2-setres/41_releaseres_err_unknown.out": {{ID: "nosuchres.0", Message: "cannot locate reservation 'nosuchres.0'"}},
		"sim2-setres/42_releaseres_basename.out":    {{ID: "baduser", Message: "cannot locate reservation 'baduser'"}},
		"sim2-setres/44_releaseres_jobres.out":      {{ID: "r01", Type: "Job", Released: true}},
		"phaseB/22_releaseres_grid1.out":            {{ID: "grid1.0", Type: "User", Released: true}},
	}
	for file, want := range cases {
		got, err := ParseReleaseres(bytes.NewReader(readFixture(t, file)))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, %v; want %+v", file, got, err, want)
		}
	}
	got, err := ParseReleaseres(bytes.NewReader(readFixture(t, "sim2-setres/46_releaseres_more.out")))
	if err != nil || len(got) != 5 || got[4].ID != "gridres3.0" {
		t.Errorf("multi: %+v %v", got, err)
	}
}

func TestParseShowqFixtures(t *testing.T) {
	q, err := ParseShowq(bytes.NewReader(readFixture(t, "sim1-iter011/showq.out")))
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Active) != 4 || len(q.Idle) != 3 || len(q.Blocked) != 0 || q.Total != 7 {
		t.Fatalf("%+v", q)
	}
	want := QueueJob{Name: "j07", User: "carol", State: "Running", Procs: 2, Time: 600, When: "Sun Nov 22 03:11:24"}
	if q.Active[1] != want {
		t.Errorf("active[1] = %+v", q.Active[1])
	}
	if q.Idle[0].Name != "j04" || q.Idle[0].Procs != 16 || q.Idle[0].Time != 3600 {
		t.Errorf("idle[0] = %+v", q.Idle[0])
	}
	for file, n := range map[string][3]int{
		"sim2-iter008/showq.out":            {3, 4, 0},
		"phaseB/10_showq.out":               {2, 2, 0},
		"phaseB/21_showq_after_45s.out":     {0, 1, 0},
		"phaseB/23_showq_after_release.out": {-1, -1, -1},
	} {
		q, err := ParseShowq(bytes.NewReader(readFixture(t, file)))
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if n[0] >= 0 && (len(q.Active) != n[0] || len(q.Idle) != n[1] || len(q.Blocked) != n[2]) {
			t.Errorf("%s: %d/%d/%d", file, len(q.Active), len(q.Idle), len(q.Blocked))
		}
	}
	trunc := strings.Replace(string(readFixture(t, "sim1-iter011/showq.out")), "j08                    dave       Idle     2     1:00:00  Sun Nov 22 03:00:24\n", "", 1)
	if _, err := ParseShowq(strings.NewReader(trunc)); err == nil {
		t.Error("truncated showq accepted")
	}
}

func TestParseShowqIdleFixtures(t *testing.T) {
	js, err := ParseShowqIdle(bytes.NewReader(readFixture(t, "sim1-iter011/showq_i.out")))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"j04", "j06", "j08"}
	for i, j := range js {
		if j.Name != want[i] || j.Priority != 11 {
			t.Errorf("row %d = %+v", i, j)
		}
	}
	if !js[0].Reserved || js[1].Reserved || js[0].Procs != 16 || js[1].WCLimit != 5400 || js[2].XFactor != 1.2 {
		t.Errorf("rows = %+v", js)
	}
	js, err = ParseShowqIdle(bytes.NewReader(readFixture(t, "sim4-iter000/showq_i.out")))
	if err != nil || len(js) != 1 || js[0].Name != "q2" || js[0].Priority != 1 {
		t.Fatalf("sim4: %+v %v", js, err)
	}
}

func TestParseWorkloadFixtures(t *testing.T) {
	recs, err := ParseWorkload(bytes.NewReader(readFixture(t, "sim1/stats/simstat.out")))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 10 {
		t.Fatalf("%d records", len(recs))
	}
	j04 := recs[9]
	if j04.ID != "j04" || j04.Tasks != 16 || j04.Start != 1795323684 || j04.Completion != 1795326684 || j04.Runtime() != 3000 || len(j04.Hosts) != 8 || j04.Account != "proj3" {
		t.Errorf("j04 = %+v", j04)
	}
	if j08 := recs[6]; !reflect.DeepEqual(j08.HostList, []string{"n08"}) || j08.Flags != "[HOSTLIST]" {
		t.Errorf("j08 = %+v", j08)
	}
	tr, err := ParseWorkload(bytes.NewReader(readFixture(t, "sim1/traces/workload.trace")))
	if err != nil || len(tr) != 10 || !reflect.DeepEqual(tr[7].HostList, []string{"n08", "n08"}) {
		t.Fatalf("trace: %v %v", len(tr), err)
	}
	for name, n := range map[string]int{"sim5/simstat.exact500.out.gz": 500, "sim5/simstat.exact2000.out.gz": 2000, "sim3/simstat.t60.out.gz": 500} {
		recs, err := ParseWorkload(bytes.NewReader(readFixture(t, name)))
		if err != nil || len(recs) != n {
			t.Errorf("%s: %d, %v", name, len(recs), err)
		}
	}
	_, err = ParseWorkload(strings.NewReader("VERSION 240\n"))
	var le *lineError
	if !errors.As(err, &le) || le.line != 1 {
		t.Errorf("version 240: %v", err)
	}
	if _, err := ParseWorkload(strings.NewReader("VERSION 230\nj01 0 4 alice\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("short record: %v", err)
	}
}

// Issue 22.6, captured live (testdata/live-restart): after `schedctl -k`
// and a new start, Maui 3.3.1 restores grid reservations from its
// checkpoint with the affinity read into the name, "USER==alice++*"
// ("alice+"); the parser reads one affinity character, so the restored
// ACL names alice+ and la.acct0+ and no longer looks like the one made.
func TestParseDiagnoseAfterMauiRestart(t *testing.T) {
	read := func(file string) map[string]ResDiag {
		f, err := os.Open("testdata/live-restart/" + file)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		ds, err := ParseDiagnoseRes(f)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]ResDiag{}
		for _, d := range ds {
			out[d.ID] = d
		}
		return out
	}
	before, after := read("01_diagnose_r_before.out")["la.r1.0"], read("02_diagnose_r_after_clean_restart.out")["la.r1.0"]
	u, _, a, b := aclIdentity(before)
	if u != "alice" || a != "proj1" || b != "la.acct0" {
		t.Fatalf("before the restart: user %q account %q bind %q", u, a, b)
	}
	u, _, a, b = aclIdentity(after)
	if u != "alice+" || a != "proj1" || b != "la.acct0+" {
		t.Fatalf("after the restart: user %q account %q bind %q, want alice+ and la.acct0+", u, a, b)
	}
	c := NewClient(nil, ClientConfig{})
	if !c.Bound(after) || !c.Bound(before) {
		t.Fatal("a restored reservation is still lookahead's (its binding account, altered)")
	}
	// The names as made (a binding account a restored reservation still
	// holds), and a restored name is not the name made.
	if MadeName(u) != "alice" || MadeName(b) != "la.acct0" || MadeName("la.acct0++") != "la.acct0" {
		t.Fatalf("names as made: %q %q %q", MadeName(u), MadeName(b), MadeName("la.acct0++"))
	}
	if !Restored("alice", u) || Restored("alice", "alice") || Restored("bob", u) || Restored("", "+") {
		t.Fatal("Restored: alice+ is alice restored; alice, bob and an empty name are not")
	}
}
