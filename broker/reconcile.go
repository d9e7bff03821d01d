package broker

import (
	"slices"
	"sort"
	"strings"

	"lookahead/wire"
)

// Believed returns, per site, the reservations the broker believes exist at
// now: those of jobs that hold them (reserved, dispatched, running; a
// commit in progress is in flight, see InFlight) and have not ended.
func (s *State) Believed(now int64) map[string][]wire.Reservation {
	out := map[string][]wire.Reservation{}
	for _, j := range s.Jobs() {
		if j.State == wire.JobCommitting || !wire.HoldsReservations(j.State) {
			continue
		}
		for _, r := range j.Reservations {
			if r.End > now {
				out[r.Site] = append(out[r.Site], r)
			}
		}
	}
	return out
}

// InFlight returns, per site, the jobs whose reservations there may
// exist without the broker believing in them: a commit in progress, or a
// release owed (after a rollback, cancel or expiry) and not yet confirmed.
// An audit does not call those orphans.
func (s *State) InFlight() map[string]map[string]bool {
	out := map[string]map[string]bool{}
	add := func(site, job string) {
		if out[site] == nil {
			out[site] = map[string]bool{}
		}
		out[site][job] = true
	}
	for _, j := range s.Jobs() {
		if j.State == wire.JobCommitting {
			for _, site := range allocSites(j) {
				add(site, j.Req.ID)
			}
		}
		for site := range j.PendingRelease {
			add(site, j.Req.ID)
		}
	}
	return out
}

// Settled drops what an audit taken between from and to cannot judge:
// reservations of in-flight jobs, and reservations that ended (or end)
// before to, which a site may or may not still list.
func Settled(rs map[string][]wire.Reservation, inFlight map[string]map[string]bool, to int64) map[string][]wire.Reservation {
	out := make(map[string][]wire.Reservation, len(rs))
	for site, list := range rs {
		kept := []wire.Reservation{}
		for _, r := range list {
			if r.End > to && !inFlight[site][r.Job] {
				kept = append(kept, r)
			}
		}
		out[site] = kept
	}
	return out
}

// Reconcile compares what the broker believes with what the sites report
// (actual, per site that answered). Sites absent from actual are not
// judged. A reservation is matched by id, else by grid job; matched pairs
// whose start, end, nodes or ACL differ are drifted; unmatched believed ones
// are missing, unmatched actual ones orphaned. Findings are sorted by site,
// kind, job.
func Reconcile(believed, actual map[string][]wire.Reservation) []wire.AuditFinding {
	var out []wire.AuditFinding
	for site, have := range actual {
		out = append(out, reconcileSite(site, believed[site], have)...)
	}
	sort.SliceStable(out, func(a, b int) bool {
		x, y := out[a], out[b]
		if x.Site != y.Site {
			return x.Site < y.Site
		}
		if x.Kind != y.Kind {
			return x.Kind < y.Kind
		}
		return x.Job < y.Job
	})
	return out
}

func reconcileSite(site string, want, have []wire.Reservation) []wire.AuditFinding {
	var out []wire.AuditFinding
	used := make([]bool, len(have))
	for _, w := range want {
		k := match(w, have, used)
		if k < 0 {
			w := w
			out = append(out, wire.AuditFinding{Kind: wire.DriftMissing, Site: site, Job: w.Job, Reservation: w.ID, Broker: &w})
			continue
		}
		used[k] = true
		if fields := differ(w, have[k]); len(fields) > 0 {
			w, h := w, have[k]
			out = append(out, wire.AuditFinding{Kind: wire.DriftDrifted, Site: site, Job: w.Job, Reservation: h.ID, Fields: fields, Broker: &w, Actual: &h})
		}
	}
	for k, h := range have {
		if !used[k] {
			h := h
			out = append(out, wire.AuditFinding{Kind: wire.DriftOrphaned, Site: site, Job: h.Job, Reservation: h.ID, Actual: &h})
		}
	}
	return out
}

func match(w wire.Reservation, have []wire.Reservation, used []bool) int {
	for k, h := range have {
		if !used[k] && w.ID != "" && h.ID == w.ID {
			return k
		}
	}
	for k, h := range have {
		if !used[k] && w.Job != "" && h.Job == w.Job {
			return k
		}
	}
	return -1
}

func differ(w, h wire.Reservation) []string {
	var f []string
	if w.Start != h.Start {
		f = append(f, "start")
	}
	if w.End != h.End {
		f = append(f, "end")
	}
	if !wire.SameNodes(w, h) {
		f = append(f, "nodes")
	}
	if w.Identity != h.Identity || submitAccount(w.Submit) != submitAccount(h.Submit) || !slices.Equal(w.Extra, h.Extra) {
		f = append(f, "acl")
	}
	return f
}

// submitAccount is the account a reservation's parts are charged to (its
// binding), from its submit options ("-A la.acct0 ..."): part of its ACL.
// A Maui restart alters it (la.acct0 comes back as la.acct0+).
func submitAccount(submit string) string {
	f := strings.Fields(submit)
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "-A" {
			return f[i+1]
		}
	}
	return ""
}

// RepairOrder is the order in which audit repairs run: orphans (releases)
// first, then missing reservations (re-reserves), then the rest, each in
// the findings' order.
func RepairOrder(fs []wire.AuditFinding) []int {
	rank := func(kind string) int {
		switch kind {
		case wire.DriftOrphaned:
			return 0
		case wire.DriftMissing:
			return 1
		}
		return 2
	}
	out := make([]int, len(fs))
	for i := range out {
		out[i] = i
	}
	sort.SliceStable(out, func(a, b int) bool { return rank(fs[out[a]].Kind) < rank(fs[out[b]].Kind) })
	return out
}

// RepairRequest is the reserve request that re-creates job j's missing
// reservation on site: the job's original request there (nodes and
// identity from its allocation and request, the end without any slack a
// site added: the site adds its slack again), starting no earlier than
// now, bound to the account the broker recorded for it (Bind: the parts
// were told to submit with it). ok is false when j holds no allocation
// on site.
func RepairRequest(j *Job, site string, now int64, actor string) (wire.ReserveRequest, bool) {
	if j == nil || j.Alloc == nil {
		return wire.ReserveRequest{}, false
	}
	for _, r := range ReserveRequests(j.Req, *j.Alloc, j.Revisions, actor) {
		if r.Site != site {
			continue
		}
		end := r.Start + r.Duration
		r.Start = max(r.Start, now)
		if r.Duration = end - r.Start; r.Duration <= 0 {
			return wire.ReserveRequest{}, false
		}
		r.Bind = bindOn(j, site)
		return r, true
	}
	return wire.ReserveRequest{}, false
}

// bindOn is the binding account of job j's reservation on site as the
// broker recorded it (what its parts were told to submit with), "" when
// none.
func bindOn(j *Job, site string) string {
	for _, r := range j.Reservations {
		if r.Site == site {
			if a := wire.SubmitAccount(r.Submit); a != "" {
				return a
			}
		}
	}
	return ""
}
