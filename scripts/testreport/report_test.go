package main

import (
	"bytes"
	"strings"
	"testing"
)

// stream is a `go test -json` run as test2json writes it: a package that
// passes with a skipped test, one whose test fails, one without tests and
// one that does not build.
const stream = `{"Action":"start","Package":"lookahead/a"}
{"Action":"run","Package":"lookahead/a","Test":"TestLive"}
{"Action":"output","Package":"lookahead/a","Test":"TestLive","Output":"=== RUN   TestLive\n"}
{"Action":"output","Package":"lookahead/a","Test":"TestLive","Output":"    live_test.go:12: needs root: slurmd launches jobs as their users\n"}
{"Action":"output","Package":"lookahead/a","Test":"TestLive","Output":"--- SKIP: TestLive (0.00s)\n"}
{"Action":"skip","Package":"lookahead/a","Test":"TestLive","Elapsed":0}
{"Action":"run","Package":"lookahead/a","Test":"TestOK"}
{"Action":"output","Package":"lookahead/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"pass","Package":"lookahead/a","Test":"TestOK","Elapsed":0.5}
{"Action":"pass","Package":"lookahead/a","Elapsed":1.5}
{"Action":"run","Package":"lookahead/b","Test":"TestBad"}
{"Action":"output","Package":"lookahead/b","Test":"TestBad","Output":"    b_test.go:7: got 2, want 3\n"}
{"Action":"fail","Package":"lookahead/b","Test":"TestBad","Elapsed":0.1}
{"Action":"output","Package":"lookahead/b","Output":"FAIL\n"}
{"Action":"fail","Package":"lookahead/b","Elapsed":12.25}
{"Action":"skip","Package":"lookahead/c","Elapsed":0}
{"ImportPath":"lookahead/d","Action":"build-output","Output":"d/d.go:3:1: syntax error\n"}
{"ImportPath":"lookahead/d","Action":"build-fail"}
{"Action":"fail","Package":"lookahead/d","Elapsed":0,"FailedBuild":"lookahead/d"}
`

func TestReportLiveAndSummary(t *testing.T) {
	var live, sum bytes.Buffer
	r := newReport(&live)
	if err := r.read(strings.NewReader("go: downloading x v1\n" + stream)); err != nil {
		t.Fatal(err)
	}
	r.summary(&sum)
	for _, want := range []string{"go: downloading x v1\n", "ok   lookahead/a 1.5s\n",
		"--- FAIL: lookahead/b TestBad (0.10s)\n    b_test.go:7: got 2, want 3\n", "FAIL lookahead/b 12.2s\n",
		"?    lookahead/c [no test files]\n", "d/d.go:3:1: syntax error\n", "FAIL lookahead/d 0.0s\n"} {
		if !strings.Contains(live.String(), want) {
			t.Errorf("live output lacks %q:\n%s", want, live.String())
		}
	}
	for _, want := range []string{
		"   12.2s  FAIL lookahead/b\n     1.5s  ok   lookahead/a\n", // slowest first
		"in 3 packages with tests", "1 without tests",
		"1 skipped tests", "SKIP lookahead/a TestLive: live_test.go:12: needs root: slurmd launches jobs as their users\n",
		"2 failed", "FAIL lookahead/b TestBad", "FAIL lookahead/d \n"} {
		if !strings.Contains(sum.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum.String())
		}
	}
	if r.ok() {
		t.Error("a run with failures is ok")
	}
}

func TestReportOfNothingIsAFailure(t *testing.T) {
	r := newReport(&bytes.Buffer{})
	if err := r.read(strings.NewReader("go: cannot find main module\n")); err != nil {
		t.Fatal(err)
	}
	if r.ok() {
		t.Error("no test events at all: ok")
	}
}

// A test still running when its package died (a panic, the timeout) has
// its output shown.
func TestReportShowsTestsOfADeadPackage(t *testing.T) {
	var live bytes.Buffer
	r := newReport(&live)
	in := `{"Action":"run","Package":"p","Test":"TestHang"}
{"Action":"output","Package":"p","Test":"TestHang","Output":"    waiting for the broker\n"}
{"Action":"output","Package":"p","Output":"panic: test timed out after 15m0s\n"}
{"Action":"fail","Package":"p","Elapsed":900}
`
	if err := r.read(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--- unfinished: p TestHang\n    waiting for the broker\n", "panic: test timed out", "FAIL p 900.0s"} {
		if !strings.Contains(live.String(), want) {
			t.Errorf("live output lacks %q:\n%s", want, live.String())
		}
	}
}
