package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"lookahead/broker/daemon"
	"lookahead/internal/cli"
	"lookahead/internal/natsconn"
)

func newInitCommand() *cobra.Command {
	var admin natsconn.Config
	var output string
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create the audit stream, the job stream and the forecast bucket, as the NATS admin (once, at install)",
		Long: `Create what lookahead keeps in JetStream, over a connection with the NATS
admin identity (packaging/nats/grid.conf: PERMS_ADMIN): the audit stream
LOOKAHEAD_AUDIT (append-only: no message can be deleted and the stream
cannot be purged), the job stream LOOKAHEAD_JOBS and the forecast bucket.
Run it once, at install, before the first start of the broker and the
agents. The running broker then needs no permission to create or change the
audit stream, so not even the broker's identity can shorten the trail
(docs/security.md says who can erase what).

Everything but the credentials comes from broker.yaml (URL, TLS, replicas,
site TTL); give the admin's credentials with --admin-creds, --admin-nkey or
--admin-user (password in LOOKAHEAD_NATS_ADMIN_PASSWORD). Existing streams
are left as they are, and one that is not append-only is reported. Safe to
run again.`,
		Example: `  lookahead-broker init --admin-nkey /root/nats/admin.nk --admin-inbox-prefix _INBOX_admin`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd.Flags())
			if err != nil {
				return err
			}
			return runInit(cmd.Context(), cmd, cfg, admin, output)
		},
	}
	bindAdminFlags(cmd.Flags(), &admin)
	cli.AddOutputFlag(cmd, &output)
	return cmd
}

func bindAdminFlags(fs *pflag.FlagSet, admin *natsconn.Config) {
	fs.StringVar(&admin.Creds, "admin-creds", "", "the NATS admin's .creds file")
	fs.StringVar(&admin.NKeySeed, "admin-nkey", "", "the NATS admin's nkey seed file")
	fs.StringVar(&admin.User, "admin-user", "", "the NATS admin's user name (password in LOOKAHEAD_NATS_ADMIN_PASSWORD)")
	fs.StringVar(&admin.InboxPrefix, "admin-inbox-prefix", "", "the admin's reply-subject prefix (grid.conf: _INBOX_admin)")
}

func runInit(ctx context.Context, cmd *cobra.Command, cfg Config, admin natsconn.Config, output string) error {
	if err := cli.CheckFormat(output); err != nil {
		return err
	}
	if n := countSet(admin.Creds, admin.NKeySeed, admin.User); n != 1 {
		return cli.Usagef("init: give the NATS admin's identity: one of --admin-creds, --admin-nkey or --admin-user (%d given)", n)
	}
	nc := cfg.NATS
	nc.Creds, nc.NKeySeed, nc.User, nc.Token, nc.InboxPrefix = admin.Creds, admin.NKeySeed, admin.User, "", admin.InboxPrefix
	nc.Password = os.Getenv("LOOKAHEAD_NATS_ADMIN_PASSWORD")
	nc.Name = "lookahead-broker-init"
	conn, err := natsconn.Connect(ctx, nc)
	if err != nil {
		if key, detail := natsconn.Key(err); natsconn.IsConfigError(err) && adminFlags[key] != "" {
			return cli.UsageError{Err: fmt.Errorf("%s: %w", adminFlags[key], detail)} // the admin's file, not broker.yaml's
		}
		return cli.Unreachable(err)
	}
	defer conn.Close()
	js, err := natsconn.JetStream(conn, cfg.NATS.JSDomain)
	if err != nil {
		return cli.UsageError{Err: err}
	}
	res, err := daemon.Init(ctx, js, cfg.Replicas, cfg.Planning.SiteTTL)
	if err == nil {
		var lr daemon.InitResult
		lr, err = daemon.InitLease(ctx, js, cfg.Replicas, cfg.Leadership.LeaseTTL)
		res = append(res, lr)
	}
	if err == nil {
		notes, _ := daemon.ReplicaNotes(ctx, js, cfg.Replicas)
		for _, n := range notes {
			fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", n)
		}
	}
	if output == cli.FormatJSON {
		if werr := cli.WriteJSON(cmd.OutOrStdout(), res); werr != nil {
			return werr
		}
	} else {
		for _, r := range res {
			what := "exists, left as it is"
			switch {
			case r.Created:
				what = "created"
			case r.Changed != "":
				what = "exists, " + r.Changed
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%-24s %s\n", r.Name, what)
			if r.Note != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s %s\n", r.Name, r.Note)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	return nil
}

// adminFlags are init's flags that replace broker.yaml's NATS identity.
var adminFlags = map[string]string{"nats.creds": "--admin-creds", "nats.nkey_seed": "--admin-nkey"}

func countSet(values ...string) int {
	n := 0
	for _, v := range values {
		if v != "" {
			n++
		}
	}
	return n
}
