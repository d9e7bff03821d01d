package sim

// Tau is the bounded-slowdown threshold in seconds.
const Tau = 10

// Metrics summarise a replay over the jobs that ran. AWRT and AWWT are the
// average response and wait times weighted by processors × run time (the
// processors a job ran on, JobResult.HeldProcs); MeanBSLD
// is the mean bounded slowdown max(1, response / max(run, Tau));
// Utilization is processor-seconds used over capacity × [first submit, last
// end]; Makespan is last end − first submit. Times are seconds.
type Metrics struct {
	Jobs        int     `json:"jobs"`
	Rejected    int     `json:"rejected"`
	AWRT        float64 `json:"awrt"`
	AWWT        float64 `json:"awwt"`
	MeanWait    float64 `json:"mean_wait"`
	MeanBSLD    float64 `json:"mean_bsld"`
	Utilization float64 `json:"utilization"`
	Makespan    int64   `json:"makespan"`
	// Short is the jobs that ran on fewer processors than they asked for
	// (JobResult.Held: Maui starts a job of whole chunks per node short
	// of its tasks under LASTAVAILABLE with node policies).
	Short int `json:"short,omitempty"`
}

// Measure computes the metrics of jobs run on capacity processors.
func Measure(jobs []JobResult, capacity int) Metrics {
	m := Metrics{Jobs: len(jobs)}
	if len(jobs) == 0 {
		return m
	}
	first, last := jobs[0].Submit, jobs[0].End
	var weight, resp, wait, waits, bsld, area float64
	for _, j := range jobs {
		first, last = min(first, j.Submit), max(last, j.End)
		run := float64(j.End - j.Start)
		w := float64(j.HeldProcs()) * run
		r := float64(j.End - j.Submit)
		weight += w
		resp += w * r
		wait += w * float64(j.Wait())
		waits += float64(j.Wait())
		bsld += max(1, r/max(run, Tau))
		area += w
		if j.Held > 0 {
			m.Short++
		}
	}
	n := float64(len(jobs))
	if weight > 0 {
		m.AWRT, m.AWWT = resp/weight, wait/weight
	}
	m.MeanWait, m.MeanBSLD = waits/n, bsld/n
	m.Makespan = last - first
	if m.Makespan > 0 && capacity > 0 {
		m.Utilization = area / (float64(capacity) * float64(m.Makespan))
	}
	return m
}
