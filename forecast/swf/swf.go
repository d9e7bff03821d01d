package swf

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"lookahead/forecast"
	"lookahead/forecast/sim"
)

// ErrFormat is wrapped by every error about a malformed trace.
var ErrFormat = errors.New("bad SWF trace")

// Fields is the number of fields of an SWF job line.
const Fields = 18

// Job is one SWF record (fields numbered as in the standard, -1 = unknown).
type Job struct {
	Line      int   // line number in the file
	ID        int64 // 1
	Submit    int64 // 2, seconds from the trace start
	Wait      int64 // 3
	Run       int64 // 4
	Alloc     int   // 5, allocated processors
	ReqProcs  int   // 8
	ReqTime   int64 // 9, requested time (the walltime)
	Status    int   // 11
	User      int   // 12
	Group     int   // 13
	Queue     int   // 15
	Partition int   // 16
}

// Header holds the header comments that matter for a replay.
type Header struct {
	MaxProcs int // "; MaxProcs:", 0 when absent
	MaxNodes int // "; MaxNodes:", 0 when absent
	// UnixStartTime is the trace's time 0 on the wall clock (Unix
	// seconds); HasStart says the header gave it.
	UnixStartTime int64
	HasStart      bool
	// TimeZoneString is the zone the trace's site ran in ("US/Eastern");
	// TimeZone the older header's offset from UTC in seconds (HasTimeZone
	// says it was given).
	TimeZoneString string
	TimeZone       int
	HasTimeZone    bool
	Comments       []string
}

// Skip is a record left out: because the archive's conventions allow a
// field it needs to be missing (-1), or, read by ReadLenient, because the
// line is malformed (Malformed). Reason says which.
type Skip struct {
	Line      int
	ID        int64 // -1 when the line has no readable job number
	Reason    string
	Malformed bool
}

// Trace is a parsed workload.
type Trace struct {
	Header  Header
	Jobs    []Job
	Skipped []Skip
}

// Read parses an SWF trace. Records with a missing processor count or run
// time are skipped and listed in Skipped; a line with the wrong number of
// fields, a non-numeric field, a negative value other than -1, a duplicate
// job number or a submit time earlier than the previous record's is an
// error naming the line. limit > 0 stops after that many jobs.
func Read(r io.Reader, limit int) (*Trace, error) {
	return read(r, limit, false)
}

// ReadLenient is Read that rejects a malformed record instead of the
// trace: the line is left out, listed in Skipped (Malformed, the error as
// its Reason), and reading carries on. A file that cannot be read to its
// end (cut mid-stream) is still an error.
func ReadLenient(r io.Reader, limit int) (*Trace, error) {
	return read(r, limit, true)
}

func read(r io.Reader, limit int, lenient bool) (*Trace, error) {
	t := &Trace{}
	src := &errReader{r: r}
	sc := bufio.NewScanner(src)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	line, last := 0, int64(math.MinInt64)
	seen := map[int64]int{}
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		if text[0] == ';' {
			t.Header.add(text)
			continue
		}
		j, err := parseJob(text, line)
		if err != nil && src.err != nil {
			return nil, readError(line, src.err) // the last line is cut: the file is, not the record
		}
		if err == nil {
			err = checkOrder(j, last, seen)
		}
		if err != nil && lenient {
			t.Skipped = append(t.Skipped, malformed(j, line, err))
			continue
		}
		if err != nil {
			return nil, err
		}
		last = j.Submit
		seen[j.ID] = line
		if reason := missing(j); reason != "" {
			t.Skipped = append(t.Skipped, Skip{Line: line, ID: j.ID, Reason: reason})
			continue
		}
		t.Jobs = append(t.Jobs, j)
		if limit > 0 && len(t.Jobs) >= limit {
			break
		}
	}
	if err := sc.Err(); err != nil {
		return nil, readError(line+1, err)
	}
	return t, nil
}

// checkOrder refuses a record submitted before the previous one or
// repeating a job number.
func checkOrder(j Job, last int64, seen map[int64]int) error {
	if j.Submit < last {
		return fmt.Errorf("%w: line %d: submit time %d is before the previous record's %d (records must be sorted)", ErrFormat, j.Line, j.Submit, last)
	}
	if prev, dup := seen[j.ID]; dup {
		return fmt.Errorf("%w: line %d: job %d repeats line %d", ErrFormat, j.Line, j.ID, prev)
	}
	return nil
}

// malformed is the Skip of a line ReadLenient leaves out: its reason is
// the error without the line, which Skip carries.
func malformed(j Job, line int, err error) Skip {
	id := j.ID
	if j.Line == 0 {
		id = -1 // the line did not parse
	}
	reason := strings.TrimPrefix(err.Error(), fmt.Sprintf("%v: line %d", ErrFormat, line))
	return Skip{Line: line, ID: id, Reason: strings.TrimLeft(reason, ": "), Malformed: true}
}

// errReader remembers the first error other than io.EOF its reader
// returned: bufio.Scanner hands out the partial last line before it
// reports the error, and a cut line is a cut file, not a bad record.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

func readError(line int, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: line %d: the file is truncated (it ends mid-stream): %w", ErrFormat, line, err)
	}
	return fmt.Errorf("read SWF at line %d: %w", line, err)
}

func (h *Header) add(text string) {
	h.Comments = append(h.Comments, text)
	key, val, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(text, ";")), ":")
	if !ok {
		return
	}
	f := strings.Fields(val)
	if len(f) == 0 {
		return
	}
	key = strings.TrimSpace(key)
	if key == "TimeZoneString" {
		h.TimeZoneString = f[0]
		return
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return
	}
	switch key {
	case "MaxProcs":
		h.MaxProcs = int(n)
	case "MaxNodes":
		h.MaxNodes = int(n)
	case "UnixStartTime":
		h.UnixStartTime, h.HasStart = n, true
	case "TimeZone":
		if n > -86400 && n < 86400 {
			h.TimeZone, h.HasTimeZone = int(n), true
		}
	}
}

// Clock is what the header says of the trace's wall clock
// (docs/simulator.md, "The wall clock"): its UnixStartTime, and its zone,
// TimeZoneString loaded with load (time.LoadLocation: the caller's
// access to the zone database) or, without one, the fixed offset of the
// older TimeZone field. A TimeZoneString load cannot find is an error
// naming it.
func (h Header) Clock(load func(string) (*time.Location, error)) (sim.ClockSetting, error) {
	c := sim.ClockSetting{Origin: h.UnixStartTime, HasOrigin: h.HasStart}
	if h.HasStart && (h.UnixStartTime < 0 || h.UnixStartTime > forecast.MaxInstant) {
		return c, fmt.Errorf("%w: header UnixStartTime %d: must lie in [0, %d]", ErrFormat, h.UnixStartTime, forecast.MaxInstant)
	}
	switch {
	case h.TimeZoneString != "":
		loc, err := load(h.TimeZoneString)
		if err != nil {
			return c, fmt.Errorf("%w: header TimeZoneString %q: %w", ErrFormat, h.TimeZoneString, err)
		}
		c.Zone = loc
	case h.HasTimeZone:
		off := h.TimeZone
		sign := '+'
		if off < 0 {
			sign, off = '-', -off
		}
		c.Zone = time.FixedZone(fmt.Sprintf("UTC%c%02d:%02d", sign, off/3600, off%3600/60), h.TimeZone)
	}
	return c, nil
}

func parseJob(text string, line int) (Job, error) {
	var v [Fields]int64
	n := 0
	for f := range strings.FieldsSeq(text) {
		if n == Fields {
			return Job{}, fmt.Errorf("%w: line %d: more than %d fields", ErrFormat, line, Fields)
		}
		x, err := number(f)
		if err != nil {
			return Job{}, fmt.Errorf("%w: line %d field %d: %q is not a number", ErrFormat, line, n+1, f)
		}
		if x < -1 {
			return Job{}, fmt.Errorf("%w: line %d field %d: %s is negative (only -1, unknown, may be)", ErrFormat, line, n+1, f)
		}
		v[n] = x
		n++
	}
	if n != Fields {
		return Job{}, fmt.Errorf("%w: line %d: %d fields, want %d", ErrFormat, line, n, Fields)
	}
	if err := checkLimits(&v, line); err != nil {
		return Job{}, err
	}
	return Job{Line: line, ID: v[0], Submit: v[1], Wait: v[2], Run: v[3], Alloc: int(v[4]), ReqProcs: int(v[7]),
		ReqTime: v[8], Status: int(v[10]), User: int(v[11]), Group: int(v[12]), Queue: int(v[14]), Partition: int(v[15])}, nil
}

// limits are the model's bounds (docs/formats.md, "Limits of the model")
// on the fields a replay computes with: times, durations, processors.
var limits = []struct {
	field int // 1-based, as in the standard
	name  string
	max   int64
}{
	{2, "submit time", forecast.MaxInstant},
	{3, "wait time", forecast.MaxDuration},
	{4, "run time", forecast.MaxDuration},
	{5, "allocated processors", forecast.MaxProcs},
	{8, "requested processors", forecast.MaxProcs},
	{9, "requested time", forecast.MaxDuration},
}

func checkLimits(v *[Fields]int64, line int) error {
	for _, l := range limits {
		if x := v[l.field-1]; x > l.max {
			return fmt.Errorf("%w: line %d field %d (%s): %d, at most %d", ErrFormat, line, l.field, l.name, x, l.max)
		}
	}
	return nil
}

// number reads an integer, or a decimal (field 6, average CPU time, often
// is one) rounded down.
func number(f string) (int64, error) {
	if x, err := strconv.ParseInt(f, 10, 64); err == nil {
		return x, nil
	}
	x, err := strconv.ParseFloat(f, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > 1e18 {
		return 0, fmt.Errorf("not a number: %q", f)
	}
	return int64(math.Floor(x)), nil
}

func missing(j Job) string {
	switch {
	case j.ID < 0:
		return "job number missing (-1)"
	case j.Submit < 0:
		return "submit time missing (-1)"
	case j.Procs() <= 0:
		return "requested and allocated processors both missing or zero"
	case j.Run < 0:
		return "run time missing (-1)"
	}
	return ""
}

// Procs is the requested processors, or the allocated ones when the
// request is missing (-1).
func (j Job) Procs() int {
	if j.ReqProcs > 0 {
		return j.ReqProcs
	}
	return j.Alloc
}

// Walltime is the requested time, or the run time when the request is
// missing; at least 1 s.
func (j Job) Walltime() int64 {
	w := j.ReqTime
	if w <= 0 {
		w = j.Run
	}
	return max(w, 1)
}

// Sim is the job as the simulator takes it: it runs min(run time,
// walltime).
func (j Job) Sim() sim.Job {
	id := strconv.FormatInt(j.ID, 10)
	return sim.Job{ID: id, Procs: j.Procs(), Walltime: j.Walltime(), Runtime: j.Run, Submit: j.Submit,
		User: strconv.Itoa(j.User), Group: strconv.Itoa(j.Group), Queue: strconv.Itoa(j.Queue)}
}

// SimJobs converts every job of the trace. The user, group and queue
// numbers become the jobs' user, group and class names, as a maui.cfg's
// USERCFG[12], GROUPCFG[3] or CLASSCFG[1] would name them.
func (t *Trace) SimJobs() []sim.Job {
	out := make([]sim.Job, len(t.Jobs))
	for i, j := range t.Jobs {
		out[i] = j.Sim()
	}
	return out
}
