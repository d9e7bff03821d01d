package daemon

import (
	"testing"

	"github.com/nats-io/nats.go/micro"

	"lookahead/internal/natstest"
	"lookahead/internal/version"
)

// TestServiceVersionMicroAccepts: whatever version the binary has — a
// package's stamp, Go's module or pseudo-version (clean or "+dirty"), a
// bare revision, version.Unknown — the broker's micro service starts
// with it (micro refuses a version that is not SemVer, and the broker
// with it), keeping the binary's version when micro can carry it.
func TestServiceVersionMicroAccepts(t *testing.T) {
	_, nc := natstest.Start(t)
	for v, want := range map[string]string{
		"0.0.0-0.812.g1a2b3c4d5e":            "0.0.0-0.812.g1a2b3c4d5e",
		"1.4.0-1":                            "1.4.0-1",
		"v1.2.3":                             "1.2.3",
		"v0.0.0-20261129032854-84d6efbac990": "0.0.0-20261129032854-84d6efbac990",
		"v0.0.0-20261129032854-84d6efbac990+dirty": "0.0.0",
		"dev-0123456789ab":                         "0.0.0",
		"dev-0123456789ab+dirty":                   "0.0.0",
		version.Unknown:                            "0.0.0",
		"":                                         "0.0.0",
	} {
		got := version.SemVer(v)
		if got != want {
			t.Errorf("version.SemVer(%q) = %q, want %q", v, got, want)
		}
		svc, err := micro.AddService(nc, micro.Config{Name: "versioncheck", Version: got})
		if err != nil {
			t.Errorf("binary version %q: micro refuses the service's %q: %v", v, got, err)
			continue
		}
		svc.Stop()
	}
}
