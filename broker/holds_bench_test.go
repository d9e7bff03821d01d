package broker

import (
	"fmt"
	"testing"

	"lookahead/forecast"
)

// BenchmarkApplyHolds: 1,000 reserved jobs (4 nodes each) cut out of 50
// sites × 200 nodes × 5 slots, as every planning cycle does before it plans.
func BenchmarkApplyHolds(b *testing.B) {
	var fcs []forecast.Forecast
	for s := 0; s < 50; s++ {
		f := forecast.Forecast{Site: fmt.Sprintf("s%02d", s), Seq: 1}
		for n := 0; n < 200; n++ {
			for k := int64(0); k < 5; k++ {
				f.Slots = append(f.Slots, forecast.Slot{Node: fmt.Sprintf("n%d", n), Procs: 8, Start: k * 10000, End: k*10000 + 9000, Price: 1})
			}
		}
		fcs = append(fcs, f)
	}
	var holds []Hold
	for j := 0; j < 1000; j++ {
		site := fmt.Sprintf("s%02d", j%50)
		a := forecast.Allocation{Job: fmt.Sprint(j), Start: int64(j%5) * 10000, End: int64(j%5)*10000 + 5000}
		for k := 0; k < 4; k++ {
			a.Parts = append(a.Parts, forecast.Part{Site: site, Node: fmt.Sprintf("n%d", (j*4+k)%200), Procs: 2})
		}
		holds = append(holds, Hold{Alloc: a, Revisions: map[string]uint64{site: 1}})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ApplyHolds(fcs, holds, 0)
	}
}
