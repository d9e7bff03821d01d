package torque

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"lookahead/torque/tail"
)

// replicate writes the captured server logs of all three versions again
// and again into dir/name until the file holds at least size bytes; it
// returns the path and the number of lines.
func replicate(b *testing.B, dir, name string, size int) (string, int) {
	b.Helper()
	var one []byte
	lines := 0
	for _, v := range versions {
		data, err := os.ReadFile(filepath.Join("testdata", v.dir, "server_logs", "20261122"))
		if err != nil {
			b.Fatal(err)
		}
		one = append(one, data...)
		lines += strings.Count(string(data), "\n")
	}
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	total, n := 0, 0
	for total < size {
		w.Write(one)
		total += len(one)
		n += lines
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return path, n
}

// scanFile calls fn for every line of path.
func scanFile(b *testing.B, path string, fn func(string)) {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fn(sc.Text())
	}
}

// BenchmarkParseServerLog: lines per second over the captured server logs
// (6.1.3 + 4.2.10 + 2.5.13) replicated to 100 MB. "scan" only splits lines
// (the floor); "naive" parses with strings.Split + time.ParseInLocation
// (the obvious way); "ParseLogLine+LogEvent" is this package.
func BenchmarkParseServerLog(b *testing.B) {
	path, lines := replicate(b, b.TempDir(), "20261122", 100<<20)
	loc := time.FixedZone("site", 3*3600)
	run := func(name string, fn func(string)) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				scanFile(b, path, fn)
			}
			b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
			b.SetBytes(100 << 20)
		})
	}
	run("scan", func(string) {})
	run("naive", func(s string) {
		f := strings.Split(s, ";")
		layout := "01/02/2006 15:04:05"
		if len(f[0]) == 23 {
			layout += ".000"
		}
		if _, err := time.ParseInLocation(layout, f[0], loc); err != nil {
			b.Fatal(err)
		}
	})
	events := 0
	run("ParseLogLine+LogEvent", func(s string) {
		rec, err := ParseLogLine(s, loc)
		if err != nil {
			b.Fatal(err)
		}
		if _, ok := LogEvent(rec); ok {
			events++
		}
	})
}

// BenchmarkTailer: end to end (tail → parse → event → handler → positions)
// over the replicated server log, with the positions file written after
// every event (the default; 2 MB, as each write costs a create, a write and
// a rename) and after every 1000 events (100 MB).
func BenchmarkTailer(b *testing.B) {
	for _, every := range []int{1, 1000} {
		size := 2 << 20
		if every > 1 {
			size = 100 << 20
		}
		b.Run("commit-every-"+strconv.Itoa(every), func(b *testing.B) {
			home := b.TempDir()
			dir := LogDir(home, ServerLog)
			os.MkdirAll(dir, 0o755)
			_, lines := replicate(b, dir, "20261122", size)
			events := 0
			for b.Loop() {
				pos := filepath.Join(home, "pos")
				os.Remove(pos)
				tl, err := NewTailer(TailerConfig{PBSHome: home, Positions: pos, Start: tail.StartBeginning,
					Location: time.UTC, CommitEvery: every}, func(context.Context, Event) error { events++; return nil })
				if err != nil {
					b.Fatal(err)
				}
				if err := tl.Sync(context.Background()); err != nil {
					b.Fatal(err)
				}
				if tl.Stats().Lines.Load() != int64(lines) {
					b.Fatalf("%d lines, want %d", tl.Stats().Lines.Load(), lines)
				}
			}
			b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
			b.SetBytes(int64(size))
		})
	}
}

// BenchmarkParseQstatXML: the captured `qstat -f -x` of Torque 6.1.3
// (phase B, 7 jobs) with its jobs repeated to 7,000, as a large site's
// snapshot.
func BenchmarkParseQstatXML(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "torque-6.1.3", "phaseB-with-maui", "27_qstat_f_x_final.out"))
	if err != nil {
		b.Fatal(err)
	}
	s := string(data)
	body := s[strings.Index(s, "<Job>"):strings.LastIndex(s, "</Data>")]
	big := "<Data>" + strings.Repeat(body, 1000) + "</Data>"
	jobs := strings.Count(big, "<Job>")
	b.SetBytes(int64(len(big)))
	for b.Loop() {
		got, err := ParseQstatXML(strings.NewReader(big))
		if err != nil || len(got) != jobs {
			b.Fatalf("%d jobs, %v", len(got), err)
		}
	}
	b.ReportMetric(float64(jobs)*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}
