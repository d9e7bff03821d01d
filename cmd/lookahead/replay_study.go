package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"lookahead/internal/cli"
	"lookahead/replay"
)

// runStudy is `lookahead replay --study FILE...`: every scenario under
// --seeds seeds in one batch of runs (one progress bar), then per scenario
// and point the study report (replay.StudyPoints).
func runStudy(ctx context.Context, stdout, stderr io.Writer, o *replayOptions) error {
	if err := cli.CheckFormat(o.output); err != nil {
		return err
	}
	if len(o.scenarios) == 0 {
		return cli.Usagef("replay --study: name at least one scenario file")
	}
	if err := checkRunFlags(o); err != nil {
		return err
	}
	n := o.seeds
	all := replay.Inputs{Traces: map[string][]replay.TraceJob{}, Origins: map[string]int64{}}
	var scs []replay.Scenario
	var seeds [][]int // per scenario
	for _, path := range o.scenarios {
		sc, in, err := prepareScenario(stderr, o, path)
		if err != nil {
			return err
		}
		for p, jobs := range in.Traces {
			all.Traces[p], all.Origins[p] = jobs, in.Origins[p]
		}
		more, s := underSeeds(sc, n)
		if err := checkWorkload(stderr, path, more, in); err != nil {
			return err
		}
		scs, seeds = append(scs, more...), append(seeds, s)
	}
	reps, err := runStudies(ctx, stderr, o, scs, all)
	if err != nil {
		return err
	}
	if err := writeRecords(ctx, stderr, o.records, scs, reps); err != nil {
		return err
	}
	var points []replay.StudyPoint
	var pointSeeds [][]int
	for k := range o.scenarios {
		for _, sp := range replay.StudyPoints(reps[k*n : (k+1)*n]) {
			points, pointSeeds = append(points, sp), append(pointSeeds, seeds[k])
		}
	}
	if o.output == cli.FormatJSON {
		if err := cli.WriteJSON(stdout, points); err != nil {
			return err
		}
	} else if err := writeStudy(stdout, pointSeeds, points); err != nil {
		return err
	} else {
		fmt.Fprintln(stdout)
		writeTableKey(stdout, firstOfEach(scs, n))
	}
	for _, r := range reps {
		if err := checkViolations(r); err != nil {
			return err
		}
	}
	return nil
}

// writeStudy prints each point's brokers, then the default broker's job
// classes against the best simple broker.
func writeStudy(w io.Writer, seeds [][]int, points []replay.StudyPoint) error {
	for i, sp := range points {
		if i > 0 {
			fmt.Fprintln(w)
		}
		label := sp.Point
		if label == "" {
			label = "(no sweep)"
		}
		fmt.Fprintf(w, "%s %s: mean [min–max] over seeds %v; best simple broker: %s\n", sp.Scenario, label, seeds[i], orNone(sp.Best))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "broker\tgrid AWRT (s)\tvs best simple\tlocal +wait (s)\tvs single-site\tmulti-site (jobs)\tpaid (credits)\treserved (credits)\tearned by site (credits)\tunplaced (jobs)\trefused (jobs)\t")
		for _, b := range sp.Brokers {
			earned := make([]string, len(b.Earnings))
			for k, e := range b.Earnings {
				earned[k] = fmt.Sprintf("%.0f", e.Mean)
			}
			fmt.Fprintf(tw, "%s\t%s\t%.3f\t%s\t%s\t%.1f\t%.0f\t%.0f\t%s\t%.1f\t%.1f\t\n", b.Policy, statString(b.GridAWRT), b.VsBest,
				statString(b.LocalWait), ratioString(b.VsSingle), b.MultiSite.Mean, b.Credits.Mean, b.Committed.Mean,
				strings.Join(earned, "/"), b.Unplaced.Mean, b.Refused.Mean)
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("write table: %w", err)
		}
		if err := writeClasses(w, sp); err != nil {
			return err
		}
	}
	return nil
}

// writeClasses prints lookahead's grid jobs by class against the best
// simple broker's: each class's own AWRT and its share of the difference.
func writeClasses(w io.Writer, sp replay.StudyPoint) error {
	if len(sp.Classes) == 0 {
		return nil
	}
	fmt.Fprintf(w, "lookahead against %s by job class (width: fits the smallest site / the largest / no site; run time on the reference CPU):\n", sp.Best)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "width\trun time\tjobs (per seed)\tAWRT lookahead (s)\tAWRT %s (s)\tratio\tshare of the AWRT difference\t\n", sp.Best)
	for _, c := range sp.Classes {
		if c.Jobs == 0 {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.0f\t%.0f\t%s\t%+.0f%%\t\n", c.Width, c.Run, c.Jobs, c.AWRT, c.BestAWRT,
			ratioString(safeRatio(c.AWRT, c.BestAWRT)), 100*c.Share)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

func statString(s replay.Stat) string {
	return fmt.Sprintf("%.0f [%.0f–%.0f]", s.Mean, s.Min, s.Max)
}

func ratioString(r float64) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", r)
}

func safeRatio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func orNone(s string) string {
	if s == "" {
		return "none (neither single-site-earliest nor greedy-multisite ran)"
	}
	return s
}

// firstOfEach is the first of every n scenarios: one per scenario file.
func firstOfEach(scs []replay.Scenario, n int) []replay.Scenario {
	var out []replay.Scenario
	for k := 0; k < len(scs); k += n {
		out = append(out, scs[k])
	}
	return out
}
