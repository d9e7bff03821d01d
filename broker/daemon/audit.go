package daemon

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"lookahead/broker"
	"lookahead/wire"
)

// Audit asks every known site for its real reservations and compares them
// with the broker's records. With repair, orphans are released and missing
// reservations re-requested; drifted ones are reported only.
func (b *Broker) Audit(ctx context.Context, repair bool) wire.AuditReport {
	b.mu.Lock()
	var sites []string
	for s := range b.sites {
		sites = append(sites, s)
	}
	b.mu.Unlock()
	sort.Strings(sites)
	rep := wire.AuditReport{Type: wire.TypeAuditReport, Code: wire.CodeOK, Time: b.now(), Sites: sites, Findings: []wire.AuditFinding{}}
	b.mu.Lock()
	before, skip := b.state.Believed(b.now()), b.state.InFlight()
	b.mu.Unlock()
	actual, errs := b.listAll(ctx, sites)
	rep.Errors = errs
	b.mu.Lock()
	to, believed := b.now(), b.state.Believed(b.now())
	merge(skip, b.state.InFlight())
	b.mu.Unlock()
	// What changed while the sites answered (a commit finished, a release
	// confirmed) is not judged.
	merge(skip, changed(before, believed))
	actual = broker.Settled(actual, skip, to)
	believed = broker.Settled(believed, skip, to)
	for _, rs := range actual {
		rep.Checked += len(rs)
	}
	rep.Findings = broker.Reconcile(believed, actual)
	if repair {
		// Orphans first: one may hold the processors a missing
		// reservation needs (a kill -9 of Maui brings back a released
		// one and loses a newer one on the same nodes).
		for _, i := range broker.RepairOrder(rep.Findings) {
			f := &rep.Findings[i]
			f.RepairCode, f.Repair = b.repair(ctx, *f, believed)
		}
	}
	counts := map[string]int{}
	for _, f := range rep.Findings {
		counts[f.Kind]++
	}
	b.cfg.Metrics.AuditDone(counts)
	if m, ok := b.cfg.Metrics.(interface{ AuditRepairsFailed(int) }); ok && repair {
		m.AuditRepairsFailed(failedRepairs(rep))
	}
	b.audit(ctx, wire.AuditRecord{Action: "audit", Code: wire.CodeOK,
		Message: fmt.Sprintf("%d sites, %d reservations checked, %d findings, repair=%v", len(sites), rep.Checked, len(rep.Findings), repair),
		Detail:  rep.Findings})
	return rep
}

// changed lists, per site, the jobs with a reservation believed in a or b
// but not both.
func changed(a, b map[string][]wire.Reservation) map[string]map[string]bool {
	key := func(m map[string][]wire.Reservation) map[string]bool {
		k := map[string]bool{}
		for site, list := range m {
			for _, r := range list {
				k[site+"\x00"+r.Job+"\x00"+r.ID] = true
			}
		}
		return k
	}
	ka, kb := key(a), key(b)
	out := map[string]map[string]bool{}
	for _, m := range []map[string][]wire.Reservation{a, b} {
		for site, list := range m {
			for _, r := range list {
				k := site + "\x00" + r.Job + "\x00" + r.ID
				if ka[k] != kb[k] {
					if out[site] == nil {
						out[site] = map[string]bool{}
					}
					out[site][r.Job] = true
				}
			}
		}
	}
	return out
}

// merge adds the jobs of src to dst.
func merge(dst, src map[string]map[string]bool) {
	for site, jobs := range src {
		if dst[site] == nil {
			dst[site] = map[string]bool{}
		}
		for j := range jobs {
			dst[site][j] = true
		}
	}
}

// listAll asks each site for its reservations in parallel.
func (b *Broker) listAll(ctx context.Context, sites []string) (map[string][]wire.Reservation, []string) {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.ReserveTimeout)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	actual := map[string][]wire.Reservation{}
	var errs []string
	for _, s := range sites {
		wg.Go(func() {
			var reply wire.ListReply
			err := b.request(ctx, wire.AgentSubject(s, wire.VerbList), wire.ListRequest{Type: wire.TypeList}, &reply)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				errs = append(errs, fmt.Sprintf("%s: %v", s, err))
			case reply.Code != wire.CodeOK:
				errs = append(errs, fmt.Sprintf("%s: %s %s", s, reply.Code, reply.Message))
			default:
				for i := range reply.Reservations {
					if reply.Reservations[i].Site == "" {
						reply.Reservations[i].Site = s
					}
				}
				actual[s] = reply.Reservations
			}
		})
	}
	wg.Wait()
	sort.Strings(errs)
	return actual, errs
}

// repair fixes one finding and says what it did: wire.RepairDone, or
// why not (wire.RepairRefused: the site or the broker's rules said no;
// wire.RepairReported: drifted, reported only; wire.RepairFailed: the
// machinery failed).
func (b *Broker) repair(ctx context.Context, f wire.AuditFinding, believed map[string][]wire.Reservation) (string, string) {
	switch f.Kind {
	case wire.DriftOrphaned:
		for _, r := range believed[f.Site] {
			if r.Job == f.Job {
				return wire.RepairRefused, "not released: the broker holds another reservation of this job on the site"
			}
		}
		reply, err := b.release(ctx, f.Job, f.Site, "audit repair: orphaned reservation")
		switch {
		case err != nil:
			return wire.RepairFailed, "release failed: " + err.Error()
		case reply.Code == wire.CodeForbidden:
			return wire.RepairReported, "not released: " + reply.Message
		case reply.Code != wire.CodeOK && reply.Code != wire.CodeNotFound:
			return wire.RepairRefused, fmt.Sprintf("release refused: %s %s", reply.Code, reply.Message)
		}
		return wire.RepairDone, fmt.Sprintf("released (%s) %v", reply.Code, reply.Released)
	case wire.DriftMissing:
		b.mu.Lock()
		req, ok := broker.RepairRequest(b.state.Job(f.Job), f.Site, b.now(), b.cfg.Name+" (audit repair)")
		if s := b.sites[f.Site]; s != nil {
			req.Revision = s.Forecast.Seq
		}
		b.mu.Unlock()
		if !ok {
			return wire.RepairRefused, "not re-reserved: the job no longer holds an allocation on the site"
		}
		return b.rereserve(ctx, req)
	}
	return wire.RepairReported, "not repaired: release and cancel/resubmit the job to move it"
}

// rereserve asks a site again for a reservation the broker believes in,
// with the job's original request (broker.RepairRequest).
func (b *Broker) rereserve(ctx context.Context, req wire.ReserveRequest) (string, string) {
	r := wire.Reservation{Job: req.Job, Site: req.Site, Identity: req.Identity}
	ctx, cancel := context.WithTimeout(ctx, b.cfg.ReserveTimeout)
	defer cancel()
	var reply wire.ReserveReply
	if err := b.request(ctx, wire.AgentSubject(r.Site, wire.VerbReserve), req, &reply); err != nil {
		return wire.RepairFailed, "re-reserve failed: " + err.Error()
	}
	b.audit(ctx, wire.AuditRecord{Action: "reserve", Job: r.Job, Site: r.Site, Identity: r.Identity, Code: reply.Code,
		Message: "audit repair: " + reply.Message, Detail: reply.Reservations})
	if reply.Code != wire.CodeOK {
		return wire.RepairRefused, fmt.Sprintf("re-reserve refused: %s %s", reply.Code, reply.Message)
	}
	for i := range reply.Reservations {
		if reply.Reservations[i].Site == "" {
			reply.Reservations[i].Site = r.Site
		}
	}
	b.lockToWrite()
	err := b.record(ctx, broker.Event{Kind: broker.EvRepaired, Time: b.now(), Job: r.Job, Site: r.Site, Reservations: reply.Reservations})
	b.mu.Unlock()
	if err != nil {
		return wire.RepairFailed, "re-reserved, but not recorded: " + err.Error()
	}
	return wire.RepairDone, fmt.Sprintf("re-reserved as %s", reservationIDs(reply.Reservations))
}

func reservationIDs(rs []wire.Reservation) string {
	s := ""
	for i, r := range rs {
		if i > 0 {
			s += ","
		}
		s += r.ID
	}
	return s
}

// failedRepairs counts the repairs of rep that could not be done: refused
// or failed, and one per site that did not answer.
func failedRepairs(rep wire.AuditReport) int {
	n := len(rep.Errors)
	for _, f := range rep.Findings {
		if f.RepairCode == wire.RepairFailed || f.RepairCode == wire.RepairRefused {
			n++
		}
	}
	return n
}
