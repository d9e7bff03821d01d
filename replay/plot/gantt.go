package plot

import (
	"io"
	"sort"
)

// Gantt is a window [From, To) of sites × processors × time.
type Gantt struct {
	Title string
	From  int64
	To    int64
	Sites []GanttSite
	Jobs  []GanttJob
}

// GanttSite is a site with its processor count.
type GanttSite struct {
	Name  string
	Procs int
}

// GanttJob is a job's part on one site: Procs processors held over
// [Start, End). Reserved > End marks a grid reservation's unused tail
// (the job ended early and gave [End, Reserved) back).
type GanttJob struct {
	ID       string
	Grid     bool
	Site     int
	Procs    int
	Start    int64
	End      int64
	Reserved int64
}

const (
	ganttRowPx   = 160 // pixel height of the biggest site
	ganttMinPx   = 30
	ganttGapPx   = 16
	ganttWidthPx = chartW - marginL - 10
)

func (g *Gantt) siteHeight(i int) int {
	biggest := 1
	for _, s := range g.Sites {
		biggest = max(biggest, s.Procs)
	}
	return max(ganttMinPx, ganttRowPx*g.Sites[i].Procs/biggest)
}

func (g *Gantt) height() int {
	h := 30
	for i := range g.Sites {
		h += g.siteHeight(i) + ganttGapPx
	}
	return h
}

// rect is a run of consecutive processors of one site.
type rect struct {
	lo, n int
}

// lanes assigns each job part the lowest free processor indices of its
// site in start order, so the picture never draws two jobs on one
// processor; it returns the runs per job index.
func (g *Gantt) lanes() [][]rect {
	order := make([]int, len(g.Jobs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return g.Jobs[order[a]].Start < g.Jobs[order[b]].Start })
	busyUntil := make([][]int64, len(g.Sites))
	for i, s := range g.Sites {
		busyUntil[i] = make([]int64, s.Procs)
	}
	out := make([][]rect, len(g.Jobs))
	for _, k := range order {
		j := g.Jobs[k]
		until := max(j.End, j.Reserved)
		var runs []rect
		left := j.Procs
		for p := 0; p < len(busyUntil[j.Site]) && left > 0; p++ {
			if busyUntil[j.Site][p] > j.Start {
				continue
			}
			busyUntil[j.Site][p] = until
			left--
			if n := len(runs); n > 0 && runs[n-1].lo+runs[n-1].n == p {
				runs[n-1].n++
			} else {
				runs = append(runs, rect{lo: p, n: 1})
			}
		}
		out[k] = runs
	}
	return out
}

func (g *Gantt) write(w io.Writer, y int) error {
	p := &printer{w: w}
	p.f(`<g transform="translate(0,%d)">`+"\n", y)
	p.f(`<text x="%d" y="14" font-size="14" font-weight="bold">%s</text>`+"\n", marginL, esc(g.Title))
	span := float64(max(g.To-g.From, 1))
	xOf := func(t int64) float64 {
		t = min(max(t, g.From), g.To)
		return float64(marginL) + float64(ganttWidthPx)*float64(t-g.From)/span
	}
	top := make([]int, len(g.Sites))
	yy := 24
	for i, s := range g.Sites {
		top[i] = yy
		h := g.siteHeight(i)
		p.f(`<rect x="%d" y="%d" width="%d" height="%d" fill="#f4f4f4" stroke="#999"/>`+"\n", marginL, yy, ganttWidthPx, h)
		p.f(`<text x="%d" y="%d" font-size="11" text-anchor="end">%s</text>`+"\n", marginL-4, yy+h/2+4, esc(s.Name))
		yy += h + ganttGapPx
	}
	lanes := g.lanes()
	for k, j := range g.Jobs {
		if max(j.End, j.Reserved) <= g.From || j.Start >= g.To {
			continue
		}
		perProc := float64(g.siteHeight(j.Site)) / float64(max(g.Sites[j.Site].Procs, 1))
		fill := "#9db4cf"
		if j.Grid {
			fill = "#f28e2b"
		}
		for _, r := range lanes[k] {
			ry := float64(top[j.Site]) + perProc*float64(r.lo)
			rh := perProc * float64(r.n)
			p.f(`<rect x="%.1f" y="%.2f" width="%.1f" height="%.2f" fill="%s" stroke="white" stroke-width="0.2"><title>%s</title></rect>`+"\n",
				xOf(j.Start), ry, xOf(j.End)-xOf(j.Start), rh, fill, esc(j.ID))
			if j.Reserved > j.End {
				p.f(`<rect x="%.1f" y="%.2f" width="%.1f" height="%.2f" fill="none" stroke="#f28e2b" stroke-dasharray="2,2"/>`+"\n",
					xOf(j.End), ry, xOf(j.Reserved)-xOf(j.End), rh)
			}
		}
	}
	p.f(`<text x="%d" y="%d" font-size="10">t = %d</text>`+"\n", marginL, yy+4, g.From)
	p.f(`<text x="%d" y="%d" font-size="10" text-anchor="end">t = %d</text>`+"\n", chartW-10, yy+4, g.To)
	p.f(`<text x="%d" y="%d" font-size="10">local jobs blue, grid jobs orange, dashed: reserved but given back</text>`+"\n", marginL+150, yy+4)
	p.f("</g>\n")
	return p.err
}
