package agent

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"lookahead/forecast"
	"lookahead/forecast/sim"
)

// countingEngine runs the built-in engine and counts runs; a run takes
// hold of fake time (synctest) and fails if another run is in progress.
type countingEngine struct {
	mu       sync.Mutex
	runs     int
	inFlight int
	overlap  bool
	took     time.Duration
}

func (c *countingEngine) Forecast(ctx context.Context, snap forecast.Snapshot, now time.Time) (forecast.Forecast, []forecast.Prediction, error) {
	c.mu.Lock()
	c.runs++
	c.inFlight++
	c.overlap = c.overlap || c.inFlight > 1
	c.mu.Unlock()
	time.Sleep(c.took)
	defer func() { c.mu.Lock(); c.inFlight--; c.mu.Unlock() }()
	return BuiltinEngine{Horizon: time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()}.Forecast(ctx, snap, now)
}

func (c *countingEngine) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs
}

type staticSnap struct{}

func (staticSnap) Snapshot(context.Context) (forecast.Snapshot, error) {
	return forecast.Snapshot{Site: "s", Taken: 1, Nodes: []forecast.SnapshotNode{
		{Name: "n1", Procs: 4, State: []string{forecast.NodeFree}, Speed: 1}}}, nil
}

func loopAgent(t *testing.T, eng *countingEngine) (*Agent, func()) {
	a, err := New(Config{Site: "s", Debounce: 2 * time.Second, Refresh: time.Minute, ForecastTTL: 5 * time.Minute},
		Deps{Snapshotter: staticSnap{}, Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { a.loop(ctx); close(done) }()
	return a, func() { cancel(); <-done }
}

func TestDebounceBurstCostsOneForecast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eng := &countingEngine{}
		a, stop := loopAgent(t, eng)
		defer stop()
		synctest.Wait()
		if got := eng.count(); got != 1 {
			t.Fatalf("%d forecasts at start, want 1", got)
		}
		for range 1000 {
			a.Notify("burst")
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if got := eng.count(); got != 1 {
			t.Fatalf("%d forecasts inside the debounce delay, want 1", got)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if got := eng.count(); got != 2 {
			t.Fatalf("%d forecasts after a burst of 1,000 events, want 2", got)
		}
		// Nothing more happens without events until the refresh.
		time.Sleep(50 * time.Second)
		synctest.Wait()
		if got := eng.count(); got != 2 {
			t.Fatalf("%d forecasts before the refresh, want 2", got)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if got := eng.count(); got != 3 {
			t.Fatalf("%d forecasts after the refresh, want 3", got)
		}
	})
}

func TestEventsDuringABuildCostOneMoreForecastNeverTwoAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eng := &countingEngine{took: 10 * time.Second}
		a, stop := loopAgent(t, eng)
		defer stop()
		// The start-up build runs for 10 s; events keep arriving meanwhile.
		for range 5 {
			time.Sleep(time.Second)
			for range 100 {
				a.Notify("burst")
			}
		}
		synctest.Wait()
		if got := eng.count(); got != 1 {
			t.Fatalf("%d forecasts while the first runs, want 1", got)
		}
		time.Sleep(5*time.Second + 2*time.Second + 10*time.Second)
		synctest.Wait()
		if got := eng.count(); got != 2 {
			t.Fatalf("%d forecasts, want 2: the events during a build cost one more", got)
		}
		time.Sleep(30 * time.Second)
		synctest.Wait()
		if got := eng.count(); got != 2 || eng.overlap {
			t.Fatalf("%d forecasts (overlap %v), want 2 and none at once", got, eng.overlap)
		}
	})
}
