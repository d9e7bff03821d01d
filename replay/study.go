package replay

import "math"

// A study's report over seeds: per scenario, point and broker the means
// over the seeds, each broker's grid AWRT against the best simple broker
// (single-site-earliest or greedy-multisite, whichever has the lower mean),
// and where the default broker's difference to it lies (the per-class
// breakdown). The reports are those of Studies for one scenario under
// several seeds (same points and strategies, in the same order).

// Stat is one metric over the seeds: mean, min and max.
type Stat struct {
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
}

// StatOf is the mean, min and max of xs.
func StatOf(xs []float64) Stat {
	s := Stat{Min: math.Inf(1), Max: math.Inf(-1)}
	for _, x := range xs {
		s.Mean += x / float64(len(xs))
		s.Min, s.Max = min(s.Min, x), max(s.Max, x)
	}
	return s
}

// StudyBroker is one broker at one point over the seeds.
type StudyBroker struct {
	Policy   string `json:"policy"`
	GridAWRT Stat   `json:"grid_awrt"`
	// VsBest is the mean grid AWRT over the best simple broker's mean.
	VsBest    float64 `json:"vs_best_simple"`
	LocalWait Stat    `json:"local_extra_wait"`
	// VsSingle is the mean local extra wait over single-site-earliest's.
	VsSingle  float64 `json:"local_vs_single,omitempty"`
	MultiSite Stat    `json:"multi_site"`
	Credits   Stat    `json:"credits"`
	Committed Stat    `json:"committed"`
	Earnings  []Stat  `json:"site_earnings"`
	Unplaced  Stat    `json:"unplaced"`
	Refused   Stat    `json:"refused"`
}

// StudyClass is one class of the default broker's grid jobs against the
// best simple broker's, summed over the seeds.
type StudyClass struct {
	Width string  `json:"width"`
	Run   string  `json:"run"`
	Jobs  float64 `json:"jobs"` // per seed
	// AWRT of the class's own jobs: the default broker's and the best
	// simple broker's.
	AWRT     float64 `json:"awrt"`
	BestAWRT float64 `json:"best_awrt"`
	// Share is the class's part of the difference of the two grid AWRTs
	// (its Σ weight × response difference over the total): the shares add
	// up to 1 when the AWRTs differ.
	Share float64 `json:"share"`
}

// StudyPoint is one point of a scenario over the seeds.
type StudyPoint struct {
	Scenario string        `json:"scenario"`
	Point    string        `json:"point"`
	Seeds    int           `json:"seeds"`
	Best     string        `json:"best_simple,omitempty"`
	Brokers  []StudyBroker `json:"brokers"`
	// Classes compares the default broker (lookahead) with the best simple
	// broker, class by class (empty when either did not run).
	Classes []StudyClass `json:"classes,omitempty"`
}

// StudyPoints folds one scenario's reports under several seeds into one
// StudyPoint per sweep point.
func StudyPoints(reps []Report) []StudyPoint {
	if len(reps) == 0 {
		return nil
	}
	var out []StudyPoint
	for i, r := range reps[0].Results {
		if len(out) == 0 || out[len(out)-1].Point != r.Label {
			out = append(out, StudyPoint{Scenario: reps[0].Scenario, Point: r.Label, Seeds: len(reps)})
		}
		sp := &out[len(out)-1]
		sp.Brokers = append(sp.Brokers, brokerOver(reps, i))
	}
	for k := range out {
		out[k].compare(reps)
	}
	return out
}

func brokerOver(reps []Report, i int) StudyBroker {
	get := func(f func(Metrics) float64) Stat {
		xs := make([]float64, len(reps))
		for k, rep := range reps {
			xs[k] = f(rep.Results[i].Metrics)
		}
		return StatOf(xs)
	}
	r := reps[0].Results[i]
	b := StudyBroker{Policy: r.Policy,
		GridAWRT:  get(func(m Metrics) float64 { return m.Grid.AWRT }),
		LocalWait: get(func(m Metrics) float64 { return m.LocalExtraWait }),
		Credits:   get(func(m Metrics) float64 { return m.Credits }),
		Committed: get(func(m Metrics) float64 { return m.Committed }),
		Unplaced:  get(func(m Metrics) float64 { return float64(m.Unplaced) }),
		Refused:   get(func(m Metrics) float64 { return float64(m.Refused) }),
	}
	xs := make([]float64, len(reps))
	for k, rep := range reps {
		xs[k] = float64(rep.Results[i].Stats.MultiSite)
	}
	b.MultiSite = StatOf(xs)
	for s := range r.Metrics.SiteEarnings {
		b.Earnings = append(b.Earnings, get(func(m Metrics) float64 { return m.SiteEarnings[s] }))
	}
	return b
}

// compare fills in the ratios against the best simple broker and
// single-site's local wait, and the default broker's per-class breakdown.
func (sp *StudyPoint) compare(reps []Report) {
	best, single := -1, -1
	for i, b := range sp.Brokers {
		switch b.Policy {
		case NameSingleSite:
			single = i
		case NameGreedy:
		default:
			continue
		}
		if best < 0 || b.GridAWRT.Mean < sp.Brokers[best].GridAWRT.Mean {
			best = i
		}
	}
	if best < 0 {
		return
	}
	sp.Best = sp.Brokers[best].Policy
	for i := range sp.Brokers {
		b := &sp.Brokers[i]
		b.VsBest = ratio(b.GridAWRT.Mean, sp.Brokers[best].GridAWRT.Mean)
		if single >= 0 {
			b.VsSingle = ratio(b.LocalWait.Mean, sp.Brokers[single].LocalWait.Mean)
		}
	}
	sp.Classes = classesAgainst(reps, sp.Point, NameLookahead, sp.Best)
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// classesAgainst sums, over the seeds, the classes of policy a and of b at
// the point.
func classesAgainst(reps []Report, point, a, b string) []StudyClass {
	n := len(Classes())
	var ca, cb []ClassMetrics
	for _, rep := range reps {
		for _, r := range rep.Results {
			if r.Label != point || (r.Policy != a && r.Policy != b) || len(r.Metrics.GridClasses) != n {
				continue
			}
			sum := &ca
			if r.Policy == b {
				sum = &cb
			}
			if *sum == nil {
				*sum = make([]ClassMetrics, n)
			}
			for i, c := range r.Metrics.GridClasses {
				(*sum)[i].Width, (*sum)[i].Run = c.Width, c.Run
				(*sum)[i].Jobs += c.Jobs
				(*sum)[i].Work += c.Work
				(*sum)[i].WorkResponse += c.WorkResponse
			}
		}
	}
	if ca == nil || cb == nil {
		return nil
	}
	var total float64
	for i := range ca {
		total += ca[i].WorkResponse - cb[i].WorkResponse
	}
	out := make([]StudyClass, n)
	for i := range ca {
		out[i] = StudyClass{Width: ca[i].Width, Run: ca[i].Run, Jobs: float64(ca[i].Jobs) / float64(len(reps)),
			AWRT: ca[i].AWRT(), BestAWRT: cb[i].AWRT(), Share: ratio(ca[i].WorkResponse-cb[i].WorkResponse, total)}
	}
	return out
}
