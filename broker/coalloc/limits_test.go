package coalloc

import (
	"errors"
	"strings"
	"testing"

	"lookahead/forecast"
)

func TestValidateForecastPlannerLimits(t *testing.T) {
	good := mkSite("a", []forecast.Node{nd("n1", 8, 1)}, sl("n1", 8, 0, 100, 1))
	if err := ValidateForecast(&good); err != nil {
		t.Fatalf("good forecast refused: %v", err)
	}
	cases := map[string]func(f *forecast.Forecast){
		"1e18 procs":       func(f *forecast.Forecast) { f.Nodes[0].Procs, f.Slots[0].Procs = 1e18, 1 },
		"negative start":   func(f *forecast.Forecast) { f.Slots[0].Start = -5 },
		"end past 2^40":    func(f *forecast.Forecast) { f.Slots[0].End = MaxInstant + 1 },
		"horizon past":     func(f *forecast.Forecast) { f.Horizon = 1 << 62 },
		"v1 contract, too": func(f *forecast.Forecast) { f.Slots[0].Price = -1 },
	}
	for name, mutate := range cases {
		f := mkSite("a", []forecast.Node{nd("n1", 8, 1)}, sl("n1", 8, 0, 100, 1))
		mutate(&f)
		err := ValidateForecast(&f)
		if !errors.Is(err, forecast.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
		// NewPool refuses exactly what ValidateForecast refuses.
		if _, perr := NewPool([]forecast.Forecast{f}, Options{}); perr == nil {
			t.Errorf("%s: refused by ValidateForecast but NewPool took it", name)
		}
	}
}

// A job whose cost would overflow float64 (a max_price past the model's
// limit, docs/formats.md) gets an "invalid:" answer and takes nothing, so
// the plan can still be written as JSON and the next job fits.
func TestNonFiniteCostIsRefused(t *testing.T) {
	f := mkSite("a", []forecast.Node{nd("n1", 8, 1)}, sl("n1", 8, 0, 1<<30, forecast.MaxPrice))
	allocs, err := PlanQueue([]forecast.Forecast{f}, []forecast.JobRequest{
		jb("huge", 8, 36000, 1e308), jb("next", 8, 36000, 1e308),
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range allocs {
		if a.Placed() || !strings.HasPrefix(a.Error, InvalidPrefix) || a.Cost != 0 {
			t.Fatalf("allocation %+v, want refused as invalid", a)
		}
	}
	cheap := mkSite("a", []forecast.Node{nd("n1", 8, 1)}, sl("n1", 8, 0, 1<<30, 1))
	allocs, err = PlanQueue([]forecast.Forecast{cheap}, []forecast.JobRequest{jb("ok", 8, 3600, 1)}, Options{})
	if err != nil || !allocs[0].Placed() || allocs[0].Cost != 8 {
		t.Fatalf("cheap job: %+v %v", allocs, err)
	}
}
