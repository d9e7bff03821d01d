package brokertest

import "lookahead/forecast"

// SplitGrid is the grid of the split window's tests (docs/coalloc.md, "The
// split window"): site a (one node of 16 processors) is free from 2000,
// sites b and c (8 each) from now; local jobs are forecast to hold b's
// node for held seconds from 10,000 (price 2; every owner's free price is
// 1), held × 8 processor-seconds of queued local work on a grid of 32
// processors. A 12-processor job of 1000 s fits one site only at a
// (2000–3000), or b and c from 0.
func SplitGrid(held int64) []forecast.Forecast {
	site := func(name string, procs int, slots ...forecast.Slot) forecast.Forecast {
		node := name + "1"
		for i := range slots {
			slots[i].Node, slots[i].Procs = node, procs
		}
		return forecast.Forecast{Version: 1, Site: name, Seq: 1, Horizon: 1 << 40, FreePrice: 1,
			Nodes: []forecast.Node{{Name: node, Procs: procs, Speed: 1, MemMB: 1000}}, Slots: slots}
	}
	b := []forecast.Slot{{Start: 0, End: 10_000, Price: 1}, {Start: 10_000 + held, End: 1 << 30, Price: 1}}
	if held > 0 {
		b = append(b, forecast.Slot{Start: 10_000, End: 10_000 + held, Price: 2})
	}
	return []forecast.Forecast{
		site("a", 16, forecast.Slot{Start: 2000, End: 1 << 30, Price: 1}),
		site("b", 8, b...),
		site("c", 8, forecast.Slot{Start: 0, End: 1 << 30, Price: 1}),
	}
}
