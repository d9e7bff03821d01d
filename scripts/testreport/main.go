// Command testreport reads `go test -json` on standard input and prints
// what a person reading a CI log needs: each package's result as it
// finishes (ok/FAIL/no tests, its time), the output of every failed test
// and of a package that failed outside its tests (a panic, a build
// error), and — written to the file named by -summary, for
// scripts/test.sh to print at the very end of `make test` — every
// package's time (slowest first) and every skipped test with its reason.
// It exits 1 when a package or a test failed, or when the stream says
// nothing at all (go test did not run).
//
//	go test -json ./... | go run ./scripts/testreport -summary FILE
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	summary := flag.String("summary", "", "write the per-package times and the skipped tests to this file (default: standard output, at the end)")
	flag.Parse()
	r := newReport(os.Stdout)
	if err := r.read(os.Stdin); err != nil {
		fmt.Fprintf(os.Stderr, "testreport: %v\n", err)
		os.Exit(1)
	}
	var w io.Writer = os.Stdout
	if *summary != "" {
		f, err := os.Create(*summary)
		if err != nil {
			fmt.Fprintf(os.Stderr, "testreport: %v\n", err)
			os.Exit(1)
		}
		defer f.Close()
		w = f
	}
	r.summary(w)
	if !r.ok() {
		os.Exit(1)
	}
}
