package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	ImportPath  string // build-output and build-fail events
	FailedBuild string // a package's fail event when its build failed
}

// key is a test of a package ("" for the package itself).
type key struct{ pkg, test string }

// pkgResult is a finished package.
type pkgResult struct {
	name    string
	action  string // pass, fail, skip (no test files)
	elapsed float64
}

// skipped is a skipped test and why.
type skipped struct {
	pkg, test, reason string
}

// report accumulates the stream. Not safe for concurrent use.
type report struct {
	live     io.Writer
	output   map[key][]string // output of tests still running
	build    map[string][]string
	packages []pkgResult
	skips    []skipped
	failed   []key
	events   int
}

func newReport(live io.Writer) *report {
	return &report{live: live, output: map[key][]string{}, build: map[string][]string{}}
}

// read consumes the stream; lines that are not JSON (go's own messages)
// are passed through.
func (r *report) read(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(r.live, "%s\n", line)
			continue
		}
		r.events++
		r.add(e)
	}
	return sc.Err()
}

func (r *report) add(e event) {
	k := key{e.Package, e.Test}
	switch e.Action {
	case "build-output":
		r.build[e.ImportPath] = append(r.build[e.ImportPath], e.Output)
	case "output":
		r.output[k] = append(r.output[k], e.Output)
	case "pass":
		delete(r.output, k)
		if e.Test == "" {
			r.finish(e, "ok")
		}
	case "skip":
		if e.Test != "" {
			r.skips = append(r.skips, skipped{e.Package, e.Test, reason(r.output[k])})
		} else {
			r.finish(e, "?")
		}
		delete(r.output, k)
	case "fail":
		r.fail(e, k)
	}
}

func (r *report) fail(e event, k key) {
	if e.Test != "" {
		r.failed = append(r.failed, k)
		fmt.Fprintf(r.live, "--- FAIL: %s %s (%.2fs)\n%s", e.Package, e.Test, e.Elapsed, strings.Join(r.output[k], ""))
		delete(r.output, k)
		return
	}
	if len(r.failed) == 0 || r.failed[len(r.failed)-1].pkg != e.Package {
		r.failed = append(r.failed, k) // failed outside its tests
	}
	if out := r.build[e.FailedBuild]; len(out) > 0 {
		fmt.Fprint(r.live, strings.Join(out, ""))
	}
	for _, open := range r.openTests(e.Package) { // running when the package died (a panic, the timeout)
		fmt.Fprintf(r.live, "--- unfinished: %s %s\n%s", e.Package, open.test, strings.Join(r.output[open], ""))
		delete(r.output, open)
	}
	fmt.Fprint(r.live, strings.Join(r.output[k], ""))
	delete(r.output, k)
	r.finish(e, "FAIL")
}

// openTests are pkg's tests that started and did not end, by name.
func (r *report) openTests(pkg string) []key {
	var out []key
	for k := range r.output {
		if k.pkg == pkg && k.test != "" {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b key) int { return strings.Compare(a.test, b.test) })
	return out
}

func (r *report) finish(e event, mark string) {
	action := map[string]string{"ok": "pass", "?": "skip", "FAIL": "fail"}[mark]
	r.packages = append(r.packages, pkgResult{e.Package, action, e.Elapsed})
	if mark == "?" {
		fmt.Fprintf(r.live, "?    %s [no test files]\n", e.Package)
		return
	}
	fmt.Fprintf(r.live, "%-4s %s %.1fs\n", mark, e.Package, e.Elapsed)
}

// reason is what a skipped test logged, without go test's own lines.
func reason(lines []string) string {
	var out []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return "(no reason given)"
	}
	return strings.Join(out, " | ")
}

func (r *report) ok() bool { return r.events > 0 && len(r.failed) == 0 }

// summary writes the per-package times, slowest first, the skipped tests
// with their reasons, and the failures once more.
func (r *report) summary(w io.Writer) {
	pkgs := slices.Clone(r.packages)
	slices.SortStableFunc(pkgs, func(a, b pkgResult) int { return cmp.Compare(b.elapsed, a.elapsed) })
	total, none := 0.0, 0
	fmt.Fprintf(w, "-- go test: time per package (slowest first)\n")
	for _, p := range pkgs {
		if p.action == "skip" {
			none++
			continue
		}
		total += p.elapsed
		mark := "ok"
		if p.action == "fail" {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "%8.1fs  %-4s %s\n", p.elapsed, mark, p.name)
	}
	fmt.Fprintf(w, "%8.1fs  in %d packages with tests (summed; they run in parallel), %d without tests\n", total, len(pkgs)-none, none)
	fmt.Fprintf(w, "-- go test: %d skipped tests (what did not run, and why)\n", len(r.skips))
	for _, s := range r.skips {
		fmt.Fprintf(w, "SKIP %s %s: %s\n", s.pkg, s.test, s.reason)
	}
	if r.events == 0 {
		fmt.Fprintf(w, "-- go test: no test events at all (did go test run?)\n")
	}
	if len(r.failed) > 0 {
		fmt.Fprintf(w, "-- go test: %d failed\n", len(r.failed))
		for _, f := range r.failed {
			fmt.Fprintf(w, "FAIL %s %s\n", f.pkg, f.test)
		}
	}
}
