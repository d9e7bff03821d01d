package demo

import (
	"sync"
	"time"
)

// Clock is accelerated time: from its origin on, every real second is
// Speed simulated seconds. Safe for concurrent use.
type Clock struct {
	origin time.Time // simulated and real time agree here
	real   func() time.Time
	speed  float64
	mu     sync.Mutex
}

// NewClock starts an accelerated clock now.
func NewClock(speed float64) *Clock {
	return &Clock{origin: time.Now(), real: time.Now, speed: speed}
}

// Now is the simulated time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.real().Sub(c.origin)
	return c.origin.Add(time.Duration(float64(el) * c.speed))
}

// Origin is when the clock started (simulated time zero of the demo).
func (c *Clock) Origin() time.Time { return c.origin }

// Real converts a simulated duration to real time.
func (c *Clock) Real(sim time.Duration) time.Duration {
	return time.Duration(float64(sim) / c.speed)
}

// Until is the real time left until simulated Unix time t (0 if past).
func (c *Clock) Until(t int64) time.Duration {
	d := time.Unix(t, 0).Sub(c.Now())
	if d < 0 {
		return 0
	}
	return c.Real(d)
}
