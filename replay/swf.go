package replay

import (
	"fmt"
	"io"
	"strconv"

	"lookahead/forecast/swf"
)

// SWFStats count what ReadSWF read and left out, and say where the
// trace's time 0 is on the wall clock: Origin, its header's UnixStartTime
// (0 when the header has none). Skips are the records left out, in line
// order: malformed lines and records whose run time or processors the
// archive marks unknown.
type SWFStats struct {
	Jobs    int
	Skipped int
	Origin  int64
	Skips   []swf.Skip
}

// ReadSWF reads a Standard Workload Format trace with forecast/swf and
// turns it into trace jobs: processors requested (allocated when the
// request is unknown), walltime requested (the run time when unknown).
// A malformed line is rejected, not the trace: it is left out and listed
// in the stats' Skips with its reason (swf.ReadLenient). A file that
// cannot be read to its end is an error.
func ReadSWF(r io.Reader) ([]TraceJob, SWFStats, error) {
	t, err := swf.ReadLenient(r, 0)
	if err != nil {
		return nil, SWFStats{}, fmt.Errorf("swf: %w", err)
	}
	out := make([]TraceJob, 0, len(t.Jobs))
	for _, j := range t.Jobs {
		out = append(out, TraceJob{
			ID: strconv.FormatInt(j.ID, 10), Submit: j.Submit, Run: j.Run, Walltime: j.Walltime(),
			Procs: j.Procs(), User: strconv.Itoa(j.User),
		})
	}
	return out, SWFStats{Jobs: len(out), Skipped: len(t.Skipped), Origin: t.Header.UnixStartTime, Skips: t.Skipped}, nil
}
