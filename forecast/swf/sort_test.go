package swf

import (
	"cmp"
	"slices"

	"lookahead/forecast/sim"
)

func sortBySubmit(rs []sim.JobResult) {
	slices.SortStableFunc(rs, func(a, b sim.JobResult) int {
		if c := cmp.Compare(a.Submit, b.Submit); c != 0 {
			return c
		}
		return cmp.Compare(len(a.ID), len(b.ID))*2 + cmp.Compare(a.ID, b.ID)
	})
}
