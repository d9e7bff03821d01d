package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"

	"github.com/rs/zerolog"

	"lookahead/torque"
)

// outputDelivery finds out whether dispatched parts' -o/-e paths hold on
// this site (torque.Delivery): how pbs_mom was built (`<torque.pbs_mom>
// --about`, when it is installed here) and what this host's
// <pbs_home>/mom_priv/config says (when there is one). Only for a Torque
// site that dispatches.
func outputDelivery(ctx context.Context, c Config) (torque.OutputDelivery, bool) {
	if !c.Dispatch.Enabled || c.simulated() || c.slurmBackend() {
		return torque.OutputDelivery{}, false
	}
	var build *torque.MomBuild
	res, err := torque.NewExecRunner(torque.ExecConfig{Timeout: c.Torque.CommandTimeout}).Run(ctx, c.Torque.PbsMom, "--about")
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
	return torque.Delivery(build, cfg), true
}

// checkOutput is `check`'s line on where parts' output goes.
func checkOutput(ctx context.Context, c Config) (checkResult, bool) {
	d, ok := outputDelivery(ctx, c)
	if !ok {
		return checkResult{}, false
	}
	r := checkResult{Name: "torque output", OK: d.Holds, Detail: d.Why}
	if !d.Holds {
		r.Fix = "add `$spool_as_final_name true` to mom_priv/config on every node and restart pbs_mom (or send it SIGHUP): " +
			"it then writes each part's stdout/stderr at the -o/-e paths `lookahead status` shows (~/.pbs_spool and $usecp do not help: " +
			"docs/dispatch.md); until then the agent reports <home>/<id>.OU/.ER as the parts' output"
	}
	return r, true
}

// logOutputDelivery warns at start when parts' output does not go where
// -o/-e say, and returns whether the agent must report where it stays.
func logOutputDelivery(ctx context.Context, c Config, log zerolog.Logger) bool {
	d, ok := outputDelivery(ctx, c)
	if !ok || d.Holds {
		return false
	}
	log.Warn().Str("why", d.Why).Msg("dispatched parts' output does not reach their -o/-e paths: set $spool_as_final_name true in every pbs_mom's mom_priv/config (lookahead-agent check)")
	return d.Known
}
