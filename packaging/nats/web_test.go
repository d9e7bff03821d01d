package natsref

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"lookahead/broker"
	"lookahead/broker/web"
	"lookahead/wire"
)

// TestBrokerWebViewReadsItsStreams: the web view reads the audit stream's
// tail and a job's events from the job stream with the broker's own
// identity under grid.conf, with no permission violation.
func TestBrokerWebViewReadsItsStreams(t *testing.T) {
	s := startGrid(t)
	b := connect(t, s, brokerCfg)
	js, _ := setupBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	for i, kind := range []string{broker.EvSubmitted, broker.EvIntent} {
		data, _ := json.Marshal(broker.Event{Kind: kind, Time: int64(i), Job: "g1"})
		if _, err := js.Publish(ctx, fmt.Sprintf(wire.JobSubjectT, "g1"), data); err != nil {
			t.Fatalf("append a job event: %v", err)
		}
	}
	rec, _ := json.Marshal(wire.AuditRecord{Type: wire.TypeAudit, Origin: wire.AuditOriginBroker, Action: "commit", Job: "g1", Code: wire.CodeOK})
	if _, err := js.Publish(ctx, wire.AuditSubject(wire.AuditOriginBroker, "commit"), rec); err != nil {
		t.Fatalf("append an audit record: %v", err)
	}
	st := web.Streams{JS: js}
	events, err := st.JobEvents(ctx, "g1")
	if err != nil || len(events) != 2 || events[1].Kind != broker.EvIntent {
		t.Errorf("job events %+v: %v", events, err)
	}
	recs, err := st.FollowAudit(ctx, 10).Records(ctx)
	if err != nil || len(recs) != 1 || recs[0].Action != "commit" || recs[0].Origin != wire.AuditOriginBroker {
		t.Errorf("audit tail %+v: %v", recs, err)
	}
	b.noViolations(t)
}
