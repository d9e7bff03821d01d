package agent

import (
	"fmt"
	"strings"

	"lookahead/wire"
)

// sameHold says how the reservations job already holds here differ from
// a reserve request for it (a retry must find what it asked for, not
// another reservation of the same job); "" when they hold what it asks:
// the same processors on the same nodes (or as many, for a site-wide
// count), its start (or up to pastGrace later: a start just past is moved
// to now), at least its end (slack may extend it), and its identity where
// the scheduler reports one. spec is the checked request
// (CheckReserve, LocalIdentity). Pure.
func sameHold(spec ReserveSpec, req wire.ReserveRequest, held []wire.Reservation, pastGrace int64) string {
	var got wire.Reservation
	for i, r := range held {
		if i == 0 || r.Start < got.Start {
			got.Start = r.Start
		}
		got.End = max(got.End, r.End)
		got.Nodes = append(got.Nodes, r.Nodes...)
		got.CoresUnknown = got.CoresUnknown || r.CoresUnknown
		got.Identity = mergeIdentity(got.Identity, r.Identity)
	}
	var why []string
	total := 0
	for _, n := range got.Nodes {
		total += n.Procs
	}
	switch {
	case len(spec.Nodes) > 0 && !wire.SameNodes(wire.Reservation{Nodes: spec.Nodes}, got):
		why = append(why, fmt.Sprintf("nodes %s, the request asks %s", nodeList(got.Nodes), nodeList(spec.Nodes)))
	case len(spec.Nodes) == 0 && total != req.Procs:
		why = append(why, fmt.Sprintf("%d processors, the request asks %d", total, req.Procs))
	}
	if got.Start < req.Start || got.Start > req.Start+pastGrace {
		why = append(why, fmt.Sprintf("start %d, the request asks %d", got.Start, req.Start))
	}
	if end := req.Start + req.Duration; got.End < end {
		why = append(why, fmt.Sprintf("end %d, before the request's %d", got.End, end))
	}
	for _, f := range []struct{ name, want, have string }{{"user", spec.Identity.User, got.Identity.User},
		{"group", spec.Identity.Group, got.Identity.Group}, {"account", spec.Identity.Account, got.Identity.Account}} {
		if f.want != "" && f.have != "" && f.want != f.have {
			why = append(why, fmt.Sprintf("%s %s, the request asks %s", f.name, f.have, f.want))
		}
	}
	return strings.Join(why, "; ")
}

func mergeIdentity(a, b wire.Identity) wire.Identity {
	if a.User == "" {
		a.User = b.User
	}
	if a.Group == "" {
		a.Group = b.Group
	}
	if a.Account == "" {
		a.Account = b.Account
	}
	return a
}

func nodeList(ns []wire.NodeProcs) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprintf("%s:%d", n.Node, n.Procs)
	}
	return strings.Join(parts, ",")
}
