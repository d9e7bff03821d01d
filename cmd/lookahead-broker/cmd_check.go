package main

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"lookahead/broker/daemon"
	"lookahead/internal/cli"
	"lookahead/internal/natsconn"
)

func newCheckCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check the configuration, NATS with JetStream, the streams and the metrics address",
		Long: `Check what the broker needs before it runs, print what is wrong and how to
fix it: the configuration; the NATS connection with the broker's identity and
JetStream; the audit stream (present and append-only), the job stream and
the forecast bucket that ` + "`lookahead-broker init`" + ` creates (without NATS
authentication the broker creates them itself at its first start, so their
absence passes); that the metrics address is free; and the web view's
address and token file. Changes nothing. Exits 0 when everything passed, 3
when the only failures are services that could not be reached (NATS), 1
when another check failed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cli.CheckFormat(output); err != nil {
				return err
			}
			cfg, loaded, err := readConfig(cmd.Flags())
			if err != nil {
				return err
			}
			checks := runChecks(cmd.Context(), cfg, loaded.Warnings)
			if err := cli.PrintChecks(cmd.OutOrStdout(), output, checks); err != nil {
				return err
			}
			return cli.ChecksError(checks)
		},
	}
	addConfigFlags(cmd.Flags())
	cli.AddOutputFlag(cmd, &output)
	return cmd
}

// runChecks runs every check; a check that cannot run says why. The
// configuration's warnings are told, not failed.
func runChecks(ctx context.Context, cfg Config, warnings []string) []cli.Check {
	checks := []cli.Check{{Name: "config", OK: true, Detail: "valid"}}
	if len(warnings) > 0 {
		checks[0].Detail = "valid; warnings: " + strings.Join(warnings, "; ")
	}
	checks = append(checks, checkNATS(ctx, cfg)...)
	return append(checks, checkMetrics(cfg.Metrics.Listen), checkWeb(cfg.Web))
}

// checkNATS connects as the broker does and inspects what Init makes.
func checkNATS(ctx context.Context, cfg Config) []cli.Check {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r, nc := cli.CheckNATS(ctx, cfg.NATS)
	out := []cli.Check{r}
	if nc == nil {
		return out
	}
	defer nc.Close()
	js, err := natsconn.JetStream(nc, cfg.NATS.JSDomain)
	if err != nil {
		return append(out, cli.Check{Name: "streams", Detail: err.Error(), Fix: "fix nats.js_domain"})
	}
	found, err := daemon.Inspect(ctx, js)
	if err != nil {
		return append(out, cli.Check{Name: "streams", Detail: err.Error(), Fix: "the broker's NATS identity needs to read stream and bucket info (packaging/nats/grid.conf)"})
	}
	for _, r := range found {
		c := cli.Check{Name: r.Name, OK: !r.Missing && r.Note == "", Detail: "present"}
		switch {
		case r.Missing && !cfg.NATS.Authenticated():
			c.OK, c.Detail = true, "missing; NATS authentication is off, so the broker creates it at its first start"
		case r.Missing:
			c.Detail, c.Fix = "missing", "run `lookahead-broker init` with the NATS admin's identity (docs/security.md)"
		case r.Note != "":
			c.Detail, c.Fix = r.Note, r.Fix
		}
		out = append(out, c)
	}
	return out
}

// checkMetrics says whether the metrics address is free to listen on.
func checkMetrics(addr string) cli.Check {
	if addr == "" {
		return cli.Check{Name: "metrics", OK: true, Detail: "off"}
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return cli.Check{Name: "metrics", Detail: fmt.Sprintf("cannot listen on %s: %v", addr, err),
			Fix: "is a broker already running? Else choose another metrics.listen (or off)"}
	}
	l.Close()
	return cli.Check{Name: "metrics", OK: true, Detail: addr + " is free"}
}
