package maui

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
)

// BenchmarkParseWorkload2000 parses Maui's own 2,000-job simstat.out.
func BenchmarkParseWorkload2000(b *testing.B) {
	data := readFixture(b, "sim5/simstat.exact2000.out.gz")
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ParseWorkload(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSplitOnlyBaseline only splits the same file into fields: the
// floor any parser of it pays.
func BenchmarkSplitOnlyBaseline(b *testing.B) {
	data := readFixture(b, "sim5/simstat.exact2000.out.gz")
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		sc := bufio.NewScanner(bytes.NewReader(data))
		n := 0
		for sc.Scan() {
			n += len(strings.Fields(sc.Text()))
		}
		if n == 0 {
			b.Fatal("empty")
		}
	}
}

// BenchmarkBuildTraces2000 turns a 2,000-job, 64-node snapshot into traces.
func BenchmarkBuildTraces2000(b *testing.B) {
	recs, err := ParseWorkload(bytes.NewReader(readFixture(b, "sim5/workload2000.trace.gz")))
	if err != nil {
		b.Fatal(err)
	}
	snap := snapshotFromRecords(recs, 64, 8)
	for b.Loop() {
		if _, err := BuildTraces(snap, TraceOptions{Now: 1795317480}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseDiagnoseRes(b *testing.B) {
	data := readFixture(b, "sim2-setres/35_diagnose_r_after.out")
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ParseDiagnoseRes(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}
