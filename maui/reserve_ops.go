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
// usable only by the job's parts (a binding account picked from the pool,
// see reserve_bind.go). Names derive from the job id (BaseName), so a
// retried Reserve finds the reservations of the first and returns them
// without running setres again; reservations of that job with another
// shape are a CodeConflict refusal. Processors are reserved per node
// exactly (setres -r PROCS=k on an anchored host expression), one setres
// per distinct count; if any setres fails, or showres/diagnose -r do not
// confirm the result, every reservation of the job is released (those
// setres reported and any other showres lists under the job's name) and a
// Refusal is returned. error means the machinery failed (rollback was
// still tried).
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
	bind := c.pickBind(st.bindsInUse(append(slices.Clone(req.InUse), req.Account)))
	if c.keepBind(st, req) {
		bind = req.Bind
	}
	var ids []string
	for _, call := range plan(req.Hosts) {
		id, err := c.setres(ctx, req, bind, call)
		if id != "" {
			ids = append(ids, id) // created, even when refused below
		}
		if err != nil {
			return Reservation{}, c.rollback(ctx, req.Job, ids, err)
		}
	}
	return c.verify(ctx, req, bind, ids)
}

// setres runs one setres. The id is returned whenever Maui reports one
// created, also with an error, so that the caller can release it.
func (c *Client) setres(ctx context.Context, req ReserveRequest, bind string, call setresCall) (string, error) {
	args := c.setresArgs(req, bind, call)
	res, err := c.r.Run(ctx, "setres", args...)
	if err != nil {
		return "", fmt.Errorf("setres for job %s: %w", req.Job, err)
	}
	reply, perr := ParseSetres(bytes.NewReader(res.Stdout))
	if res.ExitCode != 0 || perr != nil {
		return reply.ID, refuse(classifySetres(res.Stderr, res.Stdout), "setres %s (exit %d): %s", strings.Join(args, " "), res.ExitCode, trimmed(append(res.Stderr, res.Stdout...)))
	}
	if job, ok := c.JobOf(reply.ID); !ok || job != req.Job {
		return reply.ID, refuse(CodeVerifyFailed, "setres created %q, not a reservation of job %s", reply.ID, req.Job)
	}
	return reply.ID, nil
}

// rollback releases what a failed Reserve of job may have left: ids (what
// setres reported) and every reservation showres lists under the job's
// name (a setres that timed out or printed something unexpected may have
// created one). Reserve runs only when the job held nothing, so all of
// them are this call's. It returns cause, with the release failure added
// when there was one. It runs even when ctx is done.
func (c *Client) rollback(ctx context.Context, job string, ids []string, cause error) error {
	ctx = context.WithoutCancel(ctx)
	all := slices.Clone(ids)
	if rows, err := c.showres(ctx); err == nil {
		for _, r := range rows {
			if j, ok := c.JobOf(r.ID); ok && j == job && r.Type == "User" && !slices.Contains(all, r.ID) {
				all = append(all, r.ID)
			}
		}
	} else if len(all) == 0 {
		return fmt.Errorf("%w (and listing job %s's reservations for rollback failed: %v)", cause, job, err)
	}
	if len(all) == 0 {
		return cause
	}
	if _, err := c.releaseIDs(ctx, all); err != nil {
		return fmt.Errorf("%w (and rollback of %v failed: %v)", cause, all, err)
	}
	return cause
}

func (c *Client) verify(ctx context.Context, req ReserveRequest, bind string, ids []string) (Reservation, error) {
	st, err := c.state(ctx)
	if err != nil {
		return Reservation{}, c.rollback(ctx, req.Job, ids, fmt.Errorf("verify reservations of job %s: %w", req.Job, err))
	}
	have, ok := st.byJob(c)[req.Job]
	switch {
	case !ok:
		err = refuse(CodeVerifyFailed, "showres does not list %v", ids)
	case !slices.Equal(have.IDs, sortedCopy(ids)):
		err = refuse(CodeVerifyFailed, "showres lists %v for job %s, setres made %v", have.IDs, req.Job, ids)
	case have.Bind != bind:
		err = refuse(CodeVerifyFailed, "diagnose -r shows job %s bound to account %q, setres asked %q", req.Job, have.Bind, bind)
	case !c.sameShape(have, req):
		err = refuse(CodeVerifyFailed, "showres shows job %s as %+v, asked %+v", req.Job, have, req)
	default:
		return have, nil
	}
	return Reservation{}, c.rollback(ctx, req.Job, ids, err)
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}

// sameShape reports whether an existing hold matches a request: the same
// nodes and processors, the same identity, and times within the
// tolerance.
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
// were already gone (Maui could not locate them), NotOurs are named like
// the job's but their ACL carries no binding account (an admin's): left
// alone.
type ReleaseResult struct {
	Job      string   `json:"job"`
	Released []string `json:"released,omitempty"`
	Missing  []string `json:"missing,omitempty"`
	NotOurs  []string `json:"not_ours,omitempty"`
}

// Release removes every reservation of grid job job. It is idempotent:
// releasing a job that holds nothing (never reserved, already released) is
// a success with nothing released. releaseres exits 0 when it cannot locate
// a reservation; its ERROR lines are read, not its exit code.
func (c *Client) Release(ctx context.Context, job string) (ReleaseResult, error) {
	if !forecast.IsPlainName(job) {
		return ReleaseResult{}, refuse(CodeBadIdentity, "job id %q is not a plain name", job)
	}
	st, err := c.state(ctx)
	if err != nil {
		return ReleaseResult{}, err
	}
	var ids, notOurs []string
	for _, r := range st.rows {
		if j, ok := c.JobOf(r.ID); !ok || j != job || r.Type != "User" {
			continue
		}
		if c.Bound(st.diag[r.ID]) {
			ids = append(ids, r.ID)
		} else {
			notOurs = append(notOurs, r.ID)
		}
	}
	if len(ids) == 0 {
		return ReleaseResult{Job: job, NotOurs: notOurs}, nil
	}
	out, err := c.releaseIDs(ctx, ids)
	out.Job, out.NotOurs = job, notOurs
	return out, err
}

// Bound reports whether a reservation's ACL carries lookahead's binding:
// a required pool account (also as a Maui restart leaves it, with a '+'
// appended to the name). Only such reservations are lookahead's to
// release.
func (c *Client) Bound(d ResDiag) bool {
	_, _, _, bind := aclIdentity(d)
	return c.IsBindAccount(MadeName(bind))
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
