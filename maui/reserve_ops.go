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

// Reserve holds req.Hosts over [req.Start, req.End) for grid job req.Job,
// usable only by jobs matching the ACL identity. Names derive from the job
// id (BaseName), so a retried Reserve finds the reservations of the first
// and returns them without running setres again; reservations of that job
// with another shape are a CodeConflict refusal. Processors are reserved
// per node exactly (setres -r PROCS=k on an anchored host expression), one
// setres per distinct count; if any setres fails, or showres/diagnose -r do
// not confirm the result, everything created is released and a Refusal is
// returned. error means the machinery failed (rollback was still tried).
func (c *Client) Reserve(ctx context.Context, req ReserveRequest) (Reservation, error) {
	if err := c.Validate(req); err != nil {
		return Reservation{}, err
	}
	st, err := c.state(ctx)
	if err != nil {
		return Reservation{}, err
	}
	if have, ok := st.byJob(c)[req.Job]; ok {
		if c.sameShape(have, req) {
			return have, nil
		}
		return Reservation{}, refuse(CodeConflict, "job %s already holds %v with another shape; release it first", req.Job, have.IDs)
	}
	if err := c.checkOverlap(st, req); err != nil {
		return Reservation{}, err
	}
	var ids []string
	for _, call := range plan(req.Hosts) {
		id, err := c.setres(ctx, req, call)
		if err != nil {
			return Reservation{}, c.rollback(ctx, ids, err)
		}
		ids = append(ids, id)
	}
	return c.verify(ctx, req, ids)
}

func (c *Client) setres(ctx context.Context, req ReserveRequest, call setresCall) (string, error) {
	args := c.setresArgs(req, call)
	res, err := c.r.Run(ctx, "setres", args...)
	if err != nil {
		return "", fmt.Errorf("setres for job %s: %w", req.Job, err)
	}
	reply, perr := ParseSetres(bytes.NewReader(res.Stdout))
	if res.ExitCode != 0 || perr != nil {
		return "", refuse(classifySetres(res.Stderr, res.Stdout), "setres %s (exit %d): %s", strings.Join(args, " "), res.ExitCode, trimmed(append(res.Stderr, res.Stdout...)))
	}
	if job, ok := c.JobOf(reply.ID); !ok || job != req.Job {
		return reply.ID, refuse(CodeVerifyFailed, "setres created %q, not a reservation of job %s", reply.ID, req.Job)
	}
	return reply.ID, nil
}

// rollback releases ids after cause; it returns cause, with the release
// failure added when there was one.
func (c *Client) rollback(ctx context.Context, ids []string, cause error) error {
	if len(ids) == 0 {
		return cause
	}
	if _, err := c.releaseIDs(context.WithoutCancel(ctx), ids); err != nil {
		return fmt.Errorf("%w (and rollback of %v failed: %v)", cause, ids, err)
	}
	return cause
}

func (c *Client) verify(ctx context.Context, req ReserveRequest, ids []string) (Reservation, error) {
	st, err := c.state(ctx)
	if err != nil {
		return Reservation{}, c.rollback(ctx, ids, fmt.Errorf("verify reservations of job %s: %w", req.Job, err))
	}
	have, ok := st.byJob(c)[req.Job]
	switch {
	case !ok:
		err = refuse(CodeVerifyFailed, "showres does not list %v", ids)
	case !slices.Equal(have.IDs, sortedCopy(ids)):
		err = refuse(CodeVerifyFailed, "showres lists %v for job %s, setres made %v", have.IDs, req.Job, ids)
	case !c.sameShape(have, req):
		err = refuse(CodeVerifyFailed, "showres shows job %s as %+v, asked %+v", req.Job, have, req)
	default:
		return have, nil
	}
	return Reservation{}, c.rollback(ctx, ids, err)
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}

// sameShape reports whether an existing hold matches a request: the same
// nodes and processors, the same ACL, and times within the tolerance.
func (c *Client) sameShape(have Reservation, req ReserveRequest) bool {
	tol := int64(c.cfg.Tolerance.Seconds())
	if abs64(have.Start-req.Start) > tol || abs64((have.End-have.Start)-(req.End-req.Start)) > 1 {
		return false
	}
	if have.User != req.User || have.Group != req.Group || have.Account != req.Account {
		return false
	}
	return slices.Equal(normHosts(have.Hosts), normHosts(req.Hosts))
}

func normHosts(h []forecast.HostProcs) []forecast.HostProcs {
	out := slices.Clone(h)
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// ReleaseResult says what Release did: Released were removed now, Missing
// were already gone (Maui could not locate them).
type ReleaseResult struct {
	Job      string   `json:"job"`
	Released []string `json:"released,omitempty"`
	Missing  []string `json:"missing,omitempty"`
}

// Release removes every reservation of grid job job. It is idempotent:
// releasing a job that holds nothing (never reserved, already released) is
// a success with nothing released. releaseres exits 0 when it cannot locate
// a reservation; its ERROR lines are read, not its exit code.
func (c *Client) Release(ctx context.Context, job string) (ReleaseResult, error) {
	if !forecast.IsPlainName(job) {
		return ReleaseResult{}, refuse(CodeBadIdentity, "job id %q is not a plain name", job)
	}
	rows, err := c.showres(ctx)
	if err != nil {
		return ReleaseResult{}, err
	}
	var ids []string
	for _, r := range rows {
		if j, ok := c.JobOf(r.ID); ok && j == job && r.Type == "User" {
			ids = append(ids, r.ID)
		}
	}
	if len(ids) == 0 {
		return ReleaseResult{Job: job}, nil
	}
	out, err := c.releaseIDs(ctx, ids)
	out.Job = job
	return out, err
}

func (c *Client) releaseIDs(ctx context.Context, ids []string) (ReleaseResult, error) {
	var out ReleaseResult
	res, err := c.r.Run(ctx, "releaseres", ids...)
	if err != nil {
		return out, fmt.Errorf("releaseres %v: %w", ids, err)
	}
	if res.ExitCode != 0 {
		return out, fmt.Errorf("releaseres %v: exit %d: %s", ids, res.ExitCode, trimmed(res.Stderr))
	}
	got, err := ParseReleaseres(bytes.NewReader(res.Stdout))
	if err != nil {
		return out, err
	}
	done := map[string]bool{}
	for _, l := range got {
		switch {
		case l.Released:
			out.Released = append(out.Released, l.ID)
		case strings.Contains(l.Message, "cannot locate"):
			out.Missing = append(out.Missing, l.ID)
		default:
			return out, fmt.Errorf("releaseres %s: %s", l.ID, l.Message)
		}
		done[l.ID] = true
	}
	for _, id := range ids {
		if !done[id] {
			return out, fmt.Errorf("releaseres: no answer for %s", id)
		}
	}
	return out, nil
}

// List returns lookahead's reservations (names with the prefix), one
// Reservation per grid job, ordered by job id. Other reservations (jobs',
// admins', standing ones) are never listed.
func (c *Client) List(ctx context.Context) ([]Reservation, error) {
	st, err := c.state(ctx)
	if err != nil {
		return nil, err
	}
	by := st.byJob(c)
	out := make([]Reservation, 0, len(by))
	for _, r := range by {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Job < out[j].Job })
	return out, nil
}

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
// diagnose -r's Proc total over its Node count: exact for lookahead's own
// reservations (one setres per processor count) and for whole-node ones.
func perNode(d ResDiag) int {
	if d.Nodes <= 0 {
		return 0
	}
	return d.Procs / d.Nodes
}

// holdings lists what every user reservation and running job holds per
// node. Idle jobs' reservations are Maui's plans, not holds.
func (c *Client) holdings(st *resState) []holding {
	dur := map[string]int64{}
	for _, r := range st.rows {
		dur[r.ID] = r.Duration
	}
	var out []holding
	for _, n := range st.nodes {
		h := holding{id: n.ID, typ: n.Type, node: n.Node, start: st.start[n.ID]}
		h.end = h.start + dur[n.ID]
		switch {
		case n.Type == "User":
			h.procs = perNode(st.diag[n.ID])
		case n.Type == "Job" && n.JobState == "Running":
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
			d := st.diag[h.id]
			r.User, r.Group, r.Account = first(d.ACLNames("USER")), first(d.ACLNames("GROUP")), first(d.ACLNames("ACCT"))
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
		r.Qsub = qsubArgs(r.Account, r.IDs)
		out[job] = r
	}
	return out
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
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
