package maui

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"
)

// A live capture (testdata/live-fairshare/README.md): three intervals
// with usage, floors, ceilings and targets, '*' on shares off target.
func TestParseDiagnoseFairshareLive(t *testing.T) {
	d, err := ParseDiagnoseFairshare(bytes.NewReader(readFixture(t, "live-fairshare/diagnose_f.out")))
	if err != nil {
		t.Fatal(err)
	}
	if d.Depth != 8 || d.Interval != 120 || d.Decay != 0.8 || d.Policy != "DEDICATEDPS" {
		t.Errorf("header %+v", d)
	}
	if !reflect.DeepEqual(d.Columns, []int{0, 1, 2}) || !reflect.DeepEqual(d.Weights, []float64{1, 0.8, 0.64}) ||
		!reflect.DeepEqual(d.TotalHours, []float64{0.1, 0.2, 0.1}) {
		t.Errorf("columns %v weights %v totals %v", d.Columns, d.Weights, d.TotalHours)
	}
	want := []FSDiagCred{
		{Kind: "USER", Name: "carol", Share: 14.67, Target: 10, Mode: "+", HasTarget: true, Usage: []float64{25.79, 13.05, -1}},
		{Kind: "USER", Name: "alice", Off: true, Share: 65.89, Target: 40, HasTarget: true, Usage: []float64{62.89, 73.53, 50}},
		{Kind: "USER", Name: "bob", Share: 19.44, Target: 20, Mode: "-", HasTarget: true, Usage: []float64{11.33, 13.42, 50}},
		{Kind: "GROUP", Name: "carol", Share: 14.67, Usage: []float64{25.79, 13.05, -1}},
		{Kind: "GROUP", Name: "alice", Share: 65.89, Usage: []float64{62.89, 73.53, 50}},
		{Kind: "GROUP", Name: "bob", Off: true, Share: 19.44, Target: 30, HasTarget: true, Usage: []float64{11.33, 13.42, 50}},
		{Kind: "CLASS", Name: "batch", Share: 100, Usage: []float64{100, 100, 100}},
	}
	if !reflect.DeepEqual(d.Creds, want) {
		t.Errorf("creds:\n%+v\nwant:\n%+v", d.Creds, want)
	}
}

// Before any usage: no interval columns, every share 0.
func TestParseDiagnoseFairshareStart(t *testing.T) {
	d, err := ParseDiagnoseFairshare(bytes.NewReader(readFixture(t, "live-fairshare/diagnose_f_start.out")))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Columns) != 0 || len(d.TotalHours) != 0 || len(d.Creds) != 4 || d.Creds[3].Kind != "GROUP" || d.Creds[3].Target != 30 {
		t.Errorf("%+v", d)
	}
}

// Maui's files hold exactly what diagnose -f shows rounded: a past
// interval's share is the credential's usage over the total ("sched").
func TestParseFSFileMatchesDiagnose(t *testing.T) {
	d, err := ParseDiagnoseFairshare(bytes.NewReader(readFixture(t, "live-fairshare/diagnose_f.out")))
	if err != nil {
		t.Fatal(err)
	}
	// diagnose_f.out was taken in the interval starting at 1795624080
	for col, file := range map[int]string{1: "FS.1795623960", 2: "FS.1795623840"} {
		f, err := ParseFSFile(bytes.NewReader(readFixture(t, "live-fairshare/"+file)))
		if err != nil {
			t.Fatal(err)
		}
		if f.Duration != 120 || f.Starting == "" {
			t.Errorf("%s header %+v", file, f)
		}
		usage, total := map[string]float64{}, 0.0
		for _, r := range f.Rows {
			if r.Type == "sched" {
				total = r.Usage
			}
			usage[r.Type+"/"+r.Name] = r.Usage
		}
		if math.Abs(d.TotalHours[col]-total/3600) > 0.05 {
			t.Errorf("%s: total %v s, diagnose -f %v h", file, total, d.TotalHours[col])
		}
		for _, c := range d.Creds {
			got := usage[strings.ToLower(c.Kind)+"/"+c.Name] / total * 100
			if c.Usage[col] < 0 && got == 0 {
				continue
			}
			if math.Abs(got-c.Usage[col]) > 0.005 {
				t.Errorf("%s %s %s: %.4f %% from the file, diagnose -f %.2f", file, c.Kind, c.Name, got, c.Usage[col])
			}
		}
	}
}

func TestParseFairshareErrors(t *testing.T) {
	head := "FairShare Information\n\nDepth: 8 intervals   Interval Length: 00:02:00   Decay Rate: 0.80\n\nFS Policy: DEDICATEDPS\n"
	cols := "FSInterval        %     Target       0\n"
	for _, c := range []struct{ name, in string }{
		{"not diagnose -f", "Diagnosing Reservations\n"},
		{"empty", ""},
		{"no header", "FairShare Information\n"},
		{"bad depth", "FairShare Information\nDepth: x intervals   Interval Length: 00:02:00   Decay Rate: 0.80\nFS Policy: NONE\n"},
		{"bad interval", "FairShare Information\nDepth: 8 intervals   Interval Length: 0   Decay Rate: 0.80\nFS Policy: NONE\n"},
		{"row before kind", head + cols + "alice 1.00 ------- 1.00\n"},
		{"short row", head + cols + "USER\n-------------\nalice 1.00 -------\n"},
		{"bad share", head + cols + "USER\n-------------\nalice x ------- 1.00\n"},
		{"bad target", head + cols + "USER\n-------------\nalice 1.00 1.0+- 1.00\n"},
		{"decreasing columns", head + "FSInterval        %     Target       1       0\n"},
		{"weights off", head + cols + "FSWeight       ------- -------  1.0000  0.8000\n"},
	} {
		if _, err := ParseDiagnoseFairshare(strings.NewReader(c.in)); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	for _, in := range []string{"# FS Data File (Duration: x seconds)\n", "node n01 12.0\n"} {
		if _, err := ParseFSFile(strings.NewReader(in)); err == nil {
			t.Errorf("FS file %q: no error", in)
		}
	}
	// what Maui skips, the parser skips
	f, err := ParseFSFile(strings.NewReader("user alice\nuser bob x\nTOTAL all 10.5 # the total\n"))
	if err != nil || len(f.Rows) != 1 || f.Rows[0] != (FSRow{Type: "sched", Name: "all", Usage: 10.5}) {
		t.Errorf("rows %+v, %v", f.Rows, err)
	}
}

// diagnose -f -v at depth 8: every interval shown, credentials without
// usage too (DEFAULT, NOGROUP, accounts), the ACCT header.
func TestParseDiagnoseFairshareVerbose(t *testing.T) {
	d, err := ParseDiagnoseFairshare(bytes.NewReader(readFixture(t, "live-fairshare/diagnose_f_v.out")))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Columns) != 8 || d.Columns[7] != 7 || math.Abs(d.Weights[7]-0.2097) > 1e-9 || len(d.Creds) != 16 {
		t.Fatalf("columns %v weights %v, %d credentials", d.Columns, d.Weights, len(d.Creds))
	}
	kinds := map[string]int{}
	for _, c := range d.Creds {
		kinds[c.Kind]++
	}
	if kinds["USER"] != 5 || kinds["GROUP"] != 6 || kinds["ACCT"] != 3 || kinds["CLASS"] != 2 {
		t.Errorf("kinds %v", kinds)
	}
	// the shares are what Maui's priority used at that moment: job 29
	// (alice, target 40, FSUSERWEIGHT 10) has FS User -43.8 in diagnose -p
	a := d.Creds[1]
	if a.Name != "alice" || a.Share != 44.38 {
		t.Fatalf("second user %+v", a)
	}
	p := string(readFixture(t, "live-fairshare/diagnose_p.out"))
	want := math.Round(10*(a.Target-a.Share)*10) / 10
	if !strings.Contains(p, "\n29 ") || !strings.Contains(p, "78.9(-43.8:") || want != -43.8 {
		t.Errorf("diagnose -p does not show job 29's FS user factor %.1f", want)
	}
}
