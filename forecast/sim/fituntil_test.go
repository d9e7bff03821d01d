package sim

import (
	"math/rand/v2"
	"testing"
)

// TestFitUntilIsFitsFrom: fitUntil's table answers exactly what
// profile.fitsFrom(0, q, d) answers, for every q up to the free count now
// and walltimes that end before, at and after every step.
func TestFitUntilIsFitsFrom(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 3))
		e := &Engine{}
		p := &e.prof
		p.reset(1000, 1+r.IntN(20))
		for range r.IntN(12) {
			s := 1000 + int64(r.IntN(5000))
			end := int64(never)
			if r.IntN(4) > 0 {
				end = s + 1 + int64(r.IntN(3000))
			}
			p.add(s, end, -r.IntN(8))
		}
		if p.steps[0].free <= 0 {
			continue
		}
		u := e.fitUntil()
		for q := 1; q <= p.steps[0].free; q++ {
			for _, st := range p.steps {
				for _, end := range []int64{st.t - 1, st.t, st.t + 1} {
					if end <= 1000 {
						continue
					}
					want, _ := p.fitsFrom(0, q, end-1000)
					if got := end <= u[q]; got != want {
						t.Fatalf("seed %d: %d processors until %d: fitUntil says %v, fitsFrom %v (steps %v)", seed, q, end, got, want, p.steps)
					}
				}
			}
		}
	}
}
