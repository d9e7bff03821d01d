package plot

import (
	"fmt"
	"io"
	"strings"
)

// printer writes formatted text and keeps the first error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

func esc(s string) string { return escaper.Replace(s) }

// Write writes one SVG document: the charts stacked, a legend of the series
// of the first chart, then the Gantt window when g is not nil.
func Write(w io.Writer, title string, charts []Chart, g *Gantt) error {
	height := 40 + len(charts)*chartH + 30
	if g != nil {
		height += g.height() + 40
	}
	p := &printer{w: w}
	p.f(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif">`+"\n", chartW, height)
	p.f(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	p.f(`<text x="10" y="24" font-size="16" font-weight="bold">%s</text>`+"\n", esc(title))
	if p.err != nil {
		return p.err
	}
	y := 40
	if len(charts) > 0 {
		if err := writeLegend(w, charts[0].Series, y-8+0); err != nil {
			return err
		}
		y += 12
	}
	for _, c := range charts {
		if err := writeChart(w, c, y); err != nil {
			return err
		}
		y += chartH
	}
	if g != nil {
		if err := g.write(w, y+20); err != nil {
			return err
		}
	}
	p.f("</svg>\n")
	return p.err
}
