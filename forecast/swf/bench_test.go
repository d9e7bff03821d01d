package swf

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"lookahead/forecast/sim"
	"lookahead/internal/cputime"
	"lookahead/internal/testfile"
)

// Whole real traces from the project's shared folder when present.
var benchTraces = []struct{ name, file string }{
	{"CTC", "CTC-SP2-1996-3.1-cln.swf.gz"},
	{"SDSC-SP2", "SDSC-SP2-1998-4.2-cln.swf.gz"},
	{"KTH", "KTH-SP2-1996-2.1-cln.swf.gz"},
	{"HPC2N", "HPC2N-2002-2.2-cln.swf.gz"},
}

func loadShared(b *testing.B, file string) *Trace {
	b.Helper()
	path := findShared(file)
	if d := os.Getenv("LOOKAHEAD_TRACES"); d != "" {
		path = d + "/" + file
	}
	f, err := os.Open(path)
	if err != nil {
		b.Skipf("trace not available: %v", err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	tr, err := Read(z, 0)
	if err != nil {
		b.Fatal(err)
	}
	return tr
}

// findShared looks for shared/traces/file in the parents of the package
// directory (the project's ../shared beside the repository).
func findShared(file string) string {
	dir, err := filepath.Abs(".")
	if err != nil {
		return file
	}
	for {
		p := filepath.Join(dir, "shared", "traces", file)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return file
		}
		dir = parent
	}
}

// BenchmarkReplay replays whole traces; jobs/s is reported per policy.
func BenchmarkReplay(b *testing.B) {
	for _, tc := range benchTraces {
		for _, p := range []sim.Policy{sim.EASY, sim.Conservative} {
			b.Run(tc.name+"/"+p.String(), func(b *testing.B) {
				tr := loadShared(b, tc.file)
				jobs := tr.SimJobs()
				c := sim.PoolCluster(tr.Header.MaxProcs)
				b.ResetTimer()
				cpu0 := cputime.Used()
				for b.Loop() {
					if _, err := sim.RunWith(c, jobs, p, sim.Options{}); err != nil {
						b.Fatal(err)
					}
				}
				reportRates(b, len(jobs), cputime.Used()-cpu0)
			})
		}
	}
}

// BenchmarkReplaySlice runs on the committed slice, for machines without
// the shared traces. It finds the slice from any working directory (a test
// binary run elsewhere) and skips, naming it, when it is not there.
func BenchmarkReplaySlice(b *testing.B) {
	path, err := testfile.Path("CTC-SP2-1996-3.1-cln.head800.swf")
	if err != nil {
		b.Skip(err)
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	tr, err := Read(f, 0)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	jobs := tr.SimJobs()
	c := sim.PoolCluster(tr.Header.MaxProcs)
	for _, p := range []sim.Policy{sim.EASY, sim.Conservative} {
		b.Run(p.String(), func(b *testing.B) {
			cpu0 := cputime.Used()
			for b.Loop() {
				if _, err := sim.RunWith(c, jobs, p, sim.Options{}); err != nil {
					b.Fatal(err)
				}
			}
			reportRates(b, len(jobs), cputime.Used()-cpu0)
		})
	}
}

func reportRates(b *testing.B, jobs int, cpu time.Duration) {
	n := float64(jobs) * float64(b.N)
	b.ReportMetric(n/b.Elapsed().Seconds(), "jobs/s")
	if cpu > 0 {
		b.ReportMetric(n/cpu.Seconds(), "jobs/cpu-s")
		b.ReportMetric(cpu.Seconds()*1000/float64(b.N), "cpu-ms/op")
	}
}
