package agent

import (
	"math"
	"sync"

	"lookahead/forecast"
)

// Accuracy remembers the start time each forecast predicted for every
// queued local job and, when the job is seen running, scores the error.
// The error is taken against the first prediction made for the job (the
// forecast a grid planner had the longest) and, separately, the last one
// before the start. Safe for concurrent use.
type Accuracy struct {
	mu      sync.Mutex
	pending map[string]*predicted
	scored  map[string]bool // scored jobs still in the snapshot: never again
	sum     AccuracySummary
}

type predicted struct{ first, last int64 }

// Score is one checked prediction: the job, its first predicted start and
// its real start (Unix seconds).
type Score struct {
	Job       string
	Predicted int64
	Actual    int64
}

// AccuracyBounds are the upper bounds (seconds) of the error histogram's
// buckets; a last bucket counts everything larger.
var AccuracyBounds = []int64{0, 60, 300, 900, 3600, 4 * 3600, 24 * 3600}

// AccuracySummary is the start-time error over every checked job.
type AccuracySummary struct {
	Checked       int     `json:"checked"`
	Early         int     `json:"early"` // started before the first prediction
	Late          int     `json:"late"`
	MeanAbsFirst  float64 `json:"mean_abs_error_first_s"`
	MeanAbsLast   float64 `json:"mean_abs_error_last_s"`
	MaxAbsFirst   int64   `json:"max_abs_error_first_s"`
	Buckets       []int   `json:"buckets"` // counts per AccuracyBounds, plus one for larger
	BucketBounds  []int64 `json:"bucket_bounds_s"`
	sumAbs, sumLs float64
}

// NewAccuracy returns an empty recorder.
func NewAccuracy() *Accuracy {
	return &Accuracy{pending: map[string]*predicted{}, scored: map[string]bool{},
		sum: AccuracySummary{Buckets: make([]int, len(AccuracyBounds)+1), BucketBounds: AccuracyBounds}}
}

// Observe scores the jobs of snap that have started since they were
// predicted, forgets jobs that left the snapshot, and remembers preds for
// jobs still waiting. It returns the new scores.
func (a *Accuracy) Observe(snap forecast.Snapshot, preds []forecast.Prediction) []Score {
	a.mu.Lock()
	defer a.mu.Unlock()
	var scores []Score
	seen := make(map[string]bool, len(snap.Jobs))
	for _, j := range snap.Jobs {
		seen[j.ID] = true
		if p, ok := a.pending[j.ID]; ok && j.Running() && j.Started > 0 {
			scores = append(scores, a.score(j.ID, p, j.Started))
		}
	}
	for id := range a.pending {
		if !seen[id] {
			delete(a.pending, id)
		}
	}
	for id := range a.scored {
		if !seen[id] {
			delete(a.scored, id)
		}
	}
	waiting := make(map[string]bool, len(snap.Jobs))
	for _, j := range snap.Jobs {
		if j.Waiting() {
			waiting[j.ID] = true
		}
	}
	for _, p := range preds {
		// A snapshot taken before a start that was already scored (from
		// an event) must not make the job pending again.
		if !waiting[p.Job] || a.scored[p.Job] {
			continue
		}
		if q, ok := a.pending[p.Job]; ok {
			q.last = p.Start
		} else {
			a.pending[p.Job] = &predicted{first: p.Start, last: p.Start}
		}
	}
	return scores
}

// Started scores job's real start at (from an event), if it was predicted.
func (a *Accuracy) Started(job string, at int64) (Score, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.pending[job]
	if !ok {
		return Score{}, false
	}
	return a.score(job, p, at), true
}

func (a *Accuracy) score(job string, p *predicted, actual int64) Score {
	delete(a.pending, job)
	a.scored[job] = true
	d := actual - p.first
	switch {
	case d < 0:
		a.sum.Early++
	case d > 0:
		a.sum.Late++
	}
	abs := int64(math.Abs(float64(d)))
	a.sum.Checked++
	a.sum.sumAbs += float64(abs)
	a.sum.sumLs += math.Abs(float64(actual - p.last))
	a.sum.MaxAbsFirst = max(a.sum.MaxAbsFirst, abs)
	i := 0
	for i < len(AccuracyBounds) && abs > AccuracyBounds[i] {
		i++
	}
	a.sum.Buckets[i]++
	return Score{Job: job, Predicted: p.first, Actual: actual}
}

// Summary returns the error statistics so far.
func (a *Accuracy) Summary() AccuracySummary {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sum
	s.Buckets = append([]int(nil), a.sum.Buckets...)
	if s.Checked > 0 {
		s.MeanAbsFirst = s.sumAbs / float64(s.Checked)
		s.MeanAbsLast = s.sumLs / float64(s.Checked)
	}
	return s
}

// First is the first start predicted for a waiting job (0 when none).
func (a *Accuracy) First(job string) int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if p, ok := a.pending[job]; ok {
		return p.first
	}
	return 0
}

// Pending is how many predicted jobs wait to be scored.
func (a *Accuracy) Pending() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.pending)
}
