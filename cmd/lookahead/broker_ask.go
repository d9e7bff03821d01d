package main

import (
	"context"

	"lookahead/broker/client"
)

// ask dials the broker, makes one call and hangs up. Failing to reach the
// broker or NATS exits with cli.ExitUnavailable.
func ask[R any](ctx context.Context, conn *client.Conn, call func(context.Context, *client.Client) (R, error)) (R, error) {
	var zero R
	c, err := conn.Dial(ctx)
	if err != nil {
		return zero, unavailable(err)
	}
	defer c.Close()
	r, err := call(ctx, c)
	if err != nil {
		return zero, unavailable(err)
	}
	return r, nil
}
