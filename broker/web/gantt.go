package web

import (
	"fmt"
	"slices"
	"sort"

	"lookahead/forecast"
)

// Bar is a grid job's hold on a row over [Start, End): a reservation, or a
// waiting job's planned allocation (State "planned").
type Bar struct {
	Job   string `json:"job"`
	State string `json:"state"`
	Start int64  `json:"start"`
	End   int64  `json:"end"`
	Procs int    `json:"procs"`
}

// Hold is a grid job's processors on one node of the site over [Start, End).
type Hold struct {
	Bar
	Node string
}

// Free is a span of a row's free time: Frac of the row's processors are
// offered, at Price credits per CPU-hour (the processor-weighted mean of
// the slots that cover it).
type Free struct {
	Start int64   `json:"start"`
	End   int64   `json:"end"`
	Frac  float64 `json:"frac"`
	Price float64 `json:"price"`
}

// Row is one node, or a group of consecutive nodes when the site has more
// nodes than the view has rows.
type Row struct {
	Label string `json:"label"`
	Nodes int    `json:"nodes"`
	Procs int    `json:"procs"`
	Free  []Free `json:"free"`
	Bars  []Bar  `json:"bars"`
}

// Gantt is one site's forecast over a window, as rows.
type Gantt struct {
	Site     string  `json:"site"`
	From     int64   `json:"from"`
	To       int64   `json:"to"`
	Horizon  int64   `json:"horizon"`
	Nodes    int     `json:"nodes"`
	PerRow   int     `json:"per_row"`
	MaxRows  int     `json:"max_rows"`
	Rows     []Row   `json:"rows"`
	PriceMin float64 `json:"price_min"`
	PriceMax float64 `json:"price_max"`
}

// MaxRowsCap bounds the rows one Gantt has, whatever is asked.
const MaxRowsCap = 2000

// BuildGantt cuts f into at most maxRows rows over [from, to): one row
// per node when they fit, else groups of PerRow consecutive nodes (the
// forecast's node order). holds are the grid's reservations and planned
// parts on this site. Busy time is what is not offered: a forecast
// carries no local jobs.
func BuildGantt(f forecast.Forecast, holds []Hold, from, to int64, maxRows int) Gantt {
	maxRows = min(max(maxRows, 1), MaxRowsCap)
	n := len(f.Nodes)
	per := max(1, (n+maxRows-1)/maxRows)
	g := Gantt{Site: f.Site, From: from, To: to, Horizon: f.Horizon, Nodes: n, PerRow: per, MaxRows: maxRows, Rows: []Row{}}
	rowOf := make(map[string]int, n)
	for i, nd := range f.Nodes {
		r := i / per
		if r == len(g.Rows) {
			g.Rows = append(g.Rows, Row{Free: []Free{}, Bars: []Bar{}})
		}
		rowOf[nd.Name] = r
		g.Rows[r].Nodes++
		g.Rows[r].Procs += nd.Procs
	}
	for i := range g.Rows {
		first, last := f.Nodes[i*per].Name, f.Nodes[i*per+g.Rows[i].Nodes-1].Name
		g.Rows[i].Label = first
		if first != last {
			g.Rows[i].Label = fmt.Sprintf("%s … %s (%d)", first, last, g.Rows[i].Nodes)
		}
	}
	slotsBy := make([][]forecast.Slot, len(g.Rows))
	for _, s := range f.Slots {
		if r, ok := rowOf[s.Node]; ok && s.End > from && s.Start < to {
			slotsBy[r] = append(slotsBy[r], s)
		}
	}
	first := true
	for r := range g.Rows {
		g.Rows[r].Free = freeSpans(slotsBy[r], g.Rows[r].Procs, from, to)
		for _, s := range slotsBy[r] {
			if first || s.Price < g.PriceMin {
				g.PriceMin = s.Price
			}
			if first || s.Price > g.PriceMax {
				g.PriceMax = s.Price
			}
			first = false
		}
	}
	addBars(g.Rows, rowOf, holds, from, to)
	return g
}

// freeSpans sweeps a row's slots, clipped to [from, to), into spans of
// constant offered processors.
func freeSpans(slots []forecast.Slot, procs int, from, to int64) []Free {
	out := []Free{}
	if len(slots) == 0 || procs <= 0 {
		return out
	}
	type edge struct {
		t     int64
		procs int
		cost  float64
	}
	edges := make([]edge, 0, 2*len(slots))
	for _, s := range slots {
		a, b := max(s.Start, from), min(s.End, to)
		if b <= a || s.Procs <= 0 {
			continue
		}
		edges = append(edges, edge{a, s.Procs, s.Price * float64(s.Procs)}, edge{b, -s.Procs, -s.Price * float64(s.Procs)})
	}
	sort.Slice(edges, func(i, j int) bool { return edges[i].t < edges[j].t })
	cur, cost := 0, 0.0
	for i := 0; i < len(edges); {
		t := edges[i].t
		for ; i < len(edges) && edges[i].t == t; i++ {
			cur, cost = cur+edges[i].procs, cost+edges[i].cost
		}
		if cur <= 0 || i == len(edges) {
			continue
		}
		sp := Free{Start: t, End: edges[i].t, Frac: min(1, float64(cur)/float64(procs)), Price: cost / float64(cur)}
		if k := len(out) - 1; k >= 0 && out[k].End == sp.Start && out[k].Frac == sp.Frac && out[k].Price == sp.Price {
			out[k].End = sp.End
			continue
		}
		out = append(out, sp)
	}
	return out
}

// addBars puts each hold on its node's row, one bar per job, state and
// span in a row (a group's processors summed).
func addBars(rows []Row, rowOf map[string]int, holds []Hold, from, to int64) {
	for _, h := range holds {
		r, ok := rowOf[h.Node]
		if !ok || h.End <= from || h.Start >= to {
			continue
		}
		bars := rows[r].Bars
		i := slices.IndexFunc(bars, func(b Bar) bool {
			return b.Job == h.Job && b.State == h.State && b.Start == h.Start && b.End == h.End
		})
		if i >= 0 {
			bars[i].Procs += h.Procs
			continue
		}
		rows[r].Bars = append(bars, h.Bar)
	}
}

// The window a site's Gantt opens on: from a quarter of an hour before
// now to a little past the end of the grid's last hold on the site, at
// least an hour, at most the horizon; EmptyWindow ahead when the grid
// holds nothing there.
const (
	WindowBefore = 15 * 60
	EmptyWindow  = 6 * 3600
)

// WorkWindow is where the grid's work on a site sits, seen from now:
// the near future up to the end of the last hold (reservation, committing
// or planned part) that ends after now, with an eighth of the span to
// spare, so an hour of work fills the chart rather than its left edge.
func WorkWindow(now, horizon int64, holds []Hold) (from, to int64) {
	from = now - WindowBefore
	end := int64(0)
	for _, h := range holds {
		end = max(end, h.End)
	}
	to = now + EmptyWindow
	if end > now {
		to = end + max(WindowBefore, (end-from)/8)
	}
	if horizon > now {
		to = min(to, horizon)
	}
	return from, max(to, from+3600)
}
