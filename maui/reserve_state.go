package maui

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"lookahead/forecast"
)

// holding is what one reservation row holds on one node.
type holding struct {
	id         string
	typ        string
	node       string
	procs      int
	start, end int64
}

// resState is Maui's reservation table as three commands show it.
type resState struct {
	rows  []ShowresRow
	nodes []ShowresNodeRow
	diag  map[string]ResDiag
	start map[string]int64 // absolute start per reservation id
}

func (c *Client) showres(ctx context.Context) ([]ShowresRow, error) {
	res, err := c.run(ctx, "showres")
	if err != nil {
		return nil, err
	}
	return ParseShowres(bytes.NewReader(res.Stdout))
}

func (c *Client) run(ctx context.Context, name string, args ...string) (Result, error) {
	res, err := c.r.Run(ctx, name, args...)
	if err != nil {
		return res, fmt.Errorf("%s: %w", name, err)
	}
	if res.ExitCode != 0 {
		return res, fmt.Errorf("%s %s: exit %d: %s", name, strings.Join(args, " "), res.ExitCode, trimmed(res.Stderr))
	}
	return res, nil
}

// state reads showres, showres -n and diagnose -r.
func (c *Client) state(ctx context.Context) (*resState, error) {
	rows, err := c.showres(ctx)
	if err != nil {
		return nil, err
	}
	st := &resState{rows: rows, diag: map[string]ResDiag{}, start: map[string]int64{}}
	now := c.cfg.Now()
	for _, r := range rows {
		t, err := ParseClock(r.StartTime, c.cfg.Location, now)
		if err != nil {
			return nil, fmt.Errorf("showres %s: %w", r.ID, err)
		}
		st.start[r.ID] = t.Unix()
	}
	if len(rows) == 0 {
		return st, nil
	}
	res, err := c.run(ctx, "showres", "-n")
	if err != nil {
		return nil, err
	}
	sn, err := ParseShowresNodes(bytes.NewReader(res.Stdout))
	if err != nil {
		return nil, err
	}
	st.nodes = sn.Rows
	if res, err = c.run(ctx, "diagnose", "-r"); err != nil {
		return nil, err
	}
	diags, err := ParseDiagnoseRes(bytes.NewReader(res.Stdout))
	if err != nil {
		return nil, err
	}
	for _, d := range diags {
		st.diag[d.ID] = d
	}
	return st, nil
}

// perNode is what a user reservation holds on each of its nodes.
// showres -n's Task column is not a processor count (it shows 1 for a
// reservation of two 1-proc tasks on a node), so the per-node share is
// diagnose -r's Proc total over its Node count, rounded up: exact for
// lookahead's own reservations (one setres per processor count) and for
// whole-node ones, never less than the truth for others.
func perNode(d ResDiag) int {
	if d.Nodes <= 0 {
		return 0
	}
	return (d.Procs + d.Nodes - 1) / d.Nodes
}

// binds maps the binding account of every lookahead reservation to its
// user ("" when the ACL names none).
func (c *Client) binds(st *resState) map[string]string {
	out := map[string]string{}
	for _, r := range st.rows {
		if _, ours := c.JobOf(r.ID); !ours || r.Type != "User" {
			continue
		}
		if user, _, _, bind := aclIdentity(st.diag[r.ID]); bind != "" {
			out[bind] = user
		}
	}
	return out
}

// insideReservation reports whether a job reservation's credentials are
// those of a grid job's part (user and binding account of a lookahead
// reservation): it runs inside that reservation, whose processors already
// count.
func insideReservation(d ResDiag, binds map[string]string) bool {
	var user, acct string
	for _, e := range d.CL {
		switch e.Type {
		case "USER":
			user = e.Name
		case "ACCT":
			acct = e.Name
		}
	}
	u, ok := binds[acct]
	return ok && (u == "" || u == user)
}

// holdings lists what every user reservation and running job holds per
// node. Idle jobs' reservations are Maui's plans, not holds; running grid
// parts are inside their reservations and not counted twice.
func (c *Client) holdings(st *resState) []holding {
	dur := map[string]int64{}
	for _, r := range st.rows {
		dur[r.ID] = r.Duration
	}
	binds := c.binds(st)
	var out []holding
	for _, n := range st.nodes {
		h := holding{id: n.ID, typ: n.Type, node: n.Node, start: st.start[n.ID]}
		h.end = h.start + dur[n.ID]
		switch {
		case n.Type == "User":
			h.procs = perNode(st.diag[n.ID])
		case n.Type == "Job" && n.JobState == "Running" && !insideReservation(st.diag[n.ID], binds):
			h.procs = n.Tasks
		default:
			continue
		}
		out = append(out, h)
	}
	return out
}

// byJob folds lookahead's user reservations into one Reservation per job.
func (st *resState) byJob(c *Client) map[string]Reservation {
	out := map[string]Reservation{}
	procs := map[string]map[string]int{}
	for _, h := range c.holdings(st) {
		job, ok := c.JobOf(h.id)
		if !ok || h.typ != "User" {
			continue
		}
		r, seen := out[job]
		if !seen {
			r = Reservation{Job: job, Start: h.start, End: h.end}
			r.User, r.Group, r.Account, r.Bind = aclIdentity(st.diag[h.id])
			procs[job] = map[string]int{}
		}
		if !slices.Contains(r.IDs, h.id) {
			r.IDs = append(r.IDs, h.id)
		}
		r.Start, r.End = min(r.Start, h.start), max(r.End, h.end)
		procs[job][h.node] += h.procs
		out[job] = r
	}
	for job, r := range out {
		sort.Strings(r.IDs)
		for n, p := range procs[job] {
			r.Hosts = append(r.Hosts, forecast.HostProcs{Node: n, Procs: p})
		}
		r.Hosts = normHosts(r.Hosts)
		r.Qsub = QsubArgs(r)
		out[job] = r
	}
	return out
}

// checkOverlap refuses a request whose processors, added to what user
// reservations and running jobs already hold on a node at some instant of
// [Start, End), exceed the node's capacity. Without Capacity it checks
// nothing (Maui itself accepts such overlaps).
func (c *Client) checkOverlap(st *resState, req ReserveRequest) error {
	if c.cfg.Capacity == nil {
		return nil
	}
	hs := c.holdings(st)
	for _, want := range req.Hosts {
		var on []holding
		for _, h := range hs {
			if strings.EqualFold(h.node, want.Node) && h.start < req.End && req.Start < h.end {
				on = append(on, h)
			}
		}
		if peak := peakProcs(on, req.Start, req.End); peak+want.Procs > c.cfg.Capacity[want.Node] {
			return refuse(CodeOverlap, "job %s: node %s: %d of %d procs already held in [%d,%d), %d asked",
				req.Job, want.Node, peak, c.cfg.Capacity[want.Node], req.Start, req.End, want.Procs)
		}
	}
	return nil
}

// peakProcs is the largest sum of procs of hs at any instant of [a, b).
func peakProcs(hs []holding, a, b int64) int {
	peak := 0
	for _, t := range append([]holding{{start: a}}, hs...) {
		at := max(t.start, a)
		if at >= b {
			continue
		}
		sum := 0
		for _, h := range hs {
			if h.start <= at && at < h.end {
				sum += h.procs
			}
		}
		peak = max(peak, sum)
	}
	return peak
}
