package wan

import (
	"fmt"
	"testing"
	"time"

	"lookahead/forecast"
	"lookahead/wire"
)

// BenchmarkCommitAcrossSites is one commit of a job that needs all of ten
// sites (8 processors each, the job 80), every site behind its leaf node,
// each leaf link with a round trip of rtt added (half each way): from the
// broker's intent to its recorded outcome, as the broker announces them.
// It reports the commit's wall time and that time in round trips. The
// reserve requests go to the ten sites in parallel, so a commit costs
// what one site's answer costs; how many round trips that is depends on
// what the agent waits for before it answers (docs/operations.md,
// "Partitions and latency"). snapshot= is how long a site takes to read
// its cluster (0: the simulated site; a real one runs qstat, pbsnodes
// and showres), which the agent overlaps with its intent's audit append.
func BenchmarkCommitAcrossSites(b *testing.B) {
	sites := make([]string, 10)
	for i := range sites {
		sites[i] = fmt.Sprintf("s%02d", i+1)
	}
	for _, snap := range []time.Duration{0, 150 * time.Millisecond} {
		marks := make(chan mark, 64)
		g := newGrid(b, gridOptions{sites: sites, snapshot: snap, failPoint: func(p string) bool {
			if p == "intent" || p == "outcome" { // the broker's commit recorded its intent, its outcome
				marks <- mark{p, time.Now()}
			}
			return false
		}})
		for _, rtt := range []time.Duration{0, 100 * time.Millisecond} {
			b.Run(fmt.Sprintf("sites=10/snapshot=%v/rtt=%v", snap, rtt), func(b *testing.B) { benchCommit(b, g, marks, sites, rtt) })
		}
	}
}

// mark is when the broker passed one point of a commit.
type mark struct {
	point string
	at    time.Time
}

func benchCommit(b *testing.B, g *grid, marks chan mark, sites []string, rtt time.Duration) {
	for _, s := range sites {
		g.net.Site(s).Link.SetLatency(rtt / 2)
	}
	var total time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		g.settled()
		job := g.submit(forecast.JobRequest{Procs: 80, Walltime: 1800}, "")
		took := g.commitTime(job, marks)
		g.cancel(job)
		total += took
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "commit-ms")
	if rtt > 0 {
		b.ReportMetric(float64(total)/float64(b.N)/float64(rtt), "rtts")
	}
}

// commitTime waits for job's commit — its intent, then its outcome, as
// the broker passes them (one commit at a time here) — and returns the
// time between the two.
func (g *grid) commitTime(job string, marks chan mark) time.Duration {
	g.t.Helper()
	var intent time.Time
	timeout := time.NewTimer(waitLimit)
	defer timeout.Stop()
	for {
		select {
		case m := <-marks:
			switch {
			case m.point == "intent":
				intent = m.at
			case !intent.IsZero():
				if st, ok := g.job(job); !ok || st.State != wire.JobReserved {
					g.t.Fatalf("the commit of %s did not reserve it: %+v", job, st)
				}
				return m.at.Sub(intent)
			}
		case <-timeout.C:
			g.t.Fatalf("no commit of %s", job)
		}
	}
}
