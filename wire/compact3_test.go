package wire

import (
	"fmt"
	"reflect"
	"testing"

	"lookahead/forecast"
)

// sharedIntervals is a forecast in the shape of a busy site's: the same
// intervals on many nodes (a queued local job over several nodes), one
// of them at another price on one node, and more distinct ends of one
// start than the end references reach.
func sharedIntervals() *forecast.Forecast {
	const gen = 1763780000
	f := &forecast.Forecast{Version: 1, Site: "busy", Seq: 3, Generated: gen, Horizon: gen + 86400}
	for n := range 40 {
		name := fmt.Sprintf("n%03d", n)
		f.Nodes = append(f.Nodes, forecast.Node{Name: name, Procs: 64, Speed: 1})
		price := 2.5
		if n == 17 {
			price = 3 // the same interval at another price
		}
		f.Slots = append(f.Slots,
			forecast.Slot{Node: name, Procs: 2, Start: gen, End: gen + 3600, Price: 1},
			forecast.Slot{Node: name, Procs: 2, Start: gen + 3600, End: gen + 7200 + int64(n%3), Price: price})
		for k := range 12 {
			f.Slots = append(f.Slots, forecast.Slot{Node: name, Procs: 1, Start: gen + 7200, End: gen + 7300 + int64(k)*10, Price: 1})
		}
		if n == 0 { // 20 ends of one start: more than the references reach
			for k := range 20 {
				f.Slots = append(f.Slots, forecast.Slot{Node: name, Procs: 1, Start: gen + 9000, End: gen + 9100 + int64(k)*10, Price: 1})
			}
		}
	}
	return f
}

// TestLAC3RefersToIntervalsSeenBefore: a forecast whose intervals repeat
// over nodes round-trips exactly, and its repeated ends and prices are
// coded as references, so it is smaller than in LAC2.
func TestLAC3RefersToIntervalsSeenBefore(t *testing.T) {
	f := sharedIntervals()
	data, err := EncodeForecast(f)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeForecast(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, f) {
		t.Fatal("round trip changed the forecast")
	}
	cols, _, err := slotColumns3(f)
	if err != nil {
		t.Fatal(err)
	}
	refs, samePrice := 0, 0
	for i, b := range cols[3].Bytes() {
		if b != 0 {
			refs++
			if cols[4].Bytes()[i] == 0 {
				samePrice++
			}
		}
	}
	if refs < len(f.Slots)/2 || samePrice == refs || samePrice < refs/2 {
		t.Fatalf("%d of %d ends coded as references, %d of them with the interval's price", refs, len(f.Slots), samePrice)
	}
	old, _ := encodeLAC2(f)
	if len(data) >= len(old) {
		t.Fatalf("LAC3 %d bytes, LAC2 %d", len(data), len(old))
	}
	t.Logf("%d slots: %d ends by reference (%d at the interval's price); %d bytes, LAC2 %d", len(f.Slots), refs, samePrice, len(data), len(old))
}
