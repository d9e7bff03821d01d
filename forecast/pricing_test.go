package forecast

import "testing"

// A rule's min_priority selects the queued jobs of at least that priority:
// a job at the bound is priced by the rule, one just below it falls through
// to the next rule or the default, and a rule without the field matches
// every priority. The owner here never sells high-priority jobs' time and
// sells the rest of queue "low" at twice the base.
func TestPriceRuleMinPriority(t *testing.T) {
	fifty, zero := int64(50), int64(0)
	p := Pricing{Base: 1, Default: Displace{Multiplier: 3},
		Rules: []PriceRule{
			{MinPriority: &fifty, Displace: Displace{Never: true}},
			{Queue: "low", MinPriority: &zero, Displace: Displace{Multiplier: 2}},
		}}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		job   LocalJob
		price float64
		ok    bool
	}{
		{"at the bound: the never rule", LocalJob{Queue: "batch", Priority: 50}, 0, false},
		{"above it", LocalJob{Queue: "low", Priority: 1000}, 0, false},
		{"just below: the default", LocalJob{Queue: "batch", Priority: 49}, 3, true},
		{"just below, queue low: the second rule", LocalJob{Queue: "low", Priority: 49}, 2, true},
		{"queue low at priority 0: the second rule's bound", LocalJob{Queue: "low", Priority: 0}, 2, true},
		{"queue low below 0: the default", LocalJob{Queue: "low", Priority: -1}, 3, true},
	}
	for _, c := range cases {
		got, ok := p.Price(c.job)
		if ok != c.ok || got != c.price {
			t.Errorf("%s: Price(%+v) = %v, %v; want %v, %v", c.name, c.job, got, ok, c.price, c.ok)
		}
	}
}
