package main

import (
	"context"
	"fmt"
	"path/filepath"

	"lookahead/agent"
	"lookahead/maui"
)

// fairshareSource is where the built-in engine reads the site's fairshare
// usage at every forecast: Maui's own files in <maui.home>/stats first
// (exact; the current interval as of Maui's last checkpoint), else
// `diagnose -f` (rounded: percentages of totals in tenths of
// processor-hours).
func fairshareSource(c Config) agent.FairshareSource {
	run := mauiPaths{maui.NewExecRunner(maui.ExecConfig{HomeDir: c.Maui.Home, Timeout: c.Maui.CommandTimeout}), c.Maui}
	diag := func(ctx context.Context) ([]byte, error) {
		res, err := run.Run(ctx, "diagnose", "-f")
		if err != nil {
			return nil, err
		}
		if res.ExitCode != 0 {
			return nil, fmt.Errorf("exit %d: %s", res.ExitCode, res.Stderr)
		}
		return res.Stdout, nil
	}
	return agent.FirstFairshare(agent.FairshareFiles(filepath.Join(c.Maui.Home, "stats")), agent.FairshareDiagnose(diag))
}
