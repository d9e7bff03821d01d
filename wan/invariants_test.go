package wan

import (
	"context"
	"fmt"
	"time"

	"lookahead/broker/brokertest"
	"lookahead/wire"
)

// settled waits until no job is committing and no release or stop is
// owed: what a fault left half done has been rolled back and released.
func (g *grid) settled() wire.StatusReply {
	g.t.Helper()
	var st wire.StatusReply
	var why string
	g.waitFor("the grid to settle", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var err error
		if st, err = g.op.Status(ctx, "", true); err != nil {
			why = err.Error()
			return false
		}
		why = ""
		for _, j := range st.Jobs {
			if j.State == wire.JobCommitting || len(j.Releasing) > 0 {
				why = fmt.Sprintf("job %s %s releasing %v", j.Job.ID, j.State, j.Releasing)
			}
		}
		return why == ""
	})
	return st
}

// check verifies the invariants after a fault (brokertest.Invariants: no
// job lost or duplicated, none half reserved, charges exact) on a queue
// that did not change while the sites' holdings were read, and that the
// broker's audit of the sites is clean.
func (g *grid) check(fault string) {
	g.t.Helper()
	var st wire.StatusReply
	var held map[string]map[string]bool
	for try := 0; ; try++ {
		before := g.settled()
		held = g.holdings()
		st = g.settled()
		if brokertest.SameStates(before, st) || try == 20 {
			break
		}
	}
	g.mu.Lock()
	bad := brokertest.Invariants(st, g.reqs, held)
	g.mu.Unlock()
	for _, b := range bad {
		g.t.Errorf("after %s: %s", fault, b)
	}
	rep, err := g.audit()
	switch {
	case err != nil:
		g.t.Errorf("after %s: audit: %v", fault, err)
	case len(rep.Findings) != 0 || len(rep.Errors) != 0:
		g.t.Errorf("after %s: audit not clean: %+v %v", fault, rep.Findings, rep.Errors)
	}
}

// audit is the broker's audit of the sites, asked again while a site did
// not answer it (a leaf node back on its link has its agent's
// subscriptions reach every grid server a moment after its first
// forecast does): a finding is returned at once.
func (g *grid) audit() (wire.AuditReport, error) {
	for deadline := time.Now().Add(waitLimit); ; time.Sleep(200 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		rep, err := g.op.Audit(ctx, false)
		cancel()
		if err != nil || len(rep.Findings) != 0 || len(rep.Errors) == 0 || time.Now().After(deadline) {
			return rep, err
		}
	}
}
