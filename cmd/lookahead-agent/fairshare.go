package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

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

// checkFairshare is `check`'s line about the site's fairshare usage, when
// the built-in engine follows a maui.cfg with fairshare: whether it can be
// read, and from where it is read at every forecast.
func checkFairshare(ctx context.Context, c Config, now time.Time) (checkResult, bool) {
	sp, err := c.sitePolicy()
	if err != nil || sp.Policy.Fairshare == nil || c.simulated() || c.Engine != "builtin" {
		return checkResult{}, false
	}
	const src = "Maui's FS files in <maui.home>/stats first, else diagnose -f; read at every forecast"
	st, err := fairshareSource(c)(ctx, now.Unix(), sp.Policy.Fairshare)
	switch {
	case errors.Is(err, agent.ErrNoFairshareData):
		return checkResult{Name: "fairshare usage", OK: true, Detail: "no usage recorded yet: forecasts start from zero (" + src + ")"}, true
	case err != nil:
		return checkResult{Name: "fairshare usage", Detail: err.Error(),
			Fix: "let the agent's user read " + filepath.Join(c.Maui.Home, "stats") + " or run diagnose -f; until then forecasts start from zero usage"}, true
	}
	n := 0
	for _, m := range st.Cred {
		n += len(m)
	}
	return checkResult{Name: "fairshare usage", OK: true, Detail: fmt.Sprintf("%d credentials with usage (%s)", n, src)}, true
}
