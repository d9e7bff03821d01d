package main

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"lookahead/forecast"
)

// FuzzReadPricing: a pricing file never panics the reader; what it
// accepts validates and prices any job at a finite price within the
// model's limit.
func FuzzReadPricing(f *testing.F) {
	for _, s := range []string{"base: 1.5\n", "base: 1\nrules: [{}]\n", "base: 1e308\n", "default: {multiplier: 3, per_priority: 0.01, max: 10}\n"} {
		f.Add(s, false)
	}
	if b, err := os.ReadFile("../../examples/snapshot/pricing.yaml"); err == nil {
		f.Add(string(b), false)
	}
	f.Add(`{"base": 2, "rules": [{"queue": "low", "multiplier": 2}]}`, true)
	f.Fuzz(func(t *testing.T, body string, asJSON bool) {
		name := "p.yaml"
		if asJSON {
			name = "p.json"
		}
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		p, err := readPricing(path)
		if err != nil {
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("accepted an invalid pricing: %v", err)
		}
		for _, prio := range []int64{math.MinInt64, 0, 1000, math.MaxInt64} {
			if price, ok := p.Price(forecast.LocalJob{Priority: prio, Queue: "low"}); ok && !(price >= 0 && price <= forecast.MaxPrice) {
				t.Fatalf("priority %d priced at %v", prio, price)
			}
		}
	})
}
