package replay

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

func TestProfTmp(t *testing.T) {
	if os.Getenv("PROF_TMP") == "" {
		t.Skip()
	}
	jobs := ctcSlice(t)
	in := Inputs{Traces: map[string][]TraceJob{"ctc": jobs}}
	sc := seed002(prof_jobs())
	sc.Broker.MultiSiteFactor = 1.3
	sc.Broker.Order = OrderFCFS
	for i, h := range []float64{1.4, 1, 0.6} {
		sc.Sites[i].Heterogeneity, sc.Sites[i].Speed = h, 1/h
	}
	sc = sc.WithDefaults()
	w, err := BuildWorkload(sc, in)
	if err != nil {
		t.Fatal(err)
	}
	for _, pol := range profPols() {
		t0 := time.Now()
		if pol == "" {
			_, err = Baseline(sc, w, Options{})
			t.Logf("baseline %v", time.Since(t0))
			continue
		}
		res, err := RunOnce(sc, w, pol, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s %v awrt %.0f stats %+v", pol, time.Since(t0), res.Metrics.Grid.AWRT, res.Stats)
	}
}

func prof_jobs() int {
	n := 400
	if v := os.Getenv("PROF_JOBS"); v != "" {
		fmt.Sscan(v, &n)
	}
	return n
}

func profPols() []string {
	if v := os.Getenv("PROF_POLS"); v != "" {
		return strings.Split(v, ",")
	}
	return []string{"", NameSingleSite, NameGreedy, NameLookahead}
}
