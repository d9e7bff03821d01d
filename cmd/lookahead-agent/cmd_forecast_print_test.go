package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"lookahead/forecast"
)

// The table view shows times as UTC times, not Unix seconds, lists the
// slots by node and start, and bounds the listing.
func TestPrintForecastSlots(t *testing.T) {
	f := &forecast.Forecast{Site: "vm", Generated: 1795565283, Horizon: 1795565283 + 86400,
		Nodes: []forecast.Node{{Name: "vm", Procs: 8}}}
	for i := maxSlotRows + 2; i > 0; i-- {
		f.Slots = append(f.Slots, forecast.Slot{Node: "vm", Procs: i % 8, Start: 1795565283 + int64(i)*60, End: 1795565283 + int64(i)*60 + 30, Price: 1})
	}
	var b bytes.Buffer
	if err := printForecast(&b, f); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"generated 2026-11-25 00:08:03Z", "horizon 2026-11-26 00:08:03Z",
		"2026-11-25 00:09:03Z  2026-11-25 00:09:33Z", "… 2 more slots"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, fmt.Sprint(f.Generated)) {
		t.Errorf("Unix seconds in the table:\n%s", out)
	}
	if first, last := strings.Index(out, "00:09:03Z"), strings.Index(out, "00:10:03Z"); first < 0 || last < first {
		t.Errorf("slots not in start order:\n%s", out)
	}
}
