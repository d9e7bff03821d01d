package agent_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/slurm"
	"lookahead/slurm/slurmtest"
)

// The forecast and backfill's planned starts against the starts that
// happen, on a real slurmctld: 7 jobs (1-8 cores, 1-6 min, running to
// their limit) on one 8-core node, forecast once at the start. Takes
// about 10 minutes: run with LOOKAHEAD_SLURM_ACCURACY=1 (docs/slurm.md
// has the figures).
func TestLiveSlurmStartsAgainstActual(t *testing.T) {
	if os.Getenv("LOOKAHEAD_SLURM_ACCURACY") != "1" {
		t.Skip("runs for about 10 minutes: set LOOKAHEAD_SLURM_ACCURACY=1")
	}
	c := slurmtest.Shared(t, slurmtest.Options{CPUs: 8})
	site := slurmSite(t, c)
	for _, j := range []struct{ n, minutes int }{{6, 2}, {4, 1}, {8, 4}, {2, 1}, {3, 3}, {1, 6}, {5, 2}} {
		if r := c.RunAsUser2("sbatch", "-o", "/dev/null", "-n", strconv.Itoa(j.n), "-t", strconv.Itoa(j.minutes), "--wrap", "sleep 3600"); r.ExitCode != 0 {
			t.Fatalf("sbatch: %+v", r)
		}
	}
	ctx := context.Background()
	var sn slurm.Snapshot
	for waited := time.Now(); ; time.Sleep(500 * time.Millisecond) {
		var err error
		if sn, err = site.Client.Snapshot(ctx); err != nil {
			t.Fatal(err)
		}
		if cov, _ := compareStarts(sn.Jobs, nil); cov.Planned >= pending(sn.Jobs) || time.Since(waited) > 40*time.Second {
			break
		}
	}
	pol, err := agent.LoadSlurmPolicy(c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	snap := agent.WithHolds(slurm.ForecastSnapshot(sn, "sl", now), agent.SlurmHolds(sn.Reservations, nil, "la.", now.Unix()))
	_, preds, err := agent.BuiltinEngine{Horizon: 24 * time.Hour, Policy: pol.Policy, Pricing: forecast.DefaultPricing()}.Forecast(ctx, snap, now)
	if err != nil {
		t.Fatal(err)
	}
	predicted, planned := map[int64]int64{}, map[int64]int64{}
	for _, p := range preds {
		id, _ := strconv.ParseInt(p.Job, 10, 64)
		predicted[id] = p.Start
	}
	for _, j := range sn.Jobs {
		if j.State == "PENDING" && j.Start != nil {
			planned[j.ID] = j.Start.Unix()
		}
	}
	actual := map[int64]int64{}
	for deadline := time.Now().Add(14 * time.Minute); len(actual) < len(planned) && time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		jobs, _, err := site.Client.Jobs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			if _, ok := planned[j.ID]; ok && j.Start != nil && j.Nodes != "" {
				actual[j.ID] = j.Start.Unix()
			}
		}
	}
	var fe, be int64
	for id, a := range actual {
		t.Logf("job %d: actual +%d s, forecast %+d s off, backfill's plan %+d s off", id, a-now.Unix(), predicted[id]-a, planned[id]-a)
		fe += abs64(predicted[id] - a)
		be += abs64(planned[id] - a)
	}
	if len(actual) < len(planned) {
		t.Fatalf("only %d of %d planned jobs started", len(actual), len(planned))
	}
	t.Logf("mean |error| over %d jobs: forecast %d s, backfill's plan %d s", len(actual), fe/int64(len(actual)), be/int64(len(actual)))
}

func abs64(v int64) int64 { return max(v, -v) }
