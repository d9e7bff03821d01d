package agent_test

import (
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"lookahead/internal/logtest"
	"lookahead/wire"
)

// TestLogLinesHaveNoDuplicateKeys runs the agent's start, forecasts and
// the reserve path (granted and refused) and decodes every JSON log line
// strictly: a field named like zerolog's own ("message", "level", "time")
// or added twice ("site", "component") would hide the other in jq.
func TestLogLinesHaveNoDuplicateKeys(t *testing.T) {
	var buf logtest.Buffer
	log := zerolog.New(&buf).With().Timestamp().Logger()
	fx := runSimAgentLog(t, testConfig("gamma"), &log)
	free, busy := freeAndBusyNodes(t, fx)
	ok := request[wire.ReserveReply](t, fx.nc, "gamma", wire.VerbReserve,
		reserveReq("g1", t0+60, 600, wire.NodeProcs{Node: free[0], Procs: 4}))
	stale := request[wire.ReserveReply](t, fx.nc, "gamma", wire.VerbReserve,
		reserveReq("g2", t0+60, 600, wire.NodeProcs{Node: busy[0], Procs: 4}))
	if ok.Code != wire.CodeOK || stale.Code != wire.CodeStale || stale.Message == "" {
		t.Fatalf("replies %+v / %+v", ok, stale)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var sawReply bool
	for _, line := range lines {
		if dups, err := logtest.DuplicateKeys([]byte(line)); err != nil || len(dups) > 0 {
			t.Errorf("log line %s: keys %v twice (%v)", line, dups, err)
		}
		sawReply = sawReply || strings.Contains(line, stale.Message)
	}
	if !sawReply {
		t.Errorf("no log line carries the refusal's text %q:\n%s", stale.Message, buf.String())
	}
}
