package web

import (
	"fmt"
	"reflect"
	"testing"

	"lookahead/forecast"
	"lookahead/wire"
)

func site(nodes int, slots func(i int, name string) []forecast.Slot) forecast.Forecast {
	f := forecast.Forecast{Version: 1, Site: "s", Seq: 1, Generated: 0, Horizon: 1000}
	for i := range nodes {
		n := fmt.Sprintf("n%04d", i)
		f.Nodes = append(f.Nodes, forecast.Node{Name: n, Procs: 4, Speed: 1})
		f.Slots = append(f.Slots, slots(i, n)...)
	}
	return f
}

// TestGanttOneRowPerNodeWhenTheyFit: spans of constant offered
// processors, clipped to the window, with the processor-weighted price.
func TestGanttOneRowPerNodeWhenTheyFit(t *testing.T) {
	f := site(2, func(i int, n string) []forecast.Slot {
		if i == 1 {
			return nil // nothing offered: busy the whole horizon
		}
		return []forecast.Slot{{Node: n, Procs: 4, Start: 0, End: 600, Price: 1}, {Node: n, Procs: 2, Start: 300, End: 900, Price: 4}}
	})
	g := BuildGantt(f, nil, 100, 800, 10)
	if len(g.Rows) != 2 || g.PerRow != 1 || g.Rows[0].Label != "n0000" || g.Rows[1].Procs != 4 {
		t.Fatalf("rows %+v", g.Rows)
	}
	want := []Free{
		{Start: 100, End: 300, Frac: 1, Price: 1},
		{Start: 300, End: 600, Frac: 1, Price: 2}, // 6 procs offered on a 4-proc node: capped at 1; (4×1+2×4)/6
		{Start: 600, End: 800, Frac: 0.5, Price: 4},
	}
	if !reflect.DeepEqual(g.Rows[0].Free, want) {
		t.Errorf("free %+v\nwant %+v", g.Rows[0].Free, want)
	}
	if len(g.Rows[1].Free) != 0 || g.PriceMin != 1 || g.PriceMax != 4 {
		t.Errorf("row 1 free %+v, prices %v–%v", g.Rows[1].Free, g.PriceMin, g.PriceMax)
	}
}

// TestGanttAggregatesBeyondMaxRows: 5,000 nodes in at most 120 rows of
// 42 consecutive nodes; every node is in one row; a group's free fraction
// is of the group's processors, and its bars sum the job's processors.
func TestGanttAggregatesBeyondMaxRows(t *testing.T) {
	f := site(5000, func(i int, n string) []forecast.Slot {
		if i%2 == 1 {
			return nil
		}
		return []forecast.Slot{{Node: n, Procs: 4, Start: 0, End: 1000, Price: 1}}
	})
	holds := []Hold{
		{Bar: Bar{Job: "g1", State: wire.JobReserved, Start: 0, End: 500, Procs: 4}, Node: "n0000"},
		{Bar: Bar{Job: "g1", State: wire.JobReserved, Start: 0, End: 500, Procs: 2}, Node: "n0041"},
		{Bar: Bar{Job: "g1", State: wire.JobReserved, Start: 0, End: 500, Procs: 4}, Node: "n0042"},
		{Bar: Bar{Job: "g2", State: "planned", Start: 2000, End: 3000, Procs: 4}, Node: "n0000"}, // outside the window
	}
	g := BuildGantt(f, holds, 0, 1000, 120)
	if g.PerRow != 42 || len(g.Rows) != 120 {
		t.Fatalf("%d rows of %d", len(g.Rows), g.PerRow)
	}
	total := 0
	for _, r := range g.Rows {
		total += r.Nodes
	}
	if total != 5000 || g.Rows[119].Nodes != 5000-119*42 || g.Rows[0].Label != "n0000 … n0041 (42)" {
		t.Fatalf("nodes %d, last row %d, label %q", total, g.Rows[119].Nodes, g.Rows[0].Label)
	}
	if fr := g.Rows[0].Free; len(fr) != 1 || fr[0].Frac != 0.5 {
		t.Errorf("row 0 free %+v", fr)
	}
	if b := g.Rows[0].Bars; len(b) != 1 || b[0].Procs != 6 || b[0].Job != "g1" {
		t.Errorf("row 0 bars %+v", b)
	}
	if b := g.Rows[1].Bars; len(b) != 1 || b[0].Procs != 4 {
		t.Errorf("row 1 bars %+v", b)
	}
}

// TestGanttRowsBounded: a request for more rows than MaxRowsCap, or none,
// stays within bounds.
func TestGanttRowsBounded(t *testing.T) {
	f := site(5000, func(int, string) []forecast.Slot { return nil })
	if g := BuildGantt(f, nil, 0, 10, 1<<30); len(g.Rows) > MaxRowsCap {
		t.Errorf("%d rows", len(g.Rows))
	}
	if g := BuildGantt(f, nil, 0, 10, 0); len(g.Rows) != 1 || g.Rows[0].Nodes != 5000 {
		t.Errorf("%d rows", len(g.Rows))
	}
	if g := BuildGantt(forecast.Forecast{Site: "empty"}, nil, 0, 10, 10); len(g.Rows) != 0 {
		t.Errorf("empty forecast: %+v", g)
	}
}

// TestHoldsOn: reservations of held jobs by node, a committing job's and
// a waiting job's plan (as "planned"), nothing of finished jobs.
func TestHoldsOn(t *testing.T) {
	alloc := &forecast.Allocation{Job: "w", Start: 10, End: 20, Parts: []forecast.Part{{Site: "a", Node: "a1", Procs: 2}, {Site: "b", Node: "b1", Procs: 3}}}
	jobs := []wire.JobStatus{
		{Job: forecast.JobRequest{ID: "r"}, State: wire.JobReserved, Plan: alloc,
			Reservations: []wire.Reservation{{Job: "r", Site: "a", Start: 5, End: 15, Nodes: []wire.NodeProcs{{Node: "a1", Procs: 1}, {Node: "a2", Procs: 2}}}}},
		{Job: forecast.JobRequest{ID: "w"}, State: wire.JobWaiting, Plan: alloc},
		{Job: forecast.JobRequest{ID: "c"}, State: wire.JobCommitting, Plan: alloc},
		{Job: forecast.JobRequest{ID: "f"}, State: wire.JobFinished, Plan: alloc},
	}
	got := HoldsOn("a", jobs)
	want := []Hold{
		{Bar: Bar{Job: "r", State: wire.JobReserved, Start: 5, End: 15, Procs: 1}, Node: "a1"},
		{Bar: Bar{Job: "r", State: wire.JobReserved, Start: 5, End: 15, Procs: 2}, Node: "a2"},
		{Bar: Bar{Job: "w", State: "planned", Start: 10, End: 20, Procs: 2}, Node: "a1"},
		{Bar: Bar{Job: "c", State: wire.JobCommitting, Start: 10, End: 20, Procs: 2}, Node: "a1"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("holds\n%+v\nwant\n%+v", got, want)
	}
}

// BenchmarkBuildGantt5000 cuts a 5,000-node forecast (two slots a node)
// with 50 reserved jobs into 50 rows, as /api/gantt does for the page.
func BenchmarkBuildGantt5000(b *testing.B) {
	f := site(5000, func(i int, n string) []forecast.Slot {
		cut := int64(100 + i%48*10)
		return []forecast.Slot{{Node: n, Procs: 4, Start: 0, End: cut, Price: 1 + float64(i%5)}, {Node: n, Procs: 2, Start: cut + 20, End: 1000, Price: 2}}
	})
	var holds []Hold
	for j := range 50 {
		for k := range 20 {
			holds = append(holds, Hold{Bar: Bar{Job: fmt.Sprintf("g%d", j), State: wire.JobReserved, Start: 50, End: 400, Procs: 2},
				Node: fmt.Sprintf("n%04d", (j*97+k*13)%5000)})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		BuildGantt(f, holds, 0, 1000, 50)
	}
}

// TestWorkWindow: the Gantt opens on the grid's work on the site: from a
// quarter of an hour before now to a little past the last hold that ends
// after now, at least an hour, at most the horizon; six hours ahead when
// the grid holds nothing there.
func TestWorkWindow(t *testing.T) {
	const now, horizon = 100_000, 100_000 + 24*3600
	hold := func(start, end int64) Hold { return Hold{Bar: Bar{Start: start, End: end}} }
	for _, c := range []struct {
		holds    []Hold
		from, to int64
	}{
		{nil, now - 900, now + 6*3600},
		{[]Hold{hold(now-7200, now-60)}, now - 900, now + 6*3600},                          // over: nothing ahead
		{[]Hold{hold(now+60, now+3600), hold(now, now+1800)}, now - 900, now + 3600 + 900}, // an hour of work: 1h15 ahead
		{[]Hold{hold(now, now+600)}, now - 900, now - 900 + 3600},                          // at least an hour
		{[]Hold{hold(now+7200, now+8*3600)}, now - 900, now + 8*3600 + (8*3600+900)/8},     // far work: an eighth to spare
		{[]Hold{hold(now, now+30*3600)}, now - 900, horizon},                               // at most the horizon
	} {
		if from, to := WorkWindow(now, horizon, c.holds); from != c.from || to != c.to {
			t.Errorf("holds %+v: [%d, %d), want [%d, %d)", c.holds, from-now, to-now, c.from-now, c.to-now)
		}
	}
}
