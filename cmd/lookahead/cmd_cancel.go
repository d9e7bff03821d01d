package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"lookahead/broker/client"
	"lookahead/forecast"
	"lookahead/internal/cli"
	"lookahead/wire"
)

type cancelOptions struct {
	conn   client.Conn
	output string
}

func newCancelCommand() *cobra.Command {
	o := &cancelOptions{}
	cmd := &cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a grid job: take it out of the queue or release its reservations",
		Long: `Cancel a waiting or reserved grid job. A reserved job's reservations are
released on every site and its cost is refunded. A job submitted with
--script can also be cancelled once dispatched or running: its parts are
deleted (qdel) on every site, its reservations released, and it pays for
the share of the reservation held until the cancel. A running job whose
parts you submitted yourself cannot be cancelled here (cancel its parts on
the sites).

Exit codes: 0 cancelled, 3 broker unreachable, 4 refused (not found, not
yours, already ended).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCancel(cmd.Context(), cmd, o, args[0])
		},
	}
	o.conn.Bind(cmd.Flags())
	cli.AddOutputFlag(cmd, &o.output)
	return cmd
}

func runCancel(ctx context.Context, cmd *cobra.Command, o *cancelOptions, id string) error {
	if err := cli.CheckFormat(o.output); err != nil {
		return err
	}
	if err := checkJobID(id); err != nil {
		return err
	}
	reply, err := ask(ctx, &o.conn, func(ctx context.Context, c *client.Client) (wire.CancelReply, error) { return c.Cancel(ctx, id) })
	if err != nil {
		return err
	}
	if o.output == cli.FormatJSON {
		if err := cli.WriteJSON(cmd.OutOrStdout(), reply); err != nil {
			return err
		}
	} else if reply.Code == wire.CodeOK {
		fmt.Fprintf(cmd.OutOrStdout(), "%s cancelled", id)
		if reply.Message != "" {
			fmt.Fprintf(cmd.OutOrStdout(), ": %s", reply.Message)
		}
		fmt.Fprintln(cmd.OutOrStdout())
	}
	if reply.Code == wire.CodeInvalid { // a state refusal, not bad input
		return cli.CodedError{Code: cli.ExitRefused, Err: fmt.Errorf("refused: %s", reply.Message)}
	}
	return refusal(reply.Code, reply.Message)
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

// checkJobID refuses a job id no job can have (ids are plain names, as
// the broker's gN or a submitter's own) before asking the broker.
func checkJobID(id string) error {
	if !forecast.IsPlainName(id) {
		return cli.Usagef("job id %q: not a plain name (letters, digits, _ . -), as the broker's g12", forecast.Clip(id, forecast.MaxNameBytes))
	}
	return nil
}
