package agent

import (
	"fmt"
	"os"
	"strconv"

	"lookahead/forecast"
	"lookahead/slurm"
)

// LoadSlurmPolicy is the built-in engine's policy for a Slurm site, read
// from its slurm.conf (slurm.Conf.Policy): the same SitePolicy a Maui
// site's maui.cfg gives, with what the simulator cannot follow listed.
func LoadSlurmPolicy(path string) (SitePolicy, error) {
	f, err := os.Open(path)
	if err != nil {
		return SitePolicy{}, fmt.Errorf("slurm.conf: %w", err)
	}
	defer f.Close()
	c, err := slurm.ReadConf(f)
	if err != nil {
		return SitePolicy{}, fmt.Errorf("%s: %w", path, err)
	}
	p, notes, err := c.Policy()
	if err != nil {
		return SitePolicy{}, fmt.Errorf("%s: %w", path, err)
	}
	return SitePolicy{Source: path, Policy: p, Unmodelled: notes}, nil
}

// StartCoverage counts the pending jobs backfill planned a start for and
// how many of them a forecast predicts.
type StartCoverage struct{ Planned, Predicted int }

// CompareStarts compares a forecast's predictions with backfill's planned
// starts (squeue --json start_time of pending jobs, the figure squeue
// --start prints; Slurm has none for jobs backfill did not reach or bound
// to a reservation not yet started): the coverage, and per predicted job
// the error predicted - planned in seconds, in job order. Pure.
func CompareStarts(jobs []slurm.Job, preds []forecast.Prediction) (StartCoverage, []int64) {
	at := map[string]int64{}
	for _, p := range preds {
		at[p.Job] = p.Start
	}
	var c StartCoverage
	var errs []int64
	for _, j := range jobs {
		if j.State != "PENDING" || j.Start == nil {
			continue
		}
		c.Planned++
		if p, ok := at[strconv.FormatInt(j.ID, 10)]; ok {
			c.Predicted++
			errs = append(errs, p-j.Start.Unix())
		}
	}
	return c, errs
}
