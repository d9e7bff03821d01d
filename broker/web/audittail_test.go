package web_test

import (
	"fmt"
	"sync"
	"testing"

	"lookahead/broker/web"
	"lookahead/wire"
)

// TestAuditTabSharesOneConsumer: however many Audit tabs poll, the broker
// holds one consumer on the audit stream (it made one per read), and each
// read still has the record appended just before it.
func TestAuditTabSharesOneConsumer(t *testing.T) {
	g := newGrid(t)
	g.startBroker()
	nc := g.connect()
	spy, err := nc.SubscribeSync("$JS.API.CONSUMER.CREATE.>")
	if err != nil || nc.Flush() != nil {
		t.Fatal(err)
	}
	const polls, tabs = 4, 3
	for i := range polls {
		job := fmt.Sprintf("g%d", i)
		g.publishAudit(wire.AuditRecord{Type: wire.TypeAudit, Origin: wire.AuditOriginBroker, Action: "commit", Job: job, Code: wire.CodeOK})
		var wg sync.WaitGroup
		views, errs := make([]web.AuditView, tabs), make([]error, tabs)
		for tab := range tabs {
			wg.Go(func() { errs[tab] = readJSON(g.url+"api/audit", &views[tab]) })
		}
		wg.Wait()
		for tab, v := range views {
			if errs[tab] != nil {
				t.Fatalf("poll %d, tab %d: %v", i, tab, errs[tab])
			}
			lines := v.Origins[wire.AuditOriginBroker]
			if len(lines) != i+1 || lines[0].Job != job {
				t.Errorf("poll %d, tab %d: the broker's records %+v, want %d, the newest %s first", i, tab, lines, i+1, job)
			}
		}
	}
	nc.Flush()
	if n, _, _ := spy.Pending(); n != 1 {
		t.Errorf("%d polls of %d tabs made %d consumers on the streams, want 1", polls, tabs, n)
	}
}
