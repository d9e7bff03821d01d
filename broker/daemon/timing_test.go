package daemon

import (
	"context"
	"errors"
	"testing"
	"time"

	"lookahead/broker"
	"lookahead/wire"
)

// TestRequestsCarryTheirTiming: every request that changes a site carries
// how long the broker waits for it (from its context's deadline, less the
// margin siteTimeout keeps, unless the caller set it); on the wall clock,
// for a site whose clock offset was measured, also the send instant and
// that offset, so an agent that reads the request late refuses it. A
// simulated clock, or an offset not measured, sends no send instant.
func TestRequestsCarryTheirTiming(t *testing.T) {
	b := &Broker{cfg: Config{Clock: WallClock}, sites: map[string]*broker.Site{
		"alpha": {Name: "alpha", Offset: -3, OffsetKnown: true},
		"beta":  {Name: "beta", Offset: 0}, // read from the bucket at start: not measured
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	before := time.Now().UnixMilli()
	timingOf := func(v any) wire.Timing {
		t.Helper()
		out, err := b.stamp(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		switch r := out.(type) {
		case wire.ReserveRequest:
			return r.Timing
		case wire.ReleaseRequest:
			return r.Timing
		case wire.DispatchRequest:
			return r.Timing
		case wire.StopRequest:
			return r.Timing
		}
		t.Fatalf("stamp returned %T", out)
		return wire.Timing{}
	}
	for _, v := range []any{wire.ReserveRequest{Site: "alpha"}, wire.ReleaseRequest{Site: "alpha"},
		wire.DispatchRequest{Site: "alpha"}, wire.StopRequest{Site: "alpha"}} {
		tm := timingOf(v)
		if tm.TimeoutMS < 8900 || tm.TimeoutMS > 9000 || tm.ClockOffsetMS != -3000 || tm.SentMS < before || tm.SentMS > time.Now().UnixMilli() {
			t.Errorf("%T to alpha: %+v, want timeout 9 s (10 s less 1 s), offset -3 s, sent now", v, tm)
		}
	}
	set := wire.ReserveRequest{Site: "alpha"}
	set.TimeoutMS = 6300
	if tm := timingOf(set); tm.TimeoutMS != 6300 {
		t.Errorf("a timeout the caller set: %+v", tm)
	}
	if tm := timingOf(wire.ReleaseRequest{Site: "beta"}); tm.SentMS != 0 || tm.ClockOffsetMS != 0 || tm.TimeoutMS == 0 {
		t.Errorf("to a site whose offset was not measured: %+v, want a timeout only", tm)
	}
	b.cfg.Clock = &testClock{t: time.Now()}
	if tm := timingOf(wire.StopRequest{Site: "alpha"}); tm.SentMS != 0 || tm.TimeoutMS == 0 {
		t.Errorf("on a simulated clock: %+v, want a timeout only", tm)
	}
}

// TestDispatchExpiredIsRetried: a dispatch the site answered expired (it
// waited there past its timeout; nothing was submitted) is sent again, as
// one left unanswered; any other refusal fails the part.
func TestDispatchExpiredIsRetried(t *testing.T) {
	for _, tc := range []struct {
		code  string
		err   error
		again bool
	}{
		{wire.CodeExpired, nil, true},
		{"", errors.New("nats: timeout"), true},
		{wire.CodeOK, nil, false},
		{wire.CodeNotFound, nil, false},
		{wire.CodeForbidden, nil, false},
	} {
		if got := dispatchAgain(wire.DispatchReply{Code: tc.code}, tc.err); got != tc.again {
			t.Errorf("answer %q (err %v): dispatch again %v, want %v", tc.code, tc.err, got, tc.again)
		}
	}
}
