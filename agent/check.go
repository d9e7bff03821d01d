package agent

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"lookahead/forecast"
	"lookahead/internal/durfmt"
	"lookahead/wire"
)

// Limits are what CheckReserve needs besides the request: the site, the
// instant of the check and the configured bounds (seconds).
type Limits struct {
	Site        string
	Now         int64
	MaxDuration int64
	PastGrace   int64
}

// Refusal is a reserve/release request refused with a stable wire code.
type Refusal struct {
	Code    string
	Message string
}

func refuse(code, format string, args ...any) *Refusal {
	return &Refusal{Code: code, Message: fmt.Sprintf(format, args...)}
}

// maxRequester bounds RequestedBy, which is only recorded.
const maxRequester = 256

// CheckReserve validates a reserve request on its own, before anything
// about the cluster is read or any command is built: message type, site,
// grid job id and identity (plain names only; at least one of user, group,
// account, so the reservation is bound), times (a start less than
// PastGrace in the past is moved to now; older is in-past), duration
// (> 0, ≤ MaxDuration) and the processor request (exactly one of Nodes and
// Procs; plain node names, counts > 0, no node twice). Pure.
func CheckReserve(req wire.ReserveRequest, lim Limits) (ReserveSpec, *Refusal) {
	if r := checkHeader(req.Type, wire.TypeReserve, req.Site, req.Job, req.RequestedBy, lim.Site); r != nil {
		return ReserveSpec{}, r
	}
	if r := checkIdentity(req.Identity); r != nil {
		return ReserveSpec{}, r
	}
	switch {
	case req.Duration <= 0:
		return ReserveSpec{}, refuse(wire.CodeInvalid, "duration %d: must be > 0 seconds", req.Duration)
	case req.Duration > lim.MaxDuration:
		return ReserveSpec{}, refuse(wire.CodeTooLong, "duration %s: over this site's maximum of %s", durfmt.Seconds(req.Duration), durfmt.Seconds(lim.MaxDuration))
	case req.Start+req.Duration <= lim.Now || req.Start < lim.Now-lim.PastGrace:
		return ReserveSpec{}, refuse(wire.CodeInPast, "start %d: already passed (now %d)", req.Start, lim.Now)
	}
	nodes, r := checkProcs(req)
	if r != nil {
		return ReserveSpec{}, r
	}
	if req.Bind != "" && !forecast.IsPlainName(req.Bind) {
		return ReserveSpec{}, refuse(wire.CodeInvalid, "bind %q: not a plain name", clip(req.Bind))
	}
	return ReserveSpec{Job: req.Job, Start: max(req.Start, lim.Now), End: req.Start + req.Duration,
		Nodes: nodes, Identity: req.Identity, Bind: req.Bind}, nil
}

// CheckRelease validates a release request. Pure.
func CheckRelease(req wire.ReleaseRequest, site string) *Refusal {
	if r := checkHeader(req.Type, wire.TypeRelease, req.Site, req.Job, req.RequestedBy, site); r != nil {
		return r
	}
	if len(req.Reason) > maxRequester || !printable(req.Reason) {
		return refuse(wire.CodeInvalid, "reason: at most %d printable characters", maxRequester)
	}
	return nil
}

func checkHeader(typ, want, site, job, by, ours string) *Refusal {
	switch {
	case typ != want:
		return refuse(wire.CodeInvalid, "type %q: want %q", clip(typ), want)
	case site != ours:
		return refuse(wire.CodeInvalid, "site %q: this agent serves %q", clip(site), ours)
	case !forecast.IsPlainName(job):
		return refuse(wire.CodeInvalid, "job %q: must be a plain name", clip(job))
	case len(by) > maxRequester || !printable(by):
		return refuse(wire.CodeInvalid, "requested_by: at most %d printable characters", maxRequester)
	}
	return nil
}

func checkIdentity(id wire.Identity) *Refusal {
	if id.User == "" && id.Group == "" && id.Account == "" {
		return refuse(wire.CodeInvalid, "identity: one of user, group, account is required to bind the reservation")
	}
	for _, f := range []struct{ name, v string }{{"user", id.User}, {"group", id.Group}, {"account", id.Account}} {
		if f.v != "" && (!forecast.IsPlainName(f.v) || reservedWord(f.v)) {
			return refuse(wire.CodeInvalid, "identity %s %q: must be a plain name (letters, digits, '_', '.', '-'; 1-64 characters; not starting with '-' or '.')", f.name, clip(f.v))
		}
	}
	return nil
}

func checkProcs(req wire.ReserveRequest) ([]wire.NodeProcs, *Refusal) {
	switch {
	case len(req.Nodes) > 0 && req.Procs != 0:
		return nil, refuse(wire.CodeInvalid, "give either nodes or procs, not both")
	case len(req.Nodes) == 0 && req.Procs <= 0:
		return nil, refuse(wire.CodeInvalid, "procs %d: must be > 0 (or give nodes)", req.Procs)
	}
	seen := map[string]bool{}
	for i, n := range req.Nodes {
		switch {
		case !forecast.IsPlainName(n.Node) || reservedWord(n.Node):
			return nil, refuse(wire.CodeInvalid, "nodes[%d] %q: must be a plain name", i, clip(n.Node))
		case n.Procs <= 0:
			return nil, refuse(wire.CodeInvalid, "nodes[%d] %s: procs %d, must be > 0", i, n.Node, n.Procs)
		case seen[n.Node]:
			return nil, refuse(wire.CodeInvalid, "nodes[%d] %s: listed twice", i, n.Node)
		}
		seen[n.Node] = true
	}
	return append([]wire.NodeProcs(nil), req.Nodes...), nil
}

// CheckCapacity refuses a request for processors the site does not have
// at all: unknown or unusable nodes, more processors than a node has, or
// more than the site's usable total. procs is the site-wide count of a
// request without nodes. Pure.
func CheckCapacity(snap forecast.Snapshot, nodes []wire.NodeProcs, procs int) *Refusal {
	have := map[string]int{}
	total := 0
	for _, n := range snap.Nodes {
		if n.Usable() {
			have[n.Name] = n.Procs
			total += n.Procs
		}
	}
	for _, n := range nodes {
		p, ok := have[n.Node]
		switch {
		case !ok:
			return refuse(wire.CodeNoCapacity, "node %s: not a usable node of this site", n.Node)
		case n.Procs > p:
			return refuse(wire.CodeNoCapacity, "node %s: %d procs asked, it has %d", n.Node, n.Procs, p)
		}
		procs += n.Procs
	}
	if procs > total {
		return refuse(wire.CodeNoCapacity, "%d procs asked, the site has %d usable", procs, total)
	}
	return nil
}

// Fit re-checks a request on a fresh forecast: every named node must offer
// its processors in slots over the whole of [spec.Start, spec.End); for a
// site-wide count (spec.Nodes empty) nodes are picked, most free first,
// then by name. It returns the nodes to reserve, or a stale refusal. Pure.
func Fit(f *forecast.Forecast, spec ReserveSpec, procs int) ([]wire.NodeProcs, *Refusal) {
	byNode := map[string][]forecast.Slot{}
	for _, s := range f.Slots {
		byNode[s.Node] = append(byNode[s.Node], s)
	}
	if len(spec.Nodes) > 0 {
		for _, n := range spec.Nodes {
			if free := Available(byNode[n.Node], spec.Start, spec.End); free < n.Procs {
				return nil, refuse(wire.CodeStale, "node %s: %d procs free over [%d, %d), %d asked", n.Node, free, spec.Start, spec.End, n.Procs)
			}
		}
		return spec.Nodes, nil
	}
	return pickNodes(f, byNode, spec, procs)
}

func pickNodes(f *forecast.Forecast, byNode map[string][]forecast.Slot, spec ReserveSpec, procs int) ([]wire.NodeProcs, *Refusal) {
	var cands []wire.NodeProcs
	for _, n := range f.Nodes {
		if free := Available(byNode[n.Name], spec.Start, spec.End); free > 0 {
			cands = append(cands, wire.NodeProcs{Node: n.Name, Procs: free})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].Procs != cands[j].Procs {
			return cands[i].Procs > cands[j].Procs
		}
		return cands[i].Node < cands[j].Node
	})
	var out []wire.NodeProcs
	left := procs
	for _, c := range cands {
		if left == 0 {
			break
		}
		take := min(c.Procs, left)
		out = append(out, wire.NodeProcs{Node: c.Node, Procs: take})
		left -= take
	}
	if left > 0 {
		return nil, refuse(wire.CodeStale, "%d procs free over [%d, %d), %d asked", procs-left, spec.Start, spec.End, procs)
	}
	return out, nil
}

// SlackEnd is how far past end the reservation of nodes may run: up to
// end+slack, cut at the first instant a node no longer offers its
// processors in f's slots (a later reservation, a running job). Time a
// queued local job is predicted to hold counts as offered, as it does for
// the reservation itself. Pure.
func SlackEnd(f *forecast.Forecast, nodes []wire.NodeProcs, end, slack int64) int64 {
	if slack <= 0 {
		return end
	}
	byNode := map[string][]forecast.Slot{}
	for _, s := range f.Slots {
		byNode[s.Node] = append(byNode[s.Node], s)
	}
	cands := []int64{end + slack}
	for _, n := range nodes {
		for _, s := range byNode[n.Node] {
			for _, p := range []int64{s.Start, s.End} {
				if p > end && p < end+slack {
					cands = append(cands, p)
				}
			}
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i] > cands[j] })
	for _, e := range cands {
		fits := true
		for _, n := range nodes {
			if Available(byNode[n.Node], end, e) < n.Procs {
				fits = false
				break
			}
		}
		if fits {
			return e
		}
	}
	return end
}

// Available is the number of processors a node's slots offer over the
// whole of [a, b): the minimum over that interval of the sum of procs of
// the slots containing each instant (DESIGN.md, meaning of a node's
// slots). Pure.
func Available(slots []forecast.Slot, a, b int64) int {
	if b <= a {
		return 0
	}
	points := []int64{a}
	for _, s := range slots {
		for _, p := range []int64{s.Start, s.End} {
			if p > a && p < b {
				points = append(points, p)
			}
		}
	}
	least := -1
	for _, p := range points {
		sum := 0
		for _, s := range slots {
			if s.Start <= p && p < s.End {
				sum += s.Procs
			}
		}
		if least < 0 || sum < least {
			least = sum
		}
	}
	return least
}

// reservedWord reports names that Maui reads as keywords rather than
// names: an ACL of user ALL would let everyone into the reservation, a
// host list ALL would take every node.
func reservedWord(s string) bool {
	switch strings.ToUpper(s) {
	case "ALL", "NONE", "DEFAULT":
		return true
	}
	return false
}

func printable(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// clip shortens what a refusal echoes back, so a hostile value is neither
// reflected whole nor allowed to break a log line.
func clip(s string) string {
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return '?'
	}, s)
}

func itoa(n int) string { return fmt.Sprint(n) }
