package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"lookahead/slurm"
	"lookahead/wire"
)

// forbiddenFlags would let other jobs into a grid reservation (MAGNETIC:
// jobs that did not ask for it; FLEX: the job may use nodes outside it,
// and others its cores) or let it overlap what it must not (OVERLAP,
// IGNORE_JOBS: cores running jobs still hold; ANY_NODES, REPLACE*).
var forbiddenFlags = []string{"MAGNETIC", "FLEX", "OVERLAP", "IGNORE_JOBS", "ANY_NODES", "REPLACE", "REPLACE_DOWN"}

// SlurmReservation is the Slurm reservation holding spec: named for the
// job, the mapped local user alone in users=, the cores of each node in
// Slurm's node order (order: the cluster's nodes as sinfo lists them), the
// exact [Start, End) and no flags. Pure.
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
	return rs, CheckSlurmFlags(rs.Flags)
}

func rank(order []string, node string) int {
	if i := slices.Index(order, node); i >= 0 {
		return i
	}
	return len(order)
}

// CheckSlurmFlags refuses the flags a grid reservation must never carry.
func CheckSlurmFlags(flags []string) error {
	for _, f := range flags {
		if slices.Contains(forbiddenFlags, strings.ToUpper(strings.SplitN(f, "=", 2)[0])) {
			return fmt.Errorf("reservation flag %s: lets other jobs in or the grid job out; never set", f)
		}
	}
	return nil
}

// Reserve creates the job's reservation. Slurm refuses an overlap with
// another reservation's cores or with running jobs (nodes_busy), as the
// agent's own re-check does before; the refusal is ErrScheduler. A
// reservation of the same name (a retry) is the job's when it holds the
// same user, times and cores; otherwise the request is refused.
func (s *SlurmSite) Reserve(ctx context.Context, spec ReserveSpec) (Reserved, error) {
	name := s.ResvName(spec.Job)
	nodes, err := s.Client.Nodes(ctx)
	if err != nil {
		return Reserved{}, fmt.Errorf("slurm: %w", err)
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
		return out, fmt.Errorf("%w: slurm %s: %s", ErrScheduler, ans.Code, ans.Reason)
	}
	got, err := s.readBack(ctx, spec, name)
	if err != nil {
		if ans.Code == slurm.Created {
			s.Client.DeleteReservation(ctx, name) // not verified: not kept
		}
		return out, err
	}
	out.Reservations = []wire.Reservation{got}
	return out, nil
}

// readBack reads the reservation from slurmctld and checks it is what
// spec asked for (a retry's, or what was just made).
func (s *SlurmSite) readBack(ctx context.Context, spec ReserveSpec, name string) (wire.Reservation, error) {
	rs, err := s.Client.Reservations(ctx)
	if err != nil {
		return wire.Reservation{}, fmt.Errorf("slurm: %w", err)
	}
	for _, r := range rs {
		if r.Name != name {
			continue
		}
		w := s.fromSlurm(r, spec.Job)
		if d := SlurmDiff(spec, w); d != "" {
			return w, fmt.Errorf("%w: slurm reservation %s exists and differs from the request: %s", ErrScheduler, name, d)
		}
		return w, nil
	}
	return wire.Reservation{}, fmt.Errorf("slurm: reservation %s was not listed after its creation", name)
}

// SlurmDiff says how a listed reservation differs from the request (""
// when it does not): times, user, cores per node. Pure.
func SlurmDiff(spec ReserveSpec, w wire.Reservation) string {
	var d []string
	if w.Start != spec.Start || w.End != spec.End {
		d = append(d, fmt.Sprintf("times [%d, %d), asked [%d, %d)", w.Start, w.End, spec.Start, spec.End))
	}
	if w.Identity.User != spec.Identity.User {
		d = append(d, fmt.Sprintf("user %q, asked %q", w.Identity.User, spec.Identity.User))
	}
	if nodesKey(w.Nodes) != nodesKey(spec.Nodes) {
		d = append(d, fmt.Sprintf("cores %s, asked %s", nodesKey(w.Nodes), nodesKey(spec.Nodes)))
	}
	return strings.Join(d, "; ")
}

// Release cancels the job's parts still queued or running in its
// reservation (a reservation with queued jobs cannot be deleted, and
// cancelling them is what a release means), then deletes it. Jobs left
// pending by a reservation that already ended (RESV_DEL_HOLD, no longer
// naming it) are found by their part name. Nothing to release is not an
// error.
func (s *SlurmSite) Release(ctx context.Context, job string) (Released, error) {
	var out Released
	name := s.ResvName(job)
	rs, err := s.Client.Reservations(ctx)
	if err != nil {
		return out, fmt.Errorf("slurm: %w", err)
	}
	exists := slices.ContainsFunc(rs, func(r slurm.Reservation) bool { return r.Name == name })
	if err := s.cancelParts(ctx, job, name, &out); err != nil || !exists {
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
			return out, nil
		case ans.Code == slurm.NoSuch:
			return out, nil // gone meanwhile (purged after its end)
		case ans.Code != slurm.InUse || try == 20:
			return out, fmt.Errorf("%w: slurm %s: %s", ErrScheduler, ans.Code, ans.Reason)
		}
		// in use: a cancelled part is still leaving the queue
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// cancelParts scancels every unfinished job in the reservation or named
// like one of the job's parts.
func (s *SlurmSite) cancelParts(ctx context.Context, job, name string, out *Released) error {
	jobs, _, err := s.Client.Jobs(ctx)
	if err != nil {
		return fmt.Errorf("slurm: %w", err)
	}
	for _, j := range jobs {
		pj, _, isPart := wire.ParsePartName(j.Name)
		if slurm.TorqueState(j) == "C" || (j.Reservation != name && (!isPart || pj != job)) {
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
