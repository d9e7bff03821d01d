package daemon

import (
	"sync"
	"testing"

	"lookahead/forecast"
	"lookahead/wire"
)

// Issue 23.2: the broker took slots outside a forecast's own window and
// planned into them; intake clips them to [generated, horizon] or drops
// them, and counts both.
func TestIntakeClipsSlotsToTheForecastWindow(t *testing.T) {
	const g, h = 1763780000, 1763780000 + 3600
	f := forecast.Forecast{Version: 1, Site: "alpha", Seq: 1, Generated: g, Horizon: h,
		Nodes: []forecast.Node{{Name: "n1", Procs: 8, Speed: 1}},
		Slots: []forecast.Slot{
			{Node: "n1", Procs: 6, Start: g, End: h + 26*3600, Price: 1},
			{Node: "n1", Procs: 4, Start: g - 9*86400, End: g - 8*86400, Price: 1},
			{Node: "n1", Procs: 2, Start: g + 60, End: g + 120, Price: 1},
		}}
	data, err := wire.EncodeForecast(&f)
	if err != nil {
		t.Fatal(err)
	}
	got, window, err := decodeSiteForecast("alpha", data)
	if err != nil {
		t.Fatal(err)
	}
	if window != (forecast.WindowCount{Clipped: 1, Dropped: 1}) {
		t.Errorf("count %+v, want one clipped and one dropped", window)
	}
	for _, s := range got.Slots {
		if s.Start < g || s.End > h {
			t.Errorf("slot [%d, %d) taken outside the window [%d, %d]", s.Start, s.End, g, h)
		}
	}
	if len(got.Slots) != 2 {
		t.Errorf("slots %+v, want 2", got.Slots)
	}
}

// windowMetrics records the slots the broker counted outside a window.
type windowMetrics struct {
	noMetrics
	mu               sync.Mutex
	clipped, dropped int
}

func (m *windowMetrics) SlotsOutsideWindow(clipped, dropped int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clipped += clipped
	m.dropped += dropped
}

// Issue 23.2 ("count both"): a forecast taken from the bucket with slots
// outside its window is counted in the broker's metrics, not only logged.
func TestIntakeCountsSlotsOutsideTheWindow(t *testing.T) {
	e := newEnv(t)
	m := &windowMetrics{}
	r := e.startBroker(func(c *Config) { c.Metrics = m })
	now := e.clock.Now().Unix()
	f := forecast.Forecast{Version: 1, Site: "alpha", Seq: 1, Generated: now, Horizon: now + 3600,
		Nodes: []forecast.Node{{Name: "n1", Procs: 8, Speed: 1}},
		Slots: []forecast.Slot{
			{Node: "n1", Procs: 8, Start: now, End: now + 30*3600, Price: 1},
			{Node: "n1", Procs: 4, Start: now - 9*86400, End: now - 8*86400, Price: 1},
		}}
	e.putForecast("alpha", f)
	waitSite(t, r.b, "alpha", func(s wire.SiteStatus) bool { return s.Seq == 1 })
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.clipped != 1 || m.dropped != 1 {
		t.Errorf("counted %d clipped, %d dropped; want 1 and 1", m.clipped, m.dropped)
	}
}
