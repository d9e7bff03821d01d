package sim

import "testing"

func checkReplay(t *testing.T, c Cluster, jobs []Job, res Result) {
	t.Helper()
	if err := Verify(c, jobs, res); err != nil {
		t.Fatal(err)
	}
}

func startsOf(res Result) map[string]int64 {
	m := map[string]int64{}
	for _, j := range res.Jobs {
		m[j.ID] = j.Start
	}
	return m
}
