package forecast

import (
	"errors"
	"math"
	"strings"
	"testing"
)

const seedSnapshot = `{"site": "alpha", "taken": 1763780000,
 "nodes": [{"name": "n1", "procs": 8, "state": ["free"], "speed": 1}],
 "jobs": [{"id": "7", "state": "R", "procs": 8, "walltime": 3600, "submitted": 1763779000, "started": 1763779500,
           "hosts": [{"node": "n1", "procs": 8}]},
          {"id": "8", "state": "Q", "procs": 4, "walltime": 600, "submitted": 1763779900}],
 "reservations": [{"id": "g.1", "start": 1763790000, "end": 1763793600, "hosts": [{"node": "n1", "procs": 2}]}]}`

// Issue 23.1: snapshot values past the model's limits are refused with the
// field named (walltime 2^63-1 gave a negative end and a node sold free).
func TestDecodeSnapshotRefusesPastTheLimits(t *testing.T) {
	if _, err := DecodeSnapshot(strings.NewReader(seedSnapshot)); err != nil {
		t.Fatalf("seed snapshot: %v", err)
	}
	for _, c := range []struct{ name, old, new, want string }{
		{"walltime", `"walltime": 3600`, `"walltime": 9223372036854775807`, "jobs[0] (7).walltime"},
		{"started", `"started": 1763779500`, `"started": -3`, "jobs[0] (7).started"},
		{"submitted", `"submitted": 1763779900`, `"submitted": 9223372036854775807`, "jobs[1] (8).submitted"},
		{"job procs", `"procs": 4`, `"procs": 2000000000`, "jobs[1] (8).procs"},
		{"node procs", `"procs": 8, "state"`, `"procs": 2000000000, "state"`, "nodes[0].procs"},
		{"node speed", `"speed": 1}`, `"speed": 1e300}`, "nodes[0].speed"},
		{"taken", `"taken": 1763780000`, `"taken": -1`, "taken"},
		{"reservation end", `"end": 1763793600`, `"end": 9223372036854775807`, "reservations[0] (g.1)"},
		{"host procs", `"procs": 2}`, `"procs": 2000000000}`, "hosts[0]"},
		{"long job id", `"id": "8"`, `"id": "` + strings.Repeat("x", 100_000) + `"`, "jobs[1].id: 100000 bytes"},
	} {
		in := strings.Replace(seedSnapshot, c.old, c.new, 1)
		if in == seedSnapshot {
			t.Fatalf("%s: the replacement did not apply", c.name)
		}
		_, err := DecodeSnapshot(strings.NewReader(in))
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an invalid-input error naming %q", c.name, err, c.want)
		}
		if err != nil && len(err.Error()) > 500 {
			t.Errorf("%s: an error of %d bytes echoes the input", c.name, len(err.Error()))
		}
	}
}

// Issue 23.3: base 1e308 printed +Inf prices; a price past MaxPrice is
// refused in the file, and one the rules would compute past it is not
// offered (no job may pay it).
func TestPricingStaysWithinMaxPrice(t *testing.T) {
	for name, p := range map[string]Pricing{
		"base 1e308":          {Base: 1e308, Default: Displace{Multiplier: 2}},
		"multiplier 1e308":    {Base: 1, Default: Displace{Multiplier: 1e308}},
		"per_priority +Inf":   {Base: 1, Default: Displace{Multiplier: 2, PerPriority: math.Inf(1)}},
		"max 1e300":           {Base: 1, Default: Displace{Multiplier: 2, Max: 1e300}},
		"rule multiplier NaN": {Base: 1, Default: Displace{Multiplier: 2}, Rules: []PriceRule{{Displace: Displace{Multiplier: math.NaN()}}}},
	} {
		if err := p.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	p := Pricing{Base: MaxPrice, Default: Displace{Multiplier: MaxPrice, PerPriority: MaxPrice}}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, prio := range []int64{0, 1, math.MaxInt64} {
		if price, ok := p.Price(LocalJob{Priority: prio}); ok || price != 0 {
			t.Errorf("priority %d: offered at %v, past MaxPrice", prio, price)
		}
	}
	if price, ok := DefaultPricing().Price(LocalJob{Priority: 100}); !ok || price != 3 {
		t.Errorf("default pricing, priority 100: %v %v, want 3", price, ok)
	}
}

func TestClip(t *testing.T) {
	if got := Clip("héllo", 2); got != "h…(6 bytes)" {
		t.Errorf("Clip cut inside a rune: %q", got)
	}
	if got := Clip("abc", 3); got != "abc" {
		t.Errorf("Clip of a short string: %q", got)
	}
}

// Issue 23.4: a JSON syntax error names its line and column (past the
// first MiB, its byte offset: memory stays bounded).
func TestSyntaxErrorsKeepTheirPlace(t *testing.T) {
	_, err := DecodeJobs(strings.NewReader("[\n  {\"id\": \"g1\",\n   \"procs\": N}]"))
	if err == nil || !strings.Contains(err.Error(), "line 3, column 13: invalid character 'N'") {
		t.Errorf("syntax error: %v", err)
	}
	big := "[" + strings.Repeat(" ", positionBytes+10) + "N]"
	_, err = DecodeJobs(strings.NewReader(big))
	if err == nil || !strings.Contains(err.Error(), "byte 1048587: invalid character 'N'") {
		t.Errorf("syntax error past the first MiB: %v", err)
	}
}
