package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"lookahead/forecast"
	"lookahead/maui"
	"lookahead/wire"
)

// MauiReserver holds grid jobs' reservations in Maui through the Maui
// adapter (setres, verified with showres/diagnose -r; releaseres; List
// from showres, never from memory). Every call records the state-changing
// commands it ran (setres, releaseres) for the audit trail.
type MauiReserver struct {
	Runner maui.Runner
	Config maui.ClientConfig
}

// recorder keeps the argument vectors of the commands that change Maui's
// state.
type recorder struct {
	r    maui.Runner
	mu   sync.Mutex
	cmds [][]string
}

func (c *recorder) Run(ctx context.Context, name string, args ...string) (maui.Result, error) {
	if name == "setres" || name == "releaseres" {
		c.mu.Lock()
		c.cmds = append(c.cmds, append([]string{name}, args...))
		c.mu.Unlock()
	}
	return c.r.Run(ctx, name, args...)
}

func (m MauiReserver) client() (*maui.Client, *recorder) {
	rec := &recorder{r: m.Runner}
	return maui.NewClient(rec, m.Config), rec
}

// schedulerErr turns a Maui refusal into an ErrScheduler error naming its
// stable code; other errors pass through.
func schedulerErr(err error) error {
	if r, ok := maui.AsRefusal(err); ok {
		return fmt.Errorf("%w: maui %s: %s", ErrScheduler, r.Code, r.Detail)
	}
	return err
}

// Reserve creates the job's reservations (or finds a retry's), refusing
// overlaps with what Maui already holds on spec.Capacity's nodes and
// binding them to an account none of spec.InUse's local jobs uses.
func (m MauiReserver) Reserve(ctx context.Context, spec ReserveSpec) (Reserved, error) {
	if spec.Capacity != nil {
		m.Config.Capacity = spec.Capacity
	}
	c, rec := m.client()
	req := maui.ReserveRequest{Job: spec.Job, Start: spec.Start, End: spec.End, InUse: spec.InUse,
		User: spec.Identity.User, Group: spec.Identity.Group, Account: spec.Identity.Account, Bind: spec.Bind}
	for _, n := range spec.Nodes {
		req.Hosts = append(req.Hosts, forecast.HostProcs{Node: n.Node, Procs: n.Procs})
	}
	res, err := c.Reserve(ctx, req)
	out := Reserved{Commands: rec.cmds}
	if err != nil {
		return out, schedulerErr(err)
	}
	out.Reservations = []wire.Reservation{fromMaui(res)}
	return out, nil
}

// Release releases every reservation of job; nothing to release is not
// an error.
func (m MauiReserver) Release(ctx context.Context, job string) (Released, error) {
	c, rec := m.client()
	res, err := c.Release(ctx, job)
	out := Released{IDs: res.Released, Commands: rec.cmds}
	if err == nil && len(res.NotOurs) > 0 && len(res.Released) == 0 {
		err = fmt.Errorf("%w: %s carry no lookahead binding account in their ACL: not lookahead's to release (left in place)",
			ErrNotOurs, strings.Join(res.NotOurs, ","))
	}
	return out, schedulerErr(err)
}

// ErrNotOurs is a release of reservations named like a grid job's whose
// ACL does not carry lookahead's binding (an admin's): refused.
var ErrNotOurs = errors.New("not lookahead's reservations")

// JobOf names the grid job of a lookahead reservation id ("la.<job>.N").
func (m MauiReserver) JobOf(id string) (string, bool) {
	return maui.NewClient(m.Runner, m.Config).JobOf(id)
}

var (
	_ GridJobNamer = MauiReserver{}
	_ HoldLister   = MauiReserver{}
)

// Holds lists every user reservation Maui holds, lookahead's own (with
// their grid job, user and binding account) and foreign ones.
func (m MauiReserver) Holds(ctx context.Context) ([]Hold, error) {
	hs, err := maui.NewClient(m.Runner, m.Config).Holds(ctx)
	if err != nil {
		return nil, fmt.Errorf("maui reservations: %w", err)
	}
	out := make([]Hold, 0, len(hs))
	for _, h := range hs {
		out = append(out, Hold{Reservation: h.Reservation, Account: h.Bind, User: h.User})
	}
	return out, nil
}

// List reads lookahead's reservations from Maui.
func (m MauiReserver) List(ctx context.Context) ([]wire.Reservation, error) {
	c, _ := m.client()
	res, err := c.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]wire.Reservation, 0, len(res))
	for _, r := range res {
		out = append(out, fromMaui(r))
	}
	return out, nil
}

// fromMaui is one grid job's hold as the wire says it. A hold of several
// Maui reservations (one setres per distinct per-node count) has their ids
// joined by ","; Submit is what the grid job's qsub must add.
func fromMaui(r maui.Reservation) wire.Reservation {
	w := wire.Reservation{ID: strings.Join(r.IDs, ","), Job: r.Job, Start: r.Start, End: r.End,
		Identity: wire.Identity{User: r.User, Group: r.Group, Account: r.Account}, Submit: HandSubmit(r)}
	for _, h := range r.Hosts {
		w.Nodes = append(w.Nodes, wire.NodeProcs{Node: h.Node, Procs: h.Procs})
	}
	return w
}

var _ Reserver = MauiReserver{}

// HandSubmit is what a grid user adds to qsub to submit the job's part by
// hand: the binding options (maui.QsubArgs) and the part name
// la.<job>.0 (wire.PartName), which is how a hand-submitted job proves it
// is the part (IsHandPart). It is submitted as the reservation's user.
func HandSubmit(r maui.Reservation) string {
	return strings.TrimSpace(r.QsubString() + " -N " + wire.PartName(r.Job, 0))
}

// bindOptions drops the part name from a reservation's submit options:
// a dispatched part is named by the agent (la.<job>.<part>).
func bindOptions(submit string) []string {
	f := strings.Fields(submit)
	out := make([]string, 0, len(f))
	for i := 0; i < len(f); i++ {
		if f[i] == "-N" {
			i++
			continue
		}
		out = append(out, f[i])
	}
	return out
}
