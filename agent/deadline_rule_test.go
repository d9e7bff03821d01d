package agent

import (
	"testing"
	"time"
)

// TestDeadlineOfTakesTheEarlierRule: the deadline is the earlier of the
// timeout after the request was received and the timeout after it was
// sent (moved to the site's clock by the broker's offset), the latter
// widened by sentTolerance and by the lag of the agent's publications
// (the broker's offset is short of the site's clock by that much).
func TestDeadlineOfTakesTheEarlierRule(t *testing.T) {
	site := time.Unix(1_763_780_000, 0)
	received := time.Now()
	h := requestHead{timeoutMS: 5000}
	if d := deadlineOf(requestHead{}, received, received, site, 0); !d.IsZero() {
		t.Errorf("no timeout: deadline %v", d)
	}
	if d := deadlineOf(h, received, received, site, 0); !d.Equal(received.Add(5 * time.Second)) {
		t.Errorf("no send instant: %v after receipt, want 5 s", d.Sub(received))
	}
	for _, tc := range []struct {
		name      string
		sentAgo   time.Duration // on the site's clock
		lag, left time.Duration // left: from now
	}{
		{"just sent: the receipt rule", 0, 0, 5 * time.Second},
		{"sent 4 s ago", 4 * time.Second, 0, 3 * time.Second},
		{"sent 4 s ago, publications 10 s late", 4 * time.Second, 10 * time.Second, 5 * time.Second},
		{"sent 7 s ago, publications 1 s late", 7 * time.Second, time.Second, time.Second},
		{"sent 2 min ago", 2 * time.Minute, 0, -113 * time.Second},
	} {
		h := h
		h.offsetMS = 30_000 // the site's clock runs 30 s ahead of the broker's
		h.sentMS = site.Add(-tc.sentAgo).UnixMilli() - h.offsetMS
		now := received.Add(time.Second) // read a second after it was received
		d := deadlineOf(h, now, now, site, tc.lag)
		if got := d.Sub(now); got != tc.left {
			t.Errorf("%s: deadline in %v, want %v", tc.name, got, tc.left)
		}
	}
}
