package replay

import (
	"fmt"
	"io"
	"strconv"

	"lookahead/forecast/swf"
)

// SWFStats count what ReadSWF read and left out (records whose run time or
// processors the archive marks unknown), and say where the trace's time 0
// is on the wall clock: Origin, its header's UnixStartTime (0 when the
// header has none).
type SWFStats struct {
	Jobs    int
	Skipped int
	Origin  int64
}

// ReadSWF reads a Standard Workload Format trace with forecast/swf and
// turns it into trace jobs: processors requested (allocated when the
// request is unknown), walltime requested (the run time when unknown).
// Malformed traces are errors naming the line.
func ReadSWF(r io.Reader) ([]TraceJob, SWFStats, error) {
	t, err := swf.Read(r, 0)
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
	return out, SWFStats{Jobs: len(out), Skipped: len(t.Skipped), Origin: t.Header.UnixStartTime}, nil
}
