package broker

import (
	"fmt"
	"sort"
	"strings"

	"lookahead/forecast"
	"lookahead/wire"
)

// Due reports whether a planned allocation starts within the commit lead
// time and should be reserved now.
func Due(a forecast.Allocation, now, lead int64) bool {
	return a.Placed() && a.Start <= now+lead
}

// ReserveRequests builds one reserve request per site of the allocation,
// naming the forecast revision each site's part was planned on and the
// job's ACL identity, with exact per-node counts (Nodes; Procs stays 0).
// Sites are in part order; nodes in part order.
func ReserveRequests(r forecast.JobRequest, a forecast.Allocation, revisions map[string]uint64, actor string) []wire.ReserveRequest {
	bySite := map[string]*wire.ReserveRequest{}
	var out []*wire.ReserveRequest
	for _, p := range a.Parts {
		req := bySite[p.Site]
		if req == nil {
			req = &wire.ReserveRequest{
				Type: wire.TypeReserve, Job: r.ID, Site: p.Site, Revision: revisions[p.Site],
				Start: a.Start, Duration: a.End - a.Start,
				Identity:    wire.Identity{User: r.User, Account: r.Account},
				RequestedBy: actor,
			}
			bySite[p.Site] = req
			out = append(out, req)
		}
		req.Nodes = addNode(req.Nodes, p.Node, p.Procs)
	}
	reqs := make([]wire.ReserveRequest, len(out))
	for i, r := range out {
		reqs[i] = *r
	}
	return reqs
}

func addNode(nodes []wire.NodeProcs, node string, procs int) []wire.NodeProcs {
	for i := range nodes {
		if nodes[i].Node == node {
			nodes[i].Procs += procs
			return nodes
		}
	}
	return append(nodes, wire.NodeProcs{Node: node, Procs: procs})
}

// Answer is what came back from one site's reserve request: a reply, or
// the transport error (timeout, no responders) when there was none.
type Answer struct {
	Site  string
	Reply *wire.ReserveReply
	Err   error
}

// Judgement is the all-or-nothing decision over a commit's answers.
type Judgement struct {
	OK           bool
	Reservations []wire.Reservation
	// Release lists the sites to release when not OK: every site that
	// reserved or may have (no answer), and one that holds a different
	// reservation of the job (conflict). A site that refused otherwise did
	// nothing.
	Release []string
	Message string
}

// Judge decides a commit: OK only when every site of the request set
// answered ok with at least one reservation. Otherwise every site that
// answered ok or did not answer must be released.
func Judge(reqs []wire.ReserveRequest, answers []Answer) Judgement {
	got := map[string]Answer{}
	for _, a := range answers {
		got[a.Site] = a
	}
	var j Judgement
	var problems []string
	for _, req := range reqs {
		a, ok := got[req.Site]
		switch {
		case !ok:
			problems = append(problems, req.Site+": no answer")
			j.Release = append(j.Release, req.Site)
		case a.Err != nil:
			problems = append(problems, fmt.Sprintf("%s: %v", req.Site, a.Err))
			j.Release = append(j.Release, req.Site)
		case a.Reply.Code == wire.CodeOK && len(a.Reply.Reservations) > 0:
			j.Release = append(j.Release, req.Site)
			for _, r := range a.Reply.Reservations {
				if r.Site == "" {
					r.Site = req.Site
				}
				j.Reservations = append(j.Reservations, r)
			}
		case a.Reply.Code == wire.CodeOK:
			problems = append(problems, req.Site+": ok without a reservation")
			j.Release = append(j.Release, req.Site)
		case a.Reply.Code == wire.CodeConflict: // it holds another reservation of the job: released, the next attempt starts clean
			problems = append(problems, fmt.Sprintf("%s: %s %s", req.Site, a.Reply.Code, a.Reply.Message))
			j.Release = append(j.Release, req.Site)
		default:
			problems = append(problems, fmt.Sprintf("%s: %s %s", req.Site, a.Reply.Code, a.Reply.Message))
		}
	}
	if len(problems) == 0 {
		return Judgement{OK: true, Reservations: j.Reservations}
	}
	sort.Strings(j.Release)
	j.Reservations = nil
	j.Message = "commit failed: " + strings.Join(problems, "; ")
	return j
}
