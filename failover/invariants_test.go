package failover

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"lookahead/broker/brokertest"
	"lookahead/wire"
)

// request asks subject with v and decodes the reply into out.
func (g *grid) request(subject string, v, out any, timeout time.Duration) error {
	data, _ := json.Marshal(v)
	msg, err := g.client.Request(subject, data, timeout)
	if err != nil {
		return err
	}
	return json.Unmarshal(msg.Data, out)
}

// settle waits until no job is committing and no release is owed: what a
// fault left half done has been rolled back and released.
func (g *grid) settle(within time.Duration) wire.StatusReply {
	g.t.Helper()
	var st wire.StatusReply
	var why string
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		st = wire.StatusReply{}
		if err := g.request(wire.BrokerSubject(wire.VerbStatus), wire.StatusRequest{Type: wire.TypeStatus, All: true}, &st, 5*time.Second); err != nil {
			why = err.Error()
			continue
		}
		why = ""
		for _, j := range st.Jobs {
			if j.State == wire.JobCommitting || len(j.Releasing) > 0 {
				why = fmt.Sprintf("job %s %s releasing %v", j.Job.ID, j.State, j.Releasing)
			}
		}
		if why == "" {
			return st
		}
	}
	g.t.Fatalf("the grid did not settle within %v: %s", within, why)
	return st
}

// siteRecord is one agent audit record of a request that changes the site.
type siteRecord struct {
	action, job, code, message string
	epoch                      uint64
}

// siteRecords reads every site's reserve and release records, in stream
// order (each site serves them one at a time and audits each before the
// next).
func (g *grid) siteRecords() map[string][]siteRecord {
	g.t.Helper()
	var err error
	for range 5 {
		var out map[string][]siteRecord
		if out, err = g.readSiteRecords(); err == nil {
			return out
		}
		time.Sleep(time.Second) // a server of the cluster is away
	}
	g.t.Fatalf("audit stream: %v", err)
	return nil
}

func (g *grid) readSiteRecords() (map[string][]siteRecord, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js, _ := jetstream.New(g.client)
	s, err := js.Stream(ctx, wire.AuditStream)
	if err != nil {
		return nil, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string][]siteRecord{}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		msg, err := s.GetMsg(ctx, seq)
		if err != nil {
			return nil, fmt.Errorf("audit record %d: %w", seq, err)
		}
		var r wire.AuditRecord
		if json.Unmarshal(msg.Data, &r) != nil || r.Origin == wire.AuditOriginBroker ||
			(r.Action != wire.VerbReserve && r.Action != wire.VerbRelease) {
			continue
		}
		var detail struct {
			Request struct {
				Epoch uint64 `json:"epoch"`
			} `json:"request"`
		}
		raw, _ := json.Marshal(r.Detail)
		json.Unmarshal(raw, &detail)
		out[r.Origin] = append(out[r.Origin], siteRecord{action: r.Action, job: r.Job, code: r.Code, message: r.Message, epoch: detail.Request.Epoch})
	}
	return out, nil
}

// check verifies the invariants after a fault: no job lost or duplicated,
// none half reserved, charges exact, the audit clean, no site served a
// request of an older epoch than one it served before, and no job holds
// reservations made in two epochs.
func (g *grid) check(fault string) {
	g.t.Helper()
	st, held := g.snapshot()
	fail := func(format string, args ...any) { g.t.Errorf("after %s: "+format, append([]any{fault}, args...)...) }
	for _, bad := range brokertest.Invariants(st, g.reqs, held) {
		fail("%s", bad)
	}
	var rep wire.AuditReport
	if err := g.request(wire.BrokerSubject(wire.VerbAudit), wire.AuditRequest{Type: wire.TypeAuditReq}, &rep, 30*time.Second); err != nil {
		fail("audit: %v", err)
	} else if len(rep.Findings) != 0 || len(rep.Errors) != 0 {
		fail("audit not clean: %+v %v", rep.Findings, rep.Errors)
	}
	g.checkEpochs(fault, held)
}

// checkEpochs: per site, every request served (not fenced) carries an
// epoch at least that of every request served before; per job, every
// reservation it holds was made in one epoch.
func (g *grid) checkEpochs(fault string, held map[string]map[string]bool) {
	made := map[string]map[string]uint64{} // job → site → epoch of the reserve that made its reservation
	for site, recs := range g.siteRecords() {
		var highest uint64
		for _, r := range recs {
			if r.code == wire.CodeFenced || r.code == wire.CodeInvalid {
				continue
			}
			if r.epoch < highest {
				g.t.Errorf("after %s: site %s served %s of %s from epoch %d after epoch %d", fault, site, r.action, r.job, r.epoch, highest)
			}
			highest = max(highest, r.epoch)
			if r.action == wire.VerbReserve && r.code == wire.CodeOK && !strings.HasPrefix(r.message, "already reserved") {
				if made[r.job] == nil {
					made[r.job] = map[string]uint64{}
				}
				made[r.job][site] = r.epoch
			}
		}
	}
	for job, bySite := range made {
		epochs := map[uint64]bool{}
		for site, e := range bySite {
			if held[site][job] {
				epochs[e] = true
			}
		}
		if len(epochs) > 1 {
			g.t.Errorf("after %s: job %s holds reservations from epochs %v", fault, job, keys(epochs))
		}
	}
}

// snapshot is the settled queue and what the sites hold, taken so that
// no job changed state while the sites were asked (the queue is read
// before and after; a cycle in between makes it try again).
func (g *grid) snapshot() (wire.StatusReply, map[string]map[string]bool) {
	g.t.Helper()
	for try := 0; ; try++ {
		before := g.settle(60 * time.Second)
		held := g.siteHoldings()
		after := g.settle(60 * time.Second)
		if brokertest.SameStates(before, after) || try == 20 {
			return after, held
		}
	}
}

// siteHoldings lists, per site, the jobs it holds reservations of.
func (g *grid) siteHoldings() map[string]map[string]bool {
	g.t.Helper()
	out := map[string]map[string]bool{}
	for _, site := range []string{"alpha", "beta"} {
		var rep wire.ListReply
		if err := g.request(wire.AgentSubject(site, wire.VerbList), wire.ListRequest{Type: wire.TypeList}, &rep, 10*time.Second); err != nil {
			g.t.Fatalf("list %s: %v", site, err)
		}
		out[site] = map[string]bool{}
		for _, r := range rep.Reservations {
			out[site][r.Job] = true
		}
	}
	return out
}

func keys(m map[uint64]bool) []uint64 {
	var out []uint64
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(a, b int) bool { return out[a] < out[b] })
	return out
}
