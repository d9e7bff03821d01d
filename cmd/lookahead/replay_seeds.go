package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"lookahead/replay"
)

// seedStat is one metric over the seeds of a study: mean, min and max.
type seedStat struct {
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
}

func (s seedStat) String() string { return fmt.Sprintf("%.0f [%.0f–%.0f]", s.Mean, s.Min, s.Max) }

// seedRow is one strategy at one sweep point over every seed.
type seedRow struct {
	Point     string     `json:"point"`
	Policy    string     `json:"policy"`
	Seeds     int        `json:"seeds"`
	GridAWRT  seedStat   `json:"grid_awrt"`
	LocalWait seedStat   `json:"local_extra_wait"`
	MultiSite seedStat   `json:"multi_site"`
	Credits   seedStat   `json:"credits"`
	Earnings  []seedStat `json:"site_earnings"`
}

// seedReport is `lookahead replay --seeds N -o json`: every run, and the
// rows over the seeds.
type seedReport struct {
	Seeds   []int           `json:"seeds"`
	Reports []replay.Report `json:"reports"`
	Rows    []seedRow       `json:"rows"`
}

// aggregateSeeds folds the reports of the same study under different seeds
// (same points and policies, in the same order) into one row per result.
func aggregateSeeds(reps []replay.Report) []seedRow {
	if len(reps) == 0 {
		return nil
	}
	rows := make([]seedRow, len(reps[0].Results))
	for i, r := range reps[0].Results {
		rows[i] = seedRow{Point: r.Label, Policy: r.Policy, Seeds: len(reps)}
		get := func(f func(replay.Result) float64) seedStat {
			xs := make([]float64, len(reps))
			for k, rep := range reps {
				xs[k] = f(rep.Results[i])
			}
			return statOf(xs)
		}
		rows[i].GridAWRT = get(func(r replay.Result) float64 { return r.Metrics.Grid.AWRT })
		rows[i].LocalWait = get(func(r replay.Result) float64 { return r.Metrics.LocalExtraWait })
		rows[i].MultiSite = get(func(r replay.Result) float64 { return float64(r.Stats.MultiSite) })
		rows[i].Credits = get(func(r replay.Result) float64 { return r.Metrics.Credits })
		for s := range r.Metrics.SiteEarnings {
			rows[i].Earnings = append(rows[i].Earnings, get(func(r replay.Result) float64 { return r.Metrics.SiteEarnings[s] }))
		}
	}
	return rows
}

func statOf(xs []float64) seedStat {
	s := seedStat{Min: math.Inf(1), Max: math.Inf(-1)}
	for _, x := range xs {
		s.Mean += x / float64(len(xs))
		s.Min, s.Max = min(s.Min, x), max(s.Max, x)
	}
	return s
}

func writeSeedTable(w io.Writer, seeds []int, rows []seedRow) error {
	fmt.Fprintf(w, "mean [min–max] over seeds %v\n", seeds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "point\tpolicy\tgrid AWRT (s)\tlocal +wait (s)\tmulti-site (jobs)\tpaid (credits)\tearned by site (credits, mean)\t")
	for _, r := range rows {
		label := r.Point
		if label == "" {
			label = "-"
		}
		earned := make([]string, len(r.Earnings))
		for i, e := range r.Earnings {
			earned[i] = fmt.Sprintf("%.0f", e.Mean)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f\t%.0f\t%s\t\n", label, r.Policy, r.GridAWRT, r.LocalWait,
			r.MultiSite.Mean, r.Credits.Mean, strings.Join(earned, "/"))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}
