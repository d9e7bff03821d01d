package demo

import (
	"embed"
	"fmt"
	"io"

	"lookahead/forecast/sim"
	"lookahead/forecast/swf"
)

//go:embed traces/*.swf
var traces embed.FS

// readSWF reads an SWF trace with the simulator's reader (forecast/swf) and
// turns it into a site's local workload: job ids get the site's prefix,
// Submit is relative to the first job's, users are "u<N>" and every job
// goes to queue "batch". Records the archive marks as missing are skipped
// and counted.
func readSWF(r io.Reader, prefix string) (jobs []sim.Job, skipped int, err error) {
	tr, err := swf.Read(r, 0)
	if err != nil {
		return nil, 0, err
	}
	jobs = tr.SimJobs()
	for i := range jobs {
		j := &jobs[i]
		j.ID = prefix + "." + j.ID
		j.Submit -= tr.Jobs[0].Submit
		j.User = "u" + j.User
		j.Queue = "batch"
	}
	return jobs, len(tr.Skipped), nil
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
