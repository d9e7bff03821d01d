package demo

import (
	"bufio"
	"embed"
	"fmt"
	"io"
	"strconv"
	"strings"

	"lookahead/forecast/sim"
)

//go:embed traces/*.swf
var traces embed.FS

// readSWF reads SWF job lines into sim jobs with Submit relative to the
// first job's. Processors are field 5 (allocated), or field 8 (requested)
// when 5 is missing; walltime is field 9 (requested), or the run time when
// 9 is missing; the job runs its field 4 run time (the engine kills it at
// its walltime). Jobs with no usable size or time are skipped and counted.
func readSWF(r io.Reader, prefix string) (jobs []sim.Job, skipped int, err error) {
	sc := bufio.NewScanner(r)
	line, first := 0, int64(-1)
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, ";") {
			continue
		}
		f := strings.Fields(text)
		if len(f) != 18 {
			return nil, skipped, fmt.Errorf("swf line %d: %d fields, want 18", line, len(f))
		}
		v := make([]int64, 18)
		for i, s := range f {
			x, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, skipped, fmt.Errorf("swf line %d field %d: %w", line, i+1, err)
			}
			v[i] = int64(x)
		}
		procs, run, wall := v[4], v[3], v[8]
		if procs <= 0 {
			procs = v[7]
		}
		if wall <= 0 {
			wall = run
		}
		if procs <= 0 || run < 0 || wall <= 0 {
			skipped++
			continue
		}
		if first < 0 {
			first = v[1]
		}
		jobs = append(jobs, sim.Job{ID: fmt.Sprintf("%s.%d", prefix, v[0]), Procs: int(procs), Walltime: wall,
			Runtime: run, Submit: v[1] - first, User: fmt.Sprintf("u%d", v[11]), Queue: "batch"})
	}
	if err := sc.Err(); err != nil {
		return nil, skipped, fmt.Errorf("swf line %d: %w", line, err)
	}
	return jobs, skipped, nil
}

// loadTrace reads one bundled slice.
func loadTrace(name, prefix string) ([]sim.Job, int, error) {
	f, err := traces.Open("traces/" + name)
	if err != nil {
		return nil, 0, fmt.Errorf("bundled trace %s: %w", name, err)
	}
	defer f.Close()
	jobs, skipped, err := readSWF(f, prefix)
	if err != nil {
		return nil, 0, fmt.Errorf("bundled trace %s: %w", name, err)
	}
	return jobs, skipped, nil
}
