package agent

import (
	"time"

	"lookahead/wire"
)

// deadlineOf is when the sender of a request stops waiting, on this
// host's monotonic clock: the request's timeout after it was received.
// Zero when the request sets no timeout. DeadlineMS (an older broker's
// wall-clock instant) is not used: it would compare two hosts' clocks.
func deadlineOf(h requestHead, received time.Time) time.Time {
	if h.timeoutMS <= 0 {
		return time.Time{}
	}
	return received.Add(time.Duration(h.timeoutMS) * time.Millisecond)
}

// checkDeadline answers expired once the sender has stopped waiting for
// the answer (deadline passed; zero means none): acting now could land
// after the sender undid the job everywhere.
func checkDeadline(deadline, now time.Time) *Refusal {
	if !deadline.IsZero() && !now.Before(deadline) {
		return refuse(wire.CodeExpired, "request expired: it waited here %s past its timeout; the sender no longer waits for it, nothing was done",
			now.Sub(deadline).Round(time.Millisecond))
	}
	return nil
}
