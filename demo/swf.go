package demo

import (
	"embed"
	"fmt"
	"io"

	"lookahead/agent/simsite"
	"lookahead/forecast/sim"
)

//go:embed traces/*.swf
var traces embed.FS

// readSWF reads a bundled trace as a site's local workload
// (simsite.ReadWorkload: ids prefixed, Submit relative to the first job,
// users "u<N>", queue "batch"; missing records skipped and counted).
func readSWF(r io.Reader, prefix string) (jobs []sim.Job, skipped int, err error) {
	jobs, skips, err := simsite.ReadWorkload(r, prefix)
	return jobs, len(skips), err
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
