package replay

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// SWFStats count what ReadSWF left out: jobs whose run time or processors
// the archive marks unknown (-1) or zero processors.
type SWFStats struct {
	Jobs    int
	Skipped int
}

// ReadSWF parses a Standard Workload Format trace: one job per line, 18
// whitespace-separated numeric fields, ';' comments. Processors are the
// requested processors (field 8), falling back to the allocated ones (field
// 5) when the request is -1; the walltime is the requested time (field 9),
// 0 when unknown. A line with the wrong field count, a non-numeric field or
// a submit time before the previous one is an error naming the line.
func ReadSWF(r io.Reader) ([]TraceJob, SWFStats, error) {
	var out []TraceJob
	var st SWFStats
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	last := int64(-1 << 62)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, ";") {
			continue
		}
		f := strings.Fields(text)
		if len(f) != 18 {
			return nil, st, fmt.Errorf("swf line %d: %d fields, want 18", line, len(f))
		}
		var v [18]int64
		for i, s := range f {
			n, err := parseSWFField(s)
			if err != nil {
				return nil, st, fmt.Errorf("swf line %d field %d: %q is not a number", line, i+1, s)
			}
			v[i] = n
		}
		if v[1] < last {
			return nil, st, fmt.Errorf("swf line %d: submit time %d before the previous job's %d", line, v[1], last)
		}
		last = v[1]
		procs := v[7]
		if procs <= 0 {
			procs = v[4]
		}
		if v[3] < 0 || procs <= 0 {
			st.Skipped++
			continue
		}
		st.Jobs++
		out = append(out, TraceJob{
			ID: strconv.FormatInt(v[0], 10), Submit: v[1], Run: v[3], Walltime: max(v[8], 0),
			Procs: int(procs), User: strconv.FormatInt(v[11], 10),
		})
	}
	if err := sc.Err(); err != nil {
		return nil, st, fmt.Errorf("swf: %w", err)
	}
	return out, st, nil
}

// parseSWFField reads an integer field; some archive files write
// fractional values (e.g. average CPU time), which are truncated.
func parseSWFField(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || x != x || x > 1e18 || x < -1e18 {
		return 0, fmt.Errorf("not a number")
	}
	return int64(x), nil
}
