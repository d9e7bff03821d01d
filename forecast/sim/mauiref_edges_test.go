package sim

import (
	"strings"
	"testing"
)

// refEdges is the driver's extra stops for a policy: wall-clock edges
// where Maui's decisions change though no job arrives or ends (every
// FSINTERVAL counted from the epoch); nil when it has none.
func refEdges(t testing.TB, cfg string) func(int64) int64 {
	p := refEdgePeriod(t, cfg)
	if p == 0 {
		return nil
	}
	return func(at int64) int64 { return at - at%p + p }
}

// refEdgePeriod is the period of the policy's wall-clock edges (0: none).
func refEdgePeriod(t testing.TB, cfg string) int64 {
	mc, err := ReadMauiConfig(strings.NewReader(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if f := mc.Policy.Fairshare; f != nil {
		return f.Interval
	}
	return 0
}
