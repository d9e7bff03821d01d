package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"

	"lookahead/torque"
)

// outputDelivery finds out whether dispatched parts' -o/-e paths hold on
// this site (torque.Delivery): how pbs_mom was built (`<torque.pbs_mom>
// --about`, when it is installed here), what this host's
// <pbs_home>/mom_priv/config says (when there is one) and whether the
// running pbs_mom still knows its host name and copy command (`momctl -d
// 3`, momctl beside pbs_mom). Only for a Torque site that dispatches.
func outputDelivery(ctx context.Context, c Config) (torque.OutputDelivery, bool) {
	if !c.Dispatch.Enabled || c.simulated() || c.slurmBackend() {
		return torque.OutputDelivery{}, false
	}
	run := torque.NewExecRunner(torque.ExecConfig{Timeout: c.Torque.CommandTimeout})
	var build *torque.MomBuild
	res, err := run.Run(ctx, c.Torque.PbsMom, "--about")
	if err == nil && res.ExitCode == 0 {
		if b, err := torque.ParseMomAbout(bytes.NewReader(res.Stdout)); err == nil {
			build = &b
		}
	}
	var cfg *torque.MomConfig
	if f, err := os.Open(filepath.Join(c.Torque.PBSHome, "mom_priv", "config")); err == nil { // absent or unreadable: not known here
		if mc, err := torque.ParseMomConfig(f); err == nil {
			cfg = &mc
		}
		f.Close()
	}
	var diag *torque.MomDiag
	if res, err := run.Run(ctx, momctlBeside(c.Torque.PbsMom), "-d", "3"); err == nil && res.ExitCode == 0 {
		if d, err := torque.ParseMomDiag(bytes.NewReader(res.Stdout)); err == nil {
			diag = &d
		}
	}
	return torque.Delivery(build, cfg, diag), true
}

// momctlBeside is momctl in pbs_mom's directory (both are in Torque's
// sbin), or plain momctl when pbs_mom is found through PATH.
func momctlBeside(pbsMom string) string {
	if !strings.Contains(pbsMom, "/") {
		return "momctl"
	}
	return filepath.Join(filepath.Dir(pbsMom), "momctl")
}

// checkOutput is `check`'s line on where parts' output goes: a failure
// only when it is certain that no output reaches its paths, a warning
// when it depends on each user and on pbs_mom's state.
func checkOutput(ctx context.Context, c Config) (checkResult, bool) {
	d, ok := outputDelivery(ctx, c)
	if !ok {
		return checkResult{}, false
	}
	return outputCheck(d), true
}

// outputCheck is the check line for d. Pure.
func outputCheck(d torque.OutputDelivery) checkResult {
	r := checkResult{Name: "torque output", OK: d.Holds, Detail: d.Why}
	switch {
	case !d.Holds:
		r.Fix = "restart pbs_mom (momctl -s, then start it) — never reload it with SIGHUP unless its config has " +
			"`$spool_as_final_name true` or a `$usecp` line for the output directories (e.g. `$usecp *:/home /home`); " +
			"until then each part's output stays in ~/.pbs_spool, and `lookahead status` shows that path once the part ends"
	case d.Copied || !d.Known:
		r.Warn = true
		r.Fix = "add `$spool_as_final_name true` to mom_priv/config on every node and restart pbs_mom: it then writes each part's " +
			"output at its -o/-e paths from the start; otherwise give every local user parts run as a ~/.pbs_spool directory and " +
			"restart pbs_mom rather than send it SIGHUP (or add `$usecp *:/home /home`). Either way `lookahead status` shows where " +
			"each part's output is once it ends (docs/dispatch.md)"
	}
	return r
}

// logOutputDelivery warns at start when parts' output may not go where
// -o/-e say, and returns whether pbs_mom copies it there at the jobs' end
// (DispatchConfig.OutputCopied).
func logOutputDelivery(ctx context.Context, c Config, log zerolog.Logger) bool {
	d, ok := outputDelivery(ctx, c)
	if !ok {
		return false
	}
	if !d.Holds || d.Copied {
		log.Warn().Str("why", d.Why).Msg("dispatched parts' output may not reach their -o/-e paths: the agent reports where each part's output is once it ends (lookahead-agent check)")
	}
	return d.Copied
}
