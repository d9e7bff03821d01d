package daemon

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"lookahead/internal/durfmt"
)

// health is what readiness is judged on: the outcome of the last planning
// cycle and of the last append to the job stream.
type health struct {
	mu         sync.Mutex
	cycleOK    time.Time                   // last cycle that succeeded (wall clock)
	recent     [recentCycles]time.Duration // the lengths of the last successful cycles
	next       int                         // where the next one goes in recent
	cycleErr   error                       // the last cycle's error, nil when it succeeded
	appendErr  error                       // the last append's error, nil when it succeeded
	appendedAt time.Time
}

// recentCycles is how many successful cycles' lengths readiness
// remembers: the cycles since the last one that planned the whole queue
// from scratch (each new forecast revision at scale), which takes many
// times an incremental cycle.
const recentCycles = 64

// cycleDone records the outcome of a cycle that began at began.
func (h *health) cycleDone(began time.Time, err error) {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cycleErr = err
	if err == nil {
		h.cycleOK, h.recent[h.next] = now, now.Sub(began)
		h.next = (h.next + 1) % recentCycles
	}
}

// longest is the longest of the recent successful cycles.
func (h *health) longest() time.Duration {
	return slices.Max(h.recent[:])
}

// stuck says, at now, why the broker is judged stuck ("" when it is not):
// no cycle has finished within base (lateCycle) plus twice the longest
// recent successful cycle since the last one ended. A queue whose full
// cycles take longer than the cycle interval (a hundred thousand jobs,
// each new forecast revision planned from scratch between short
// incremental cycles) is working, not stuck; a cycle that never ends
// still shows.
func (h *health) stuck(now time.Time, base time.Duration) string {
	late := base + 2*h.longest()
	if h.cycleOK.IsZero() || now.Sub(h.cycleOK) <= late {
		return ""
	}
	// the same words for as long as it lasts: the daemon logs a change
	// of readiness once, not every time it looks
	return fmt.Sprintf("no planning cycle finished since %s (longer than %s)",
		h.cycleOK.UTC().Format(time.TimeOnly), durfmt.Duration(late))
}

func (h *health) appended(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.appendErr, h.appendedAt = err, time.Now()
}

// Healthy reports whether the broker works: it has replayed its queue, is
// connected to NATS, can append to the job stream, and its planning
// cycles succeed. When not, reason says what is wrong; the daemon serves
// it on /readyz (503) and tells systemd.
func (b *Broker) Healthy() (bool, string) {
	if b.Epoch() == 0 {
		return false, b.notActive()
	}
	select {
	case <-b.ready:
	default:
		return false, "starting: replaying the queue and reading the stored forecasts"
	}
	if st := b.nc.Status(); st != nats.CONNECTED {
		return false, "nats " + st.String()
	}
	h := &b.health
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.appendErr != nil {
		return false, fmt.Sprintf("the job stream refuses events: %v", h.appendErr)
	}
	if h.cycleErr != nil {
		return false, fmt.Sprintf("planning cycle failed: %v", h.cycleErr)
	}
	if why := h.stuck(time.Now(), lateCycle(b.cfg)); why != "" {
		return false, why
	}
	return true, ""
}

// Refused counts the site messages the broker refused since it started:
// forecasts and heartbeats, and job events.
func (b *Broker) Refused() (forecasts, events int64) {
	return b.badForecasts.Load(), b.badEvents.Load()
}

// notActive says why a broker that is not active does not serve.
func (b *Broker) notActive() string {
	b.term.mu.Lock()
	defer b.term.mu.Unlock()
	switch {
	case b.term.lost != nil:
		return "stepped down: " + b.term.lost.Error()
	case b.term.holder != nil:
		return fmt.Sprintf("standby: broker %s is active (epoch %d)", b.term.holder.Broker, b.term.holder.Epoch)
	}
	return "starting: taking the leadership lease, replaying the queue and reading the stored forecasts"
}

// lateCycle is how long after the last successful cycle the broker is
// judged stuck, besides twice that cycle's length (health.stuck): three
// cycle intervals and the debounce, plus one request
// timeout, what the cycle that finds a site hung waits for it (later
// cycles do not wait for that site: answering.go).
func lateCycle(c Config) time.Duration {
	return 3*c.CycleInterval + c.Debounce + c.ReserveTimeout
}
