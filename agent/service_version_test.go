package agent_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go/micro"

	"lookahead/internal/version"
	"lookahead/wire"
)

// The agent's micro service carries the binary's version as the broker's
// does (version.Service), not a fixed one: `nats micro info` and `$SRV`
// discovery tell which build a site runs.
func TestAgentServiceCarriesTheBinarysVersion(t *testing.T) {
	fx := runSimAgent(t, testConfig("gamma"))
	subject, err := micro.ControlSubject(micro.InfoVerb, wire.AgentServiceName, "")
	if err != nil {
		t.Fatal(err)
	}
	msg, err := fx.nc.Request(subject, nil, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var info micro.Info
	if err := json.Unmarshal(msg.Data, &info); err != nil {
		t.Fatal(err)
	}
	if info.Version != version.Service() || info.Metadata["version"] != version.String() {
		t.Fatalf("service version %q (metadata %q), want %q (%q)", info.Version, info.Metadata["version"], version.Service(), version.String())
	}
}
