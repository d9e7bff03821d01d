package replay

import (
	"strings"
	"testing"

	"lookahead/forecast"
)

func oneNode(slots ...forecast.Slot) []forecast.Forecast {
	return []forecast.Forecast{{Version: 1, Site: "s", Horizon: 1000,
		Nodes: []forecast.Node{{Name: "n", Procs: 8, Speed: 1}}, Slots: slots}}
}

// usable is the node's processors at t over slots of price ≤ maxPrice.
func usable(f forecast.Forecast, t int64, maxPrice float64) int {
	n := 0
	for _, s := range f.Slots {
		if s.Start <= t && t < s.End && s.Price <= maxPrice {
			n += s.Procs
		}
	}
	return n
}

func TestConsumeTakesExactlyTheAllocation(t *testing.T) {
	fcs := oneNode(
		forecast.Slot{Node: "n", Procs: 4, Start: 0, End: 100, Price: 1},
		forecast.Slot{Node: "n", Procs: 4, Start: 50, End: 200, Price: 2},
		forecast.Slot{Node: "n", Procs: 2, Start: 100, End: 300, Price: 1},
	)
	a := forecast.Allocation{Job: "j", Start: 60, End: 150, Parts: []forecast.Part{{Site: "s", Node: "n", Procs: 5}}}
	out, err := Consume(fcs, a, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []int64{0, 55, 60, 99, 100, 149, 150, 250} {
		want := usable(fcs[0], tt, 2)
		if tt >= 60 && tt < 150 {
			want -= 5
		}
		if got := usable(out[0], tt, 2); got != want {
			t.Errorf("t=%d: %d processors left, want %d", tt, got, want)
		}
	}
	if len(fcs[0].Slots) != 3 {
		t.Fatal("input modified")
	}
}

func TestConsumeRefusesWhatTheForecastDoesNotOffer(t *testing.T) {
	fcs := oneNode(
		forecast.Slot{Node: "n", Procs: 4, Start: 0, End: 100, Price: 1},
		forecast.Slot{Node: "n", Procs: 4, Start: 0, End: 100, Price: 5},
	)
	a := forecast.Allocation{Job: "j", Start: 10, End: 20, Parts: []forecast.Part{{Site: "s", Node: "n", Procs: 6}}}
	if _, err := Consume(fcs, a, 2); err == nil || !strings.Contains(err.Error(), "price") {
		t.Fatalf("6 processors at price ≤ 2 where 4 are offered: %v", err)
	}
	if _, err := Consume(fcs, a, 5); err != nil {
		t.Fatalf("at price 5 all 8 are offered: %v", err)
	}
	late := forecast.Allocation{Job: "j", Start: 90, End: 110, Parts: []forecast.Part{{Site: "s", Node: "n", Procs: 1}}}
	if _, err := Consume(fcs, late, 5); err == nil {
		t.Fatal("allocation past the slots' end accepted")
	}
}
