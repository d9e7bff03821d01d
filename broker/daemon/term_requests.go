package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"lookahead/wire"
)

// stamp sets the term's epoch and the timing (wire.Timing) on a request
// that changes a site (reserve, release, dispatch, stop); such a request
// is not sent once the term has ended. Other requests (list) pass as they
// are.
func (b *Broker) stamp(ctx context.Context, v any) (any, error) {
	epoch := b.Epoch()
	switch r := v.(type) {
	case wire.ReserveRequest:
		r.Epoch, r.Timing = epoch, b.timing(ctx, r.Site, r.Timing)
		v = r
	case wire.ReleaseRequest:
		r.Epoch, r.Timing = epoch, b.timing(ctx, r.Site, r.Timing)
		v = r
	case wire.DispatchRequest:
		r.Epoch, r.Timing = epoch, b.timing(ctx, r.Site, r.Timing)
		v = r
	case wire.StopRequest:
		r.Epoch, r.Timing = epoch, b.timing(ctx, r.Site, r.Timing)
		v = r
	default:
		return v, nil
	}
	if err := b.acting(); err != nil {
		return nil, fmt.Errorf("not sent: %w", err)
	}
	return v, nil
}

// timing says until when the broker waits for a request to site: its
// timeout (set by the caller, or the request's deadline less a margin:
// siteTimeout), and, on the wall clock, when it was sent and the site's
// clock offset, so an agent that reads it late refuses it. A site whose
// offset was not measured yet, and a broker on a simulated clock (the
// demo's), send no send instant: it would mean nothing on the site's
// clock.
func (b *Broker) timing(ctx context.Context, site string, t wire.Timing) wire.Timing {
	if d, ok := ctx.Deadline(); ok && t.TimeoutMS == 0 {
		t.TimeoutMS = siteTimeout(time.Until(d)).Milliseconds()
	}
	if _, wall := b.cfg.Clock.(wallClock); !wall || t.TimeoutMS <= 0 {
		return t
	}
	b.mu.Lock()
	s := b.sites[site]
	known := s != nil && s.OffsetKnown
	if known {
		t.ClockOffsetMS = s.Offset * 1000
	}
	b.mu.Unlock()
	if known {
		t.SentMS = b.cfg.Clock.Now().UnixMilli()
	}
	return t
}

// checkFenced steps down when a site answered fenced: it has seen a newer
// term, so another broker is active.
func (b *Broker) checkFenced(subject string, out any) {
	code, msg := "", ""
	switch r := out.(type) {
	case *wire.ReserveReply:
		code, msg = r.Code, r.Message
	case *wire.ReleaseReply:
		code, msg = r.Code, r.Message
	case *wire.DispatchReply:
		code, msg = r.Code, r.Message
	case *wire.StopReply:
		code, msg = r.Code, r.Message
	}
	if code == wire.CodeFenced {
		b.loseLeadership(fmt.Errorf("%w: %s answered fenced: %s", errLostLeadership, subject, msg))
	}
}

// onHAStatus answers with this broker's own role and the lease as it
// knows it.
func (b *Broker) onHAStatus(m *nats.Msg) {
	st := b.HAStatus()
	st.LeaseTTL = b.term.lease.ttl.Milliseconds()
	if data, err := json.Marshal(st); err == nil {
		m.Respond(data)
	}
}

// onStepDown hands over: the reply goes out first, then the term ends and
// the lease is deleted, so a standby takes it at its next try. Only a
// request naming this broker's term does it (stepDownRefusal).
func (b *Broker) onStepDown(m *nats.Msg) {
	var req wire.StepDownRequest
	epoch := b.Epoch()
	reply := wire.StepDownReply{Type: wire.TypeStepDownRep, Code: wire.CodeOK, Broker: b.cfg.Name, Epoch: epoch,
		Message: "stepping down: a standby takes over within a second or two"}
	if err := json.Unmarshal(m.Data, &req); err != nil {
		reply.Code, reply.Message = wire.CodeInvalid, "malformed step-down request: "+wire.Clip(err.Error(), 200)
	} else if code, why := stepDownRefusal(req, epoch); code != "" {
		reply.Code, reply.Message = code, why
	}
	if data, err := json.Marshal(reply); err == nil {
		m.Respond(data)
	}
	if reply.Code != wire.CodeOK {
		b.log.Warn().Uint64("asked", req.Epoch).Uint64("epoch", epoch).Str("why", reply.Message).Msg("step-down refused")
		return
	}
	b.nc.Flush()
	b.loseLeadership(errStepDownAsked)
}

// stepDownRefusal says why a step-down request does not depose the term
// of epoch (the broker's; 0: not active): it names no epoch, or another
// one. Pure.
func stepDownRefusal(req wire.StepDownRequest, epoch uint64) (code, why string) {
	switch {
	case req.Type != wire.TypeStepDown:
		return wire.CodeInvalid, fmt.Sprintf("type %q: want %q", wire.Clip(req.Type, 64), wire.TypeStepDown)
	case req.Epoch == 0:
		return wire.CodeInvalid, fmt.Sprintf("the request names no epoch: say which term to end (lookahead-broker step-down names the active one's; this broker is in epoch %d)", epoch)
	case epoch == 0:
		return wire.CodeStale, fmt.Sprintf("epoch %d: this broker is not active; nothing done", req.Epoch)
	case req.Epoch != epoch:
		return wire.CodeStale, fmt.Sprintf("epoch %d is not this broker's term (it is in epoch %d): a step-down ends only the term it names; nothing done", req.Epoch, epoch)
	}
	return "", ""
}

// setLeaderMetric reports leadership to metrics that know it.
func (b *Broker) setLeaderMetric(active bool, epoch uint64) {
	if m, ok := b.cfg.Metrics.(interface{ SetLeader(bool, uint64) }); ok {
		m.SetLeader(active, epoch)
	}
}

// retryTransient runs f until it succeeds, fails for good or ctx ends: a
// timeout or no responders (a cluster still electing its JetStream
// leader, or a server away) is retried every second, and logged; a
// stream that could not be created is not (the create times out when the
// broker may not create it).
func retryTransient(ctx context.Context, b *Broker, f func() error) error {
	for {
		err := f()
		transient := errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrNoResponders)
		if err == nil || !transient || errors.Is(err, errNotCreated) {
			return err
		}
		b.log.Warn().Err(err).Msg("JetStream did not answer; retrying")
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}
