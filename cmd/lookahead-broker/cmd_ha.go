package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"lookahead/broker/client"
	"lookahead/internal/cli"
	"lookahead/internal/durfmt"
	"lookahead/internal/natsconn"
	"lookahead/wire"
)

func newStatusCommand() *cobra.Command {
	var output string
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show every running broker: which one is active, its epoch and since when, and the standbys",
		Long: `Ask every running broker (active or standby) for its own status on
lookahead.broker.ha, with the NATS identity of broker.yaml, and print one
line per broker: its role, its epoch and since when it is active, and
which broker a standby sees holding the lease. Brokers answer within
--timeout; exit 3 when none did.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd.Flags())
			if err != nil {
				return err
			}
			if err := cli.CheckFormat(output); err != nil {
				return err
			}
			if wait <= 0 {
				return cli.Usagef("--timeout %s: must be > 0", durfmt.Duration(wait))
			}
			sts, err := gatherHA(cmd.Context(), cfg.NATS, wait)
			if err != nil {
				return err
			}
			if output == cli.FormatJSON {
				return cli.WriteJSON(cmd.OutOrStdout(), sts)
			}
			return writeHA(cmd.OutOrStdout(), sts)
		},
	}
	cmd.Flags().DurationVar(&wait, "timeout", time.Second, "how long to wait for the brokers' answers")
	client.AliasFlag(cmd.Flags(), "wait", "timeout")
	cli.AddOutputFlag(cmd, &output)
	return cmd
}

func newStepDownCommand() *cobra.Command {
	var output string
	var epoch uint64
	cmd := &cobra.Command{
		Use:   "step-down",
		Short: "Ask the active broker to hand over to a standby (maintenance)",
		Long: `Ask the active broker to step down: it stops planning and committing,
deletes its lease and exits (status 0); a standby takes the lease at its
next try, within about a second, and begins a newer epoch. Start the
stepped-down broker again to make it a standby. The request names the
term it ends (--epoch, or the active broker's, asked first): a broker of
another term refuses it, so a repeated request never deposes the
successor. Exit 3 when no broker is active.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd.Flags())
			if err != nil {
				return err
			}
			if err := cli.CheckFormat(output); err != nil {
				return err
			}
			rep, err := stepDown(cmd.Context(), cfg.NATS, epoch)
			if err != nil {
				return err
			}
			if rep.Code != wire.CodeOK {
				return cli.CodedError{Code: cli.ExitUnavailable, Err: fmt.Errorf("step-down refused by broker %s (epoch %d): %s", rep.Broker, rep.Epoch, rep.Message)}
			}
			if output == cli.FormatJSON {
				return cli.WriteJSON(cmd.OutOrStdout(), rep)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "broker %s (epoch %d): %s\n", rep.Broker, rep.Epoch, rep.Message)
			return err
		},
	}
	cmd.Flags().Uint64Var(&epoch, "epoch", 0, "the term to end (default: the active broker's, as lookahead-broker status shows it)")
	cli.AddOutputFlag(cmd, &output)
	return cmd
}

func haConnect(ctx context.Context, c natsconn.Config) (*nats.Conn, error) {
	c.Name = "lookahead-broker-cli"
	nc, err := natsconn.Connect(ctx, c)
	if err != nil {
		return nil, cli.Unreachable(err)
	}
	return nc, nil
}

// gatherHA asks every broker for its own status and collects the answers
// that arrive within wait, sorted by name.
func gatherHA(ctx context.Context, c natsconn.Config, wait time.Duration) ([]wire.HAStatus, error) {
	nc, err := haConnect(ctx, c)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	inbox := nc.NewRespInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	if err := nc.PublishRequest(wire.BrokerHASubject, inbox, nil); err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	var out []wire.HAStatus
	for deadline := time.Now().Add(wait); ; {
		m, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			break
		}
		var st wire.HAStatus
		if json.Unmarshal(m.Data, &st) == nil && st.Type == wire.TypeHAStatus {
			out = append(out, st)
		}
	}
	if len(out) == 0 {
		return nil, cli.CodedError{Code: cli.ExitUnavailable, Err: fmt.Errorf("%s (nothing on %s within %v)",
			client.NoBroker(nc.ConnectedUrlRedacted()), wire.BrokerHASubject, wait)}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func writeHA(w io.Writer, sts []wire.HAStatus) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BROKER\tROLE\tEPOCH\tACTIVE SINCE\tLEASE HELD BY\tLEASE TTL")
	for _, s := range sts {
		epoch, since, holder := "-", "-", "-"
		if s.Role == wire.RoleActive {
			epoch, since = fmt.Sprint(s.Epoch), time.Unix(s.Since, 0).UTC().Format("2006-01-02 15:04:05Z")
		}
		if s.Leader != nil {
			holder = s.Leader.Broker
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%v\n", s.Name, s.Role, epoch, since, holder, time.Duration(s.LeaseTTL)*time.Millisecond)
	}
	return tw.Flush()
}

// stepDown asks the active broker of epoch (0: the one active now, asked
// first) to hand over.
func stepDown(ctx context.Context, c natsconn.Config, epoch uint64) (wire.StepDownReply, error) {
	var rep wire.StepDownReply
	if epoch == 0 {
		sts, err := gatherHA(ctx, c, time.Second)
		if err != nil {
			return rep, err
		}
		for _, st := range sts {
			if st.Role == wire.RoleActive {
				epoch = st.Epoch
			}
		}
		if epoch == 0 {
			return rep, cli.CodedError{Code: cli.ExitUnavailable, Err: errors.New("step-down: no broker is active (lookahead-broker status shows the standbys)")}
		}
	}
	nc, err := haConnect(ctx, c)
	if err != nil {
		return rep, err
	}
	defer nc.Close()
	data, _ := json.Marshal(wire.StepDownRequest{Type: wire.TypeStepDown, Reason: "lookahead-broker step-down", Epoch: epoch})
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	msg, err := nc.RequestWithContext(rctx, wire.BrokerSubject(wire.VerbStepDown), data)
	if errors.Is(err, nats.ErrNoResponders) {
		return rep, cli.CodedError{Code: cli.ExitUnavailable, Err: fmt.Errorf("step-down: %s", client.NoBroker(nc.ConnectedUrlRedacted()))}
	}
	if err != nil {
		return rep, cli.CodedError{Code: cli.ExitUnavailable, Err: fmt.Errorf("step-down: no active broker answered: %w", err)}
	}
	if err := json.Unmarshal(msg.Data, &rep); err != nil {
		return rep, fmt.Errorf("step-down reply: %w", err)
	}
	return rep, nil
}
