package replay

import (
	"fmt"
	"strconv"
	"strings"
)

// Point is one combination of the swept parameters; a zero field keeps the
// scenario's value.
type Point struct {
	MultiSiteFactor float64      `json:"multi_site_factor,omitempty"`
	SitePolicy      string       `json:"site_policy,omitempty"`
	Heterogeneity   []float64    `json:"heterogeneity,omitempty"`
	Mix             []WidthClass `json:"mix,omitempty"`
	MixIndex        int          `json:"-"`
	Redraw          *RedrawSpec  `json:"redraw,omitempty"`
	RedrawSet       bool         `json:"-"`
	Payment         *PaymentSpec `json:"payment,omitempty"`
}

// Label names the point in tables ("msf=1.2 h=1.4/1/0.6"); empty when
// nothing is swept.
func (p Point) Label() string {
	var parts []string
	if p.MultiSiteFactor != 0 {
		parts = append(parts, "msf="+strconv.FormatFloat(p.MultiSiteFactor, 'g', 4, 64))
	}
	if p.SitePolicy != "" {
		parts = append(parts, "sites="+p.SitePolicy)
	}
	if p.Heterogeneity != nil {
		hs := make([]string, len(p.Heterogeneity))
		for i, h := range p.Heterogeneity {
			hs[i] = strconv.FormatFloat(h, 'g', 4, 64)
		}
		parts = append(parts, "h="+strings.Join(hs, "/"))
	}
	if p.Mix != nil {
		parts = append(parts, "mix="+mixLabel(p.Mix, p.MixIndex))
	}
	if p.Payment != nil {
		parts = append(parts, fmt.Sprintf("pay=%g-%g", p.Payment.Min, p.Payment.Max))
	}
	if p.RedrawSet {
		if p.Redraw == nil {
			parts = append(parts, "widths=trace")
		} else {
			parts = append(parts, fmt.Sprintf("widths=%g%%:%d-%d", 100*p.Redraw.Share, p.Redraw.Min, p.Redraw.Max))
		}
	}
	return strings.Join(parts, " ")
}

func mixLabel(m []WidthClass, idx int) string {
	var parts []string
	for _, c := range m {
		name := c.Name
		if name == "" {
			name = fmt.Sprintf("%d-%d", c.Min, c.Max)
		}
		parts = append(parts, fmt.Sprintf("%s%.0f", name[:1], 100*c.Share))
	}
	if len(parts) == 0 {
		return strconv.Itoa(idx)
	}
	return strings.Join(parts, "/")
}

// Points expands the sweep into every combination, in a stable order
// (redraw, mix, heterogeneity, site policy, payment, multi-site factor;
// the last varies fastest). A scenario without a sweep has one zero point.
func (s Scenario) Points() []Point {
	pts := []Point{{}}
	w := s.Sweep
	if len(w.Redraw) > 0 {
		pts = expand(pts, len(w.Redraw), func(p *Point, i int) { p.Redraw, p.RedrawSet = w.Redraw[i], true })
	}
	if len(w.Mix) > 0 {
		pts = expand(pts, len(w.Mix), func(p *Point, i int) { p.Mix, p.MixIndex = w.Mix[i], i })
	}
	if len(w.Heterogeneity) > 0 {
		pts = expand(pts, len(w.Heterogeneity), func(p *Point, i int) { p.Heterogeneity = w.Heterogeneity[i] })
	}
	if len(w.SitePolicy) > 0 {
		pts = expand(pts, len(w.SitePolicy), func(p *Point, i int) { p.SitePolicy = w.SitePolicy[i] })
	}
	if len(w.Payment) > 0 {
		pts = expand(pts, len(w.Payment), func(p *Point, i int) { p.Payment = &w.Payment[i] })
	}
	if len(w.MultiSiteFactor) > 0 {
		pts = expand(pts, len(w.MultiSiteFactor), func(p *Point, i int) { p.MultiSiteFactor = w.MultiSiteFactor[i] })
	}
	return pts
}

func expand(pts []Point, n int, set func(*Point, int)) []Point {
	out := make([]Point, 0, len(pts)*n)
	for _, p := range pts {
		for i := 0; i < n; i++ {
			q := p
			set(&q, i)
			out = append(out, q)
		}
	}
	return out
}

// At returns the scenario with the point's values applied (defaults filled
// in again).
func (s Scenario) At(p Point) Scenario {
	s.Sites = append([]SiteSpec(nil), s.Sites...)
	if p.MultiSiteFactor != 0 {
		s.Broker.MultiSiteFactor = p.MultiSiteFactor
	}
	for i := range s.Sites {
		if p.SitePolicy != "" {
			s.Sites[i].Policy = p.SitePolicy
		}
		if p.Heterogeneity != nil {
			s.Sites[i].Heterogeneity = p.Heterogeneity[i]
			s.Sites[i].Speed = 1 / p.Heterogeneity[i]
		}
	}
	if p.Mix != nil && s.Grid.Synthetic != nil {
		syn := *s.Grid.Synthetic
		syn.Classes = p.Mix
		s.Grid.Synthetic = &syn
	}
	if p.RedrawSet {
		s.Grid.Redraw = p.Redraw
	}
	if p.Payment != nil {
		s.Grid.Payment = *p.Payment
	}
	return s.WithDefaults()
}
