package maui

import (
	"bytes"
	"context"
	"fmt"
)

// LiveOrder reads the live Maui's eligible queue in priority order
// (`showq -i`, highest first) and returns the job names as Maui shows them
// (Torque's "12.server" appears as "12"; BuildTraces matches both). Pass it
// as TraceOptions.Order / ForecastOrdered's order so the forecast starts
// queued jobs in the site's current priority order.
func LiveOrder(ctx context.Context, r Runner) ([]string, error) {
	res, err := r.Run(ctx, "showq", "-i")
	if err != nil {
		return nil, fmt.Errorf("live priority order: %w", err)
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("live priority order: showq -i: exit %d: %s", res.ExitCode, trimmed(res.Stderr))
	}
	jobs, err := ParseShowqIdle(bytes.NewReader(res.Stdout))
	if err != nil {
		return nil, fmt.Errorf("live priority order: %w", err)
	}
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.Name
	}
	return out, nil
}
