package sim

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"lookahead/forecast"
)

// FuzzBuild: any snapshot that decodes must forecast without panicking,
// and the forecast must be a valid v1 forecast.
func FuzzBuild(f *testing.F) {
	b, err := os.ReadFile("../../examples/snapshot/snapshot.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b, int64(3600*12), uint8(1))
	f.Add([]byte(`{"site":"s","taken":10,"nodes":[{"name":"a","procs":2,"state":["free"]}],"jobs":[{"id":"1","state":"Q","procs":3,"walltime":5,"submitted":1}]}`), int64(100), uint8(0))
	f.Add([]byte(`{"site":"s","taken":10,"nodes":[{"name":"a","procs":2,"state":["free"]}],"jobs":[{"id":"1","state":"Z","procs":2,"walltime":1099511627776,"started":5,"hosts":[{"node":"a","procs":2}]}]}`), int64(100), uint8(1))
	f.Add([]byte(`{"site":"s","taken":10,"nodes":[{"name":"a","procs":2,"state":["free"]}],"jobs":[{"id":"1","state":"R","procs":2,"walltime":4294967296,"started":5}]}`), int64(100), uint8(2))
	f.Fuzz(func(t *testing.T, in []byte, horizon int64, pol uint8) {
		snap, err := forecast.DecodeSnapshot(bytes.NewReader(in))
		if err != nil {
			return
		}
		if horizon < 0 || horizon > 30*86400 || snap.Taken < 0 || snap.Taken > 1<<40 {
			return
		}
		policy := []Policy{FCFS, EASY, Conservative, {Depth: 3}}[int(pol)%4]
		fc, _, err := Build(*snap, snap.Taken, snap.Taken+horizon, policy, forecast.DefaultPricing())
		if err != nil {
			if !errors.Is(err, forecast.ErrInvalid) {
				t.Fatalf("error %v is not an input error", err)
			}
			return
		}
		if fc.Site != "" && forecast.IsPlainName(fc.Site) {
			if err := fc.Validate(); err != nil {
				t.Fatalf("forecast does not validate: %v", err)
			}
		}
	})
}
