package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"lookahead/slurm"
	"lookahead/wire"
)

// SlurmReservation is the Slurm reservation holding spec: named for the
// job, the mapped local user alone in users=, the cores of each node in
// Slurm's node order (order: the cluster's nodes as sinfo lists them), the
// exact [Start, End) and no flags (any flag but SPEC_NODES, which
// slurmctld adds itself, reads back as an ACL wider than asked:
// SlurmExtra). Pure.
func SlurmReservation(spec ReserveSpec, name, partition string, order []string) (slurm.ReservationSpec, error) {
	u := spec.Identity.User
	if u == "" || u == "root" {
		return slurm.ReservationSpec{}, fmt.Errorf("reservation %s: user %q: a grid reservation is for the mapped local user, never root", name, u)
	}
	if spec.End <= spec.Start || len(spec.Nodes) == 0 {
		return slurm.ReservationSpec{}, fmt.Errorf("reservation %s: needs nodes and an end after its start", name)
	}
	nodes := slices.Clone(spec.Nodes)
	slices.SortStableFunc(nodes, func(a, b wire.NodeProcs) int { return rank(order, a.Node) - rank(order, b.Node) })
	rs := slurm.ReservationSpec{Name: name, Users: []string{u}, Start: time.Unix(spec.Start, 0),
		End: time.Unix(spec.End, 0), Partition: partition}
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Node
		rs.CoreCounts = append(rs.CoreCounts, n.Procs)
	}
	rs.Nodes = strings.Join(names, ",")
	return rs, nil
}

func rank(order []string, node string) int {
	if i := slices.Index(order, node); i >= 0 {
		return i
	}
	return len(order)
}

// Reserve creates the job's reservation. Slurm refuses an overlap with
// another reservation's cores or with running jobs (nodes_busy), as the
// agent's own re-check does before; the refusal is ErrScheduler. A
// reservation of the same name (a retry) is the job's when it is what
// the request asks for, whole (SlurmDiff); otherwise the request is
// refused. One the agent just made and cannot confirm is deleted again,
// on a context of its own (the request's may be at its deadline).
func (s *SlurmSite) Reserve(ctx context.Context, spec ReserveSpec) (Reserved, error) {
	name := s.ResvName(spec.Job)
	if err := s.checkUser(spec.Identity.User); err != nil {
		return Reserved{}, err
	}
	nodes, err := s.Client.Nodes(ctx)
	if err != nil {
		return Reserved{}, fmt.Errorf("slurm: %w", err)
	}
	if err := usable(nodes, spec.Nodes); err != nil {
		return Reserved{}, err
	}
	order := make([]string, len(nodes))
	for i, n := range nodes {
		order[i] = n.Name
	}
	rs, err := SlurmReservation(spec, name, s.Partition, order)
	if err != nil {
		return Reserved{}, err
	}
	args, err := slurm.CreateArgs(rs, s.Client.Location())
	if err != nil {
		return Reserved{}, err
	}
	out := Reserved{Commands: [][]string{append([]string{"scontrol"}, args...)}}
	ans, err := s.Client.CreateReservation(ctx, rs)
	switch {
	case err != nil:
		return out, fmt.Errorf("slurm: %w", err)
	case ans.Code != slurm.Created && ans.Code != slurm.Exists:
		msg := fmt.Sprintf("slurm refused reservation %s (%s): %s", name, ans.Code, ans.Reason)
		if h := SlurmRefusalHint(ans.Code); h != "" {
			msg += " (" + h + ")"
		}
		return out, slurmRefused("%s", msg)
	}
	got, err := s.readBack(ctx, spec, name)
	if err != nil && ans.Code == slurm.Created {
		out.Commands = append(out.Commands, []string{"scontrol", "delete", "reservationname=" + name})
		err = s.undo(ctx, name, err)
	}
	if err != nil {
		return out, err
	}
	s.ask(name, spec.Nodes, spec.End)
	out.Reservations = []wire.Reservation{got}
	return out, nil
}

// usable checks that every node asked for is usable now. Right after a
// slurmctld restart the nodes read unknown until their slurmd registers
// again (seconds), and slurmctld refuses any reservation on them as busy:
// that is not a refusal but a moment to wait (a plain error: the agent's
// repair tries again at its next poll, not reporting the job lost).
func usable(nodes []slurm.Node, asked []wire.NodeProcs) error {
	for _, a := range asked {
		i := slices.IndexFunc(nodes, func(n slurm.Node) bool { return n.Name == a.Node })
		switch {
		case i < 0:
			return slurmRefused("node %s: not a node of this cluster (sinfo)", a.Node)
		case !nodes[i].Usable():
			return fmt.Errorf("slurm: node %s is %s (%s): no reservation made now (right after a slurmctld restart nodes read unknown until their slurmd registers again)",
				a.Node, nodes[i].Condition(), nodes[i].State)
		}
	}
	return nil
}

// SlurmRefusalHint says what slurmctld's refusal of a grid reservation
// means and how to fix it ("" when there is nothing to add).
func SlurmRefusalHint(c slurm.Code) string {
	switch c {
	case slurm.NotOperator:
		return "the agent is not a Slurm operator: run it as root (or SlurmUser); slurmctld says the same of a user it does not know"
	case slurm.BadPartition:
		return "slurm.partition names no partition of this cluster: set slurm.partition to one of its partitions"
	case slurm.NodesBusy:
		return "another reservation or a running job holds those cores; under select/linear every core reservation reads so"
	}
	return ""
}

// checkUser refuses a reservation for a local user the system does not
// know (through NSS, as slurmctld resolves users=).
func (s *SlurmSite) checkUser(name string) error {
	if s.Users == nil {
		return nil
	}
	_, err := s.Users(name)
	switch {
	case errors.Is(err, ErrUserLookup):
		return fmt.Errorf("slurm: local user %s: %w", name, err)
	case err != nil:
		return slurmRefused("local user %s does not exist on this site (%v): no reservation names it; map the grid user to an existing user in dispatch.users", name, err)
	}
	return nil
}

// undoTimeout bounds the delete of a reservation the agent just made and
// could not confirm.
const undoTimeout = 30 * time.Second

// undo deletes reservation name, which the agent just made and cannot
// keep (why), on a context that outlives the request's, and says both in
// the error it returns.
func (s *SlurmSite) undo(ctx context.Context, name string, why error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
	defer cancel()
	ans, err := s.Client.DeleteReservation(ctx, name)
	switch {
	case err != nil:
		return fmt.Errorf("%w; deleting reservation %s, just made, failed too: %v", why, name, err)
	case ans.Code != slurm.Deleted && ans.Code != slurm.NoSuch:
		return fmt.Errorf("%w; deleting reservation %s, just made, was refused too: %s %s", why, name, ans.Code, ans.Reason)
	}
	return fmt.Errorf("%w; reservation %s, just made, deleted again", why, name)
}

// readBackTries is how often readBack reads a reservation that slurmctld
// does not list yet right after its creation.
const readBackTries = 3

// readBack reads the reservation from slurmctld and checks it is what
// spec asked for, whole (a retry's, or what was just made). While
// slurmctld prints no CoreIDs for it (a few seconds after the create on
// several nodes), its nodes and total are compared and the cores asked
// are what it holds: Slurm makes exactly nodes=… corecnt=… or refuses.
func (s *SlurmSite) readBack(ctx context.Context, spec ReserveSpec, name string) (wire.Reservation, error) {
	for try := 1; ; try++ {
		rs, err := s.Client.Reservations(ctx)
		if err != nil {
			return wire.Reservation{}, fmt.Errorf("slurm: %w", err)
		}
		if i := slices.IndexFunc(rs, func(r slurm.Reservation) bool { return r.Name == name }); i >= 0 {
			return s.judge(spec, rs[i])
		}
		if try == readBackTries {
			return wire.Reservation{}, fmt.Errorf("slurm: reservation %s was not listed after its creation (%d reads)", name, try)
		}
		select {
		case <-ctx.Done():
			return wire.Reservation{}, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// judge compares a listed reservation with the request.
func (s *SlurmSite) judge(spec ReserveSpec, r slurm.Reservation) (wire.Reservation, error) {
	w := s.fromSlurm(r, spec.Job)
	if d := SlurmDiff(spec, w); d != "" {
		return w, slurmRefused("slurm reservation %s exists and is not what was asked: %s", r.Name, d)
	}
	if w.CoresUnknown { // same nodes and total: the cores asked
		listed := make([]slurm.NodeCPUs, len(w.Nodes))
		for i, n := range w.Nodes {
			listed[i] = slurm.NodeCPUs{Node: n.Node, CPUs: n.Procs}
		}
		w.Nodes, w.CoresUnknown = nil, false
		for _, n := range inOrderOf(listed, spec.Nodes) {
			w.Nodes = append(w.Nodes, wire.NodeProcs{Node: n.Node, Procs: n.CPUs})
		}
	}
	return w, nil
}

// slurmNarrower is a SlurmClient that can narrow a reservation's ACL in
// place (slurm.Client; the demo's simulated cluster cannot).
type slurmNarrower interface {
	NarrowReservation(ctx context.Context, name string, users, drop []string, partition string) (slurm.Answer, error)
}

var _ slurmNarrower = (*slurm.Client)(nil)

// RestoreACL sets the job's reservation's ACL back to what spec made, in
// place (scontrol update: its user alone, no accounts, none of the flags
// the agent never sets, the configured partition), and reads it back
// whole. Its nodes, times and the parts queued in it stay; deleting it
// would need them cancelled first. slurmctld refuses any update while
// another job runs on the reservation's nodes (nodes_busy, captured): the
// caller then re-creates it.
func (s *SlurmSite) RestoreACL(ctx context.Context, spec ReserveSpec) (Reserved, error) {
	name := s.ResvName(spec.Job)
	nc, ok := s.Client.(slurmNarrower)
	if !ok {
		return Reserved{}, fmt.Errorf("slurm: this client cannot update reservation %s", name)
	}
	rs, err := s.Client.Reservations(ctx)
	if err != nil {
		return Reserved{}, fmt.Errorf("slurm: %w", err)
	}
	i := slices.IndexFunc(rs, func(r slurm.Reservation) bool { return r.Name == name })
	if i < 0 {
		return Reserved{}, fmt.Errorf("slurm: reservation %s is not listed", name)
	}
	var drop []string
	for _, f := range rs[i].Flags {
		if !slices.Contains(slurmOwnFlags, strings.ToUpper(f)) {
			drop = append(drop, f)
		}
	}
	users := []string{spec.Identity.User}
	out := Reserved{Commands: [][]string{append([]string{"scontrol"}, slurm.NarrowArgs(name, users, drop, s.Partition)...)}}
	ans, err := nc.NarrowReservation(ctx, name, users, drop, s.Partition)
	switch {
	case err != nil:
		return out, fmt.Errorf("slurm: %w", err)
	case ans.Code != slurm.Updated:
		return out, slurmRefused("slurm refused to restore the ACL of reservation %s (%s): %s", name, ans.Code, ans.Reason)
	}
	got, err := s.readBack(ctx, spec, name)
	if err != nil {
		return out, err
	}
	out.Reservations = []wire.Reservation{got}
	return out, nil
}

// Release cancels the job's parts still queued or running in its
// reservation (a reservation with queued jobs cannot be deleted, and
// cancelling them is what a release means), then deletes it. Jobs named
// like the job's parts that no longer name the reservation are cancelled
// when their owner is one the reservation admits (cancelParts). While a cancelled part is
// still leaving the queue slurmctld answers "in use": the delete is tried
// again every 250 ms, 20 times at most, each wait without the agent's
// request lock (Wait). Nothing to release is not an error.
func (s *SlurmSite) Release(ctx context.Context, job string) (Released, error) {
	var out Released
	name := s.ResvName(job)
	rs, err := s.Client.Reservations(ctx)
	if err != nil {
		return out, fmt.Errorf("slurm: %w", err)
	}
	i := slices.IndexFunc(rs, func(r slurm.Reservation) bool { return r.Name == name })
	var owners []string // the users the reservation admits: its parts run as one of them
	if i >= 0 {
		owners = rs[i].Users
	}
	if err := s.cancelParts(ctx, job, name, owners, &out); err != nil || i < 0 {
		return out, err
	}
	for try := 0; ; try++ {
		out.Commands = append(out.Commands, []string{"scontrol", "delete", "reservationname=" + name})
		ans, err := s.Client.DeleteReservation(ctx, name)
		switch {
		case err != nil:
			return out, fmt.Errorf("slurm: %w", err)
		case ans.Code == slurm.Deleted:
			out.IDs = []string{name}
			s.ask(name, nil, 0)
			return out, nil
		case ans.Code == slurm.NoSuch:
			s.ask(name, nil, 0)
			return out, nil // gone meanwhile (purged after its end)
		case ans.Code != slurm.InUse || try == 20:
			return out, slurmRefused("slurm refused to delete reservation %s (%s): %s", name, ans.Code, ans.Reason)
		}
		// in use: a cancelled part is still leaving the queue; the
		// agent serves other requests meanwhile (Wait)
		if err := Wait(ctx, 250*time.Millisecond); err != nil {
			return out, err
		}
	}
}

// cancelParts scancels every unfinished job in the reservation, and every
// one named like one of the job's parts whose owner the reservation
// admits (owners): the agent cancels as an operator, so a job of another
// user that merely bears a part's name is left alone, and so is every
// part-named job once the reservation is gone (its owner can no longer be
// told; RESV_DEL_HOLD keeps such a part held, not running).
func (s *SlurmSite) cancelParts(ctx context.Context, job, name string, owners []string, out *Released) error {
	jobs, _, err := s.Client.Jobs(ctx)
	if err != nil {
		return fmt.Errorf("slurm: %w", err)
	}
	for _, j := range jobs {
		pj, _, isPart := wire.ParsePartName(j.Name)
		ours := j.Reservation == name || (isPart && pj == job && slices.Contains(owners, j.User))
		if slurm.TorqueState(j) == "C" || !ours {
			continue
		}
		argv, err := s.Client.Cancel(ctx, fmt.Sprint(j.ID))
		out.Commands = append(out.Commands, argv)
		if err != nil {
			return fmt.Errorf("slurm: %w", err)
		}
	}
	return nil
}
