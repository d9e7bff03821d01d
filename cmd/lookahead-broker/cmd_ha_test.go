package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"lookahead/broker/brokertest"
	"lookahead/broker/daemon"
	"lookahead/internal/natsconn"
	"lookahead/internal/natstest"
	"lookahead/wire"
)

// TestStatusAndStepDown: `status` lists the active broker and the standby;
// `step-down` hands over, and the standby becomes active at a newer epoch.
func TestStatusAndStepDown(t *testing.T) {
	srv := natstest.Server(t)
	run := func(name string) (*daemon.Broker, chan error) {
		b, err := daemon.New(natstest.Connect(t, srv), daemon.Config{Name: name, CycleInterval: time.Hour, Planner: brokertest.Planner, Queue: daemon.FCFS,
			LeaseTTL: 3 * time.Second, Log: zerolog.Nop()})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- b.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		return b, done
	}
	a, aDone := run("broker-a")
	<-a.Ready()
	b, _ := run("broker-b")
	conn := natsconn.Config{URL: srv.ClientURL()}
	var sts []wire.HAStatus
	for deadline := time.Now().Add(10 * time.Second); (len(sts) < 2 || sts[1].Leader == nil) && time.Now().Before(deadline); {
		sts, _ = gatherHA(context.Background(), conn, 500*time.Millisecond)
	}
	var out bytes.Buffer
	if err := writeHA(&out, sts); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "broker-a  active") || !strings.Contains(lines[2], "standby") ||
		!strings.Contains(lines[2], "broker-a") {
		t.Fatalf("status:\n%s", out.String())
	}
	epoch := a.Epoch()
	rep, err := stepDown(context.Background(), conn, 0) // the active broker's epoch, asked first
	if err != nil || rep.Code != wire.CodeOK || rep.Broker != "broker-a" || rep.Epoch != epoch {
		t.Fatalf("step-down: %+v %v", rep, err)
	}
	err = <-aDone
	aDone <- err // for the cleanup
	if !daemon.SteppedDownOnRequest(err) || !errors.Is(err, daemon.ErrSteppedDown) {
		t.Fatalf("broker-a ended with %v", err)
	}
	select {
	case <-b.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("broker-b did not take over")
	}
	if b.Epoch() <= epoch {
		t.Fatalf("broker-b's epoch %d, broker-a's was %d", b.Epoch(), epoch)
	}
	// broker-a's step-down again, naming its epoch: broker-b stays.
	if rep, err := stepDown(context.Background(), conn, epoch); err != nil || rep.Code != wire.CodeStale || rep.Broker != "broker-b" {
		t.Fatalf("the repeated step-down: %+v %v, want refused by broker-b", rep, err)
	}
}
