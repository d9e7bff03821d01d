package agent

import (
	"sync"
	"time"

	"lookahead/wire"
)

// Request deadlines (wire.Timing, docs/formats.md "Request deadlines"): a
// request that reaches the agent after its sender stopped waiting changes
// nothing. Two rules, the earlier wins:
//
//   - received: the timeout counted from when the request reached the
//     agent, on this host's monotonic clock (a request that queued here
//     behind slow ones);
//   - sent: the timeout counted from the sender's send instant moved to
//     this site's clock by the offset the broker measured, plus
//     sentTolerance and the lag of this agent's last publications (a
//     request read late: the agent was stopped, or the link stalled).

// sentTolerance covers the broker's measure of the site's clock offset:
// it is taken in whole seconds, from messages that were in transit.
const sentTolerance = 2 * time.Second

// deadlineOf is when the sender of a request stops waiting, on this
// host's monotonic clock (zero: no deadline). received is when the
// request reached the agent; now and siteNow are the same instant on this
// host's clock and on the site's (Deps.Now); lag is what delays the
// broker's measure of this site's clock (pubLag). Pure.
// DeadlineMS (an older broker's wall-clock instant) is not used: it
// compared two hosts' clocks with no offset.
func deadlineOf(h requestHead, received, now, siteNow time.Time, lag time.Duration) time.Time {
	if h.timeoutMS <= 0 {
		return time.Time{}
	}
	timeout := time.Duration(h.timeoutMS) * time.Millisecond
	deadline := received.Add(timeout)
	if h.sentMS > 0 {
		sent := time.UnixMilli(h.sentMS + h.offsetMS) // on this site's clock
		left := sent.Add(timeout + sentTolerance + lag).Sub(siteNow)
		if byClock := now.Add(left); byClock.Before(deadline) {
			deadline = byClock
		}
	}
	return deadline
}

// checkDeadline answers expired once the sender has stopped waiting for
// the answer (deadline passed; zero means none): acting now could land
// after the sender undid the job everywhere.
func checkDeadline(deadline, now time.Time) *Refusal {
	if !deadline.IsZero() && !now.Before(deadline) {
		return refuse(wire.CodeExpired, "request expired: its sender stopped waiting for the answer %s ago; nothing was done",
			now.Sub(deadline).Round(time.Millisecond))
	}
	return nil
}

// pubLag keeps how long the agent's last publications took from their
// generation instant (which the broker compares with its clock to
// measure the site's offset) to their publication: the broker's offset
// is that much short of the site's clock. The longest of the last two
// counts (the broker's measure may come from either).
type pubLag struct {
	mu   sync.Mutex
	last [2]time.Duration
}

func (p *pubLag) note(d time.Duration) {
	p.mu.Lock()
	p.last[0], p.last[1] = p.last[1], d
	p.mu.Unlock()
}

func (p *pubLag) get() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return max(p.last[0], p.last[1])
}
