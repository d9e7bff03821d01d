package replay

import (
	"fmt"
	"math"

	"lookahead/replay/plot"
)

// chartMetric is one bar chart of the comparison picture.
type chartMetric struct {
	title, unit string
	value       func(Metrics) float64
}

var chartMetrics = []chartMetric{
	{"Grid jobs: AWRT", "s", func(m Metrics) float64 { return m.Grid.AWRT }},
	{"Grid jobs: AWWT", "s", func(m Metrics) float64 { return m.Grid.AWWT }},
	{"Local jobs: AWRT", "s", func(m Metrics) float64 { return m.Local.AWRT }},
	{"Utilization", "share", func(m Metrics) float64 { return m.Utilization }},
	{"Density (seed 004)", "share", func(m Metrics) float64 { return m.Density }},
	{"Grid jobs that never found room", "jobs", func(m Metrics) float64 { return float64(m.Unplaced) }},
}

// Charts turns a study into per-metric bar charts: sweep points on the x
// axis, one bar per policy. Metrics that are zero everywhere are left out.
func Charts(rep Report) []plot.Chart {
	var groups, series []string
	gi, si := map[string]int{}, map[string]int{}
	for _, r := range rep.Results {
		label := r.Label
		if label == "" {
			label = "all"
		}
		if _, ok := gi[label]; !ok {
			gi[label] = len(groups)
			groups = append(groups, label)
		}
		if _, ok := si[r.Policy]; !ok {
			si[r.Policy] = len(series)
			series = append(series, r.Policy)
		}
	}
	var out []plot.Chart
	for _, cm := range chartMetrics {
		c := plot.Chart{Title: cm.title, Unit: cm.unit, Groups: groups, Series: series, Values: make([][]float64, len(groups))}
		for g := range c.Values {
			c.Values[g] = make([]float64, len(series))
			for s := range c.Values[g] {
				c.Values[g][s] = math.NaN()
			}
		}
		any := false
		for _, r := range rep.Results {
			label := r.Label
			if label == "" {
				label = "all"
			}
			v := cm.value(r.Metrics)
			c.Values[gi[label]][si[r.Policy]] = v
			any = any || v != 0
		}
		if any {
			out = append(out, c)
		}
	}
	return out
}

// Gantt is the picture of one run's window [from, from+length) (counted from
// the scenario start): every site's processors over time, local jobs, grid
// jobs and the unused tails of their reservations.
func Gantt(sc Scenario, res Result, from, length int64) plot.Gantt {
	g := plot.Gantt{
		Title: fmt.Sprintf("%s %s: sites × processors × time", res.Policy, res.Label),
		From:  sc.Start + from, To: sc.Start + from + length,
	}
	for _, s := range sc.Sites {
		g.Sites = append(g.Sites, plot.GanttSite{Name: s.Name, Procs: s.Nodes * s.PPN})
	}
	for _, r := range res.Records {
		if max(r.End, r.Reserved) <= g.From || r.Start >= g.To {
			continue
		}
		for _, p := range r.Parts {
			g.Jobs = append(g.Jobs, plot.GanttJob{ID: r.ID, Grid: r.Grid, Site: p.Site, Procs: p.Procs, Start: r.Start, End: r.End, Reserved: r.Reserved})
		}
	}
	return g
}
