package forecast

import (
	"strings"
	"testing"
)

// TestCriterion: every named criterion is valid, "" means free-first, and
// anything else is refused naming the field and the valid values.
func TestCriterion(t *testing.T) {
	for _, c := range Criteria() {
		j := JobRequest{ID: "j", Procs: 1, Walltime: 1, Criterion: c}
		if err := j.Validate(); err != nil || j.CriterionOrDefault() != c {
			t.Fatalf("%s: %v, default %q", c, err, j.CriterionOrDefault())
		}
	}
	j := JobRequest{ID: "j", Procs: 1, Walltime: 1}
	if j.CriterionOrDefault() != FreeFirst || DefaultCriterion != FreeFirst || Criteria()[0] != DefaultCriterion {
		t.Fatalf("default %q", j.CriterionOrDefault())
	}
	j.Criterion = "soonest"
	err := j.Validate()
	if err == nil || !strings.Contains(err.Error(), "criterion") || !strings.Contains(err.Error(), LeastHeld) || !strings.Contains(err.Error(), FreeFirst) || IsCriterion("") {
		t.Fatalf("soonest: %v", err)
	}
}
