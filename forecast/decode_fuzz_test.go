package forecast

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const seedForecast = `{"version": 1, "site": "alpha", "seq": 42, "generated": 1763780000, "horizon": 1763866400,
 "nodes": [{"name": "n001", "procs": 8, "speed": 1.0, "mem_mb": 32000, "features": ["ib"]},
           {"name": "n002", "procs": 16, "speed": 1.5, "mem_mb": 64000}],
 "slots": [{"node": "n001", "procs": 8, "start": 1763780000, "end": 1763790000, "price": 1.0},
           {"node": "n001", "procs": 4, "start": 1763790000, "end": 1763800000, "price": 2.5},
           {"node": "n002", "procs": 16, "start": 1763785000, "end": 1763866400, "price": 1.2}]}`

const seedJobs = `[{"id": "g17", "procs": 64, "walltime": 7200, "max_price": 2.5, "min_speed": 0,
 "mem_mb": 0, "features": [], "criterion": "earliest-start", "max_sites": 0,
 "user": "alice", "account": "proj1", "submitted": 1763780000},
 {"id": "g18", "procs": 8, "walltime": 600, "max_price": 1, "criterion": "earliest-finish", "max_sites": 1}]`

// checkForecast asserts what a forecast that passed validation guarantees.
func checkForecast(t *testing.T, f *Forecast) {
	t.Helper()
	if f.Version != Version || !IsPlainName(f.Site) || f.Horizon < f.Generated || f.Generated < 0 || f.Horizon > MaxInstant {
		t.Fatalf("accepted bad header: %+v", f)
	}
	nodes := map[string]Node{}
	for _, n := range f.Nodes {
		if _, dup := nodes[n.Name]; dup || n.Name == "" || n.Procs <= 0 || n.Procs > MaxProcs || !(n.Speed >= MinSpeed) || n.Speed > MaxSpeed || n.MemMB < 0 {
			t.Fatalf("accepted bad node %+v", n)
		}
		nodes[n.Name] = n
	}
	for _, s := range f.Slots {
		n, ok := nodes[s.Node]
		if !ok || s.Procs <= 0 || s.Procs > n.Procs || s.End <= s.Start || s.Start < 0 || s.End > MaxInstant || !(s.Price >= 0) || s.Price > MaxPrice {
			t.Fatalf("accepted bad slot %+v", s)
		}
	}
}

// FuzzDecodeForecast: decoding never panics; what it accepts is valid and
// survives a round trip; what it rejects wraps ErrInvalid.
func FuzzDecodeForecast(f *testing.F) {
	f.Add([]byte(seedForecast))
	for _, s := range invalidForecasts {
		f.Add([]byte(s.in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		fc, err := DecodeForecast(bytes.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		checkForecast(t, fc)
		clipped, n := ClipToWindow(*fc)
		checkForecast(t, &clipped)
		if len(clipped.Slots) != len(fc.Slots)-n.Dropped {
			t.Fatalf("ClipToWindow kept %d of %d slots, dropped %d", len(clipped.Slots), len(fc.Slots), n.Dropped)
		}
		for _, s := range clipped.Slots {
			if s.Start < fc.Generated || s.End > fc.Horizon {
				t.Fatalf("slot %+v outside the window [%d, %d] after ClipToWindow", s, fc.Generated, fc.Horizon)
			}
		}
		out, err := json.Marshal(fc)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		again, err := DecodeForecast(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("round trip rejected: %v\n%s", err, out)
		}
		out2, _ := json.Marshal(again)
		if !bytes.Equal(out, out2) {
			t.Fatalf("round trip changed the forecast:\n%s\n%s", out, out2)
		}
	})
}

// FuzzDecodeJobs: likewise for a queue of job requests.
func FuzzDecodeJobs(f *testing.F) {
	f.Add([]byte(seedJobs))
	for _, s := range invalidJobs {
		f.Add([]byte(s.in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		jobs, err := DecodeJobs(bytes.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		ids := map[string]bool{}
		for _, j := range jobs {
			if j.ID == "" || ids[j.ID] || j.Procs <= 0 || j.Procs > MaxProcs || j.Walltime <= 0 || j.Walltime > MaxDuration ||
				!(j.MaxPrice >= 0) || j.MaxPrice > MaxPrice || !(j.MinSpeed >= 0) || j.MaxSites < 0 || j.MemMB < 0 {
				t.Fatalf("accepted bad job %+v", j)
			}
			if c := j.CriterionOrDefault(); !IsCriterion(c) {
				t.Fatalf("accepted criterion %q", c)
			}
			ids[j.ID] = true
		}
		out, err := json.Marshal(jobs)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if _, err := DecodeJobs(bytes.NewReader(out)); err != nil && len(jobs) > 0 {
			t.Fatalf("round trip rejected: %v\n%s", err, out)
		}
	})
}

var invalidForecasts = []struct{ name, in, want string }{
	{"end before start", strings.Replace(seedForecast, `"start": 1763790000, "end": 1763800000`, `"start": 1763790000, "end": 1763780000`, 1), "slots[1].end"},
	{"end equals start", strings.Replace(seedForecast, `"start": 1763790000, "end": 1763800000`, `"start": 1763790000, "end": 1763790000`, 1), "slots[1].end"},
	{"negative procs", strings.Replace(seedForecast, `"procs": 4,`, `"procs": -4,`, 1), "slots[1].procs"},
	{"zero node procs", strings.Replace(seedForecast, `"procs": 16, "speed"`, `"procs": 0, "speed"`, 1), "nodes[1].procs"},
	{"unknown node", strings.Replace(seedForecast, `{"node": "n002"`, `{"node": "n003"`, 1), "slots[2].node"},
	{"duplicate node", strings.Replace(seedForecast, `"name": "n002"`, `"name": "n001"`, 1), "nodes[1].name"},
	{"NaN price", strings.Replace(seedForecast, `"price": 2.5`, `"price": NaN`, 1), "invalid character"},
	{"negative price", strings.Replace(seedForecast, `"price": 2.5`, `"price": -2.5`, 1), "slots[1].price"},
	{"procs above capacity", strings.Replace(seedForecast, `"procs": 4,`, `"procs": 9,`, 1), "slots[1].procs"},
	{"version 2", strings.Replace(seedForecast, `"version": 1`, `"version": 2`, 1), "version 2"},
	{"version 0", strings.Replace(seedForecast, `"version": 1, `, ``, 1), "version 0"},
	{"zero speed", strings.Replace(seedForecast, `"speed": 1.5`, `"speed": 0`, 1), "nodes[1].speed"},
	{"negative memory", strings.Replace(seedForecast, `"mem_mb": 64000`, `"mem_mb": -1`, 1), "nodes[1].mem_mb"},
	{"unknown field", strings.Replace(seedForecast, `"seq": 42`, `"seq": 42, "colour": "red"`, 1), "unknown field"},
	{"trailing data", seedForecast + ` {}`, "trailing"},
	{"trailing brace", seedForecast + `}`, "trailing"},
	{"horizon before generated", strings.Replace(seedForecast, `"horizon": 1763866400`, `"horizon": 1`, 1), "horizon"},
	{"site with a space", strings.Replace(seedForecast, `"site": "alpha"`, `"site": "al pha"`, 1), "site"},
	{"empty", ``, "EOF"},
	{"slot end past the model's time", strings.Replace(seedForecast, `"end": 1763866400`, `"end": 9223372036854775807`, 1), "slots[2].end"},
	{"negative slot start", strings.Replace(seedForecast, `"start": 1763785000`, `"start": -5`, 1), "slots[2].start"},
	{"negative generated", strings.Replace(seedForecast, `"generated": 1763780000`, `"generated": -1`, 1), "generated"},
	{"huge price", strings.Replace(seedForecast, `"price": 2.5`, `"price": 1e308`, 1), "slots[1].price"},
	{"huge node procs", strings.Replace(seedForecast, `"procs": 16, "speed"`, `"procs": 1000000000, "speed"`, 1), "nodes[1].procs"},
	{"tiny speed", strings.Replace(seedForecast, `"speed": 1.5`, `"speed": 1e-300`, 1), "nodes[1].speed"},
	{"huge memory", strings.Replace(seedForecast, `"mem_mb": 64000`, `"mem_mb": 9223372036854775807`, 1), "nodes[1].mem_mb"},
	{"long node name", strings.Replace(seedForecast, `"name": "n002"`, `"name": "`+strings.Repeat("n", 300)+`"`, 1), "nodes[1].name"},
}

var invalidJobs = []struct{ name, in, want string }{
	{"negative procs", strings.Replace(seedJobs, `"procs": 8`, `"procs": -8`, 1), "jobs[1]"},
	{"zero walltime", strings.Replace(seedJobs, `"walltime": 600`, `"walltime": 0`, 1), "walltime"},
	{"negative price", strings.Replace(seedJobs, `"max_price": 1,`, `"max_price": -1,`, 1), "max_price"},
	{"bad criterion", strings.Replace(seedJobs, `"earliest-finish"`, `"soonest"`, 1), "criterion"},
	{"negative max_sites", strings.Replace(seedJobs, `"max_sites": 1`, `"max_sites": -1`, 1), "max_sites"},
	{"duplicate id", strings.Replace(seedJobs, `"g18"`, `"g17"`, 1), "duplicates jobs[0]"},
	{"missing id", strings.Replace(seedJobs, `"id": "g18", `, ``, 1), "jobs[1]: invalid input: id"},
	{"shell in user", strings.Replace(seedJobs, `"alice"`, `"alice;rm"`, 1), "user"},
	{"not an array", `{"id": "g1"}`, "cannot unmarshal"},
	{"trailing bracket", seedJobs + `]`, "trailing"},
	{"huge walltime", strings.Replace(seedJobs, `"walltime": 600`, `"walltime": 9223372036854775000`, 1), "walltime"},
	{"huge procs", strings.Replace(seedJobs, `"procs": 8`, `"procs": 100000000`, 1), "procs"},
	{"huge max_price", strings.Replace(seedJobs, `"max_price": 1,`, `"max_price": 1e308,`, 1), "max_price"},
	{"negative submitted", strings.Replace(seedJobs, `"submitted": 1763780000`, `"submitted": -1`, 1), "submitted"},
	{"huge min_speed", strings.Replace(seedJobs, `"min_speed": 0`, `"min_speed": 1e300`, 1), "min_speed"},
	{"syntax error names line and column", strings.Replace(seedJobs, `"max_price": 1,`, `"max_price": N,`, 1), "line 4, column"},
}

func TestDecodeNamesFieldAndIndex(t *testing.T) {
	for _, c := range invalidForecasts {
		t.Run("forecast/"+c.name, func(t *testing.T) {
			_, err := DecodeForecast(strings.NewReader(c.in))
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want ErrInvalid naming %q", err, c.want)
			}
		})
	}
	for _, c := range invalidJobs {
		t.Run("jobs/"+c.name, func(t *testing.T) {
			_, err := DecodeJobs(strings.NewReader(c.in))
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want ErrInvalid naming %q", err, c.want)
			}
		})
	}
	if _, err := DecodeForecast(strings.NewReader(seedForecast)); err != nil {
		t.Fatalf("seed forecast rejected: %v", err)
	}
	if _, err := DecodeJobs(strings.NewReader(seedJobs)); err != nil {
		t.Fatalf("seed jobs rejected: %v", err)
	}
}
