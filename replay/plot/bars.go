package plot

import (
	"fmt"
	"io"
	"math"
)

// Chart is one metric: a value per (group, series). Groups are the sweep
// points (x axis clusters), series the policies (one colour each).
type Chart struct {
	Title  string
	Unit   string
	Groups []string
	Series []string
	// Values[g][s] is the value of series s in group g (NaN: missing).
	Values [][]float64
}

const (
	chartW    = 900
	chartH    = 260
	marginL   = 70
	marginTop = 30
	plotH     = 170
)

var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"}

// Colour returns the series colour for index i.
func Colour(i int) string { return palette[i%len(palette)] }

// writeChart draws one chart with its top-left corner at (0, y).
func writeChart(w io.Writer, c Chart, y int) error {
	top := 0.0
	for _, row := range c.Values {
		for _, v := range row {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				top = math.Max(top, v)
			}
		}
	}
	if top == 0 {
		top = 1
	}
	top = niceCeil(top)
	p := &printer{w: w}
	p.f(`<g transform="translate(0,%d)">`+"\n", y)
	p.f(`<text x="%d" y="18" font-size="14" font-weight="bold">%s</text>`+"\n", marginL, esc(c.Title+unit(c.Unit)))
	axisY := marginTop + plotH
	p.f(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`+"\n", marginL, axisY, chartW-10, axisY)
	for k := 0; k <= 4; k++ {
		v := top * float64(k) / 4
		yy := float64(axisY) - float64(plotH)*float64(k)/4
		p.f(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", marginL, yy, chartW-10, yy)
		p.f(`<text x="%d" y="%.1f" font-size="10" text-anchor="end">%s</text>`+"\n", marginL-4, yy+3, short(v))
	}
	groups := max(len(c.Groups), 1)
	gw := float64(chartW-marginL-10) / float64(groups)
	bw := gw * 0.8 / float64(max(len(c.Series), 1))
	for g := range c.Groups {
		x0 := float64(marginL) + gw*float64(g) + gw*0.1
		for s := range c.Series {
			v := c.Values[g][s]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			h := float64(plotH) * v / top
			p.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %s</title></rect>`+"\n",
				x0+bw*float64(s), float64(axisY)-h, math.Max(bw-1, 1), h, Colour(s), esc(c.Series[s]), esc(c.Groups[g]), short(v))
		}
		p.f(`<text x="%.1f" y="%d" font-size="10" text-anchor="middle">%s</text>`+"\n", x0+gw*0.4, axisY+14, esc(c.Groups[g]))
	}
	p.f("</g>\n")
	return p.err
}

func writeLegend(w io.Writer, series []string, y int) error {
	p := &printer{w: w}
	x := marginL
	for i, s := range series {
		p.f(`<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d" font-size="12">%s</text>`+"\n", x, y, Colour(i), x+16, y+11, esc(s))
		x += 30 + 7*len(s)
	}
	return p.err
}

func unit(u string) string {
	if u == "" {
		return ""
	}
	return " (" + u + ")"
}

// niceCeil rounds up to 1, 2 or 5 × a power of ten.
func niceCeil(v float64) float64 {
	e := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*e >= v {
			return m * e
		}
	}
	return 10 * e
}

func short(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case a >= 1e4:
		return fmt.Sprintf("%.3gk", v/1e3)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}
