package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"lookahead/forecast"
	"lookahead/slurm"
	"lookahead/wire"
)

// SlurmSite is a Slurm cluster as the agent's site: its Snapshotter (sinfo,
// squeue, scontrol show reservation), its Reserver (scontrol create/delete
// reservation, List from scontrol, never from memory — but for the
// per-node cores of its own reservations while slurmctld prints no
// CoreIDs, checked against the nodes and total it does print) and its Executor
// (sbatch --uid into the job's reservation, squeue, scancel). The agent's
// request handling is the same as for a Torque/Maui site; only these
// adapters differ (docs/slurm.md).
//
// A grid job holds one Slurm reservation, named Prefix+job, on the cores
// of the named nodes (nodes=a,b corecnt=2,4), for exactly [Start, End)
// (the agent's slack rule, SlackEnd, already applied), with the mapped
// local user alone in users= and no flags: a Slurm reservation admits
// only jobs that name it (--reservation) and pass its ACL, so nothing else
// enters; MAGNETIC and FLEX, which would let others in or the job out, are
// never set, and a reservation listed with them (or wider in any other
// way) is not the job's (slurmacl.go).
type SlurmSite struct {
	Client SlurmClient
	Site   string
	// Prefix starts lookahead's reservation names (reservations.prefix,
	// default "la.").
	Prefix string
	// Partition, when set, is given to reservations and parts, and a
	// grid reservation listed in another partition is altered.
	Partition string
	// Users, when set, looks the mapped local user up before a
	// reservation names it (slurmctld refuses an unknown user with the
	// words it has for a caller who is no operator).
	Users UserLookup
	Now   func() time.Time

	// asked remembers the cores per node of each reservation this agent
	// made, by name, until it is released or ends (SlurmSite.split).
	mu    sync.Mutex
	asked map[string]askedCores
}

type askedCores struct {
	nodes []wire.NodeProcs
	end   int64
}

// SlurmClient is what a SlurmSite asks of the cluster: *slurm.Client runs
// the real clients; a simulated Slurm cluster (agent/simsite) answers in
// the demo.
type SlurmClient interface {
	Snapshot(ctx context.Context) (slurm.Snapshot, error)
	Nodes(ctx context.Context) ([]slurm.Node, error)
	Reservations(ctx context.Context) ([]slurm.Reservation, error)
	CreateReservation(ctx context.Context, spec slurm.ReservationSpec) (slurm.Answer, error)
	DeleteReservation(ctx context.Context, name string) (slurm.Answer, error)
	Submit(ctx context.Context, spec slurm.SbatchSpec) (id string, argv []string, err error)
	Jobs(ctx context.Context) ([]slurm.Job, []string, error)
	Cancel(ctx context.Context, id string) ([]string, error)
	// Location is the zone scontrol reads times in.
	Location() *time.Location
}

var _ SlurmClient = (*slurm.Client)(nil)

var (
	_ Snapshotter  = (*SlurmSite)(nil)
	_ Reserver     = (*SlurmSite)(nil)
	_ GridJobNamer = (*SlurmSite)(nil)
	_ HoldLister   = (*SlurmSite)(nil)
	_ ACLRestorer  = (*SlurmSite)(nil)
)

func (s *SlurmSite) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

// Snapshot reads the cluster with its reservations in force as holds (a
// snapshot without them would offer reserved cores again).
func (s *SlurmSite) Snapshot(ctx context.Context) (forecast.Snapshot, error) {
	sn, err := s.Client.Snapshot(ctx)
	if err != nil {
		return forecast.Snapshot{}, fmt.Errorf("slurm: %w", err)
	}
	now := s.now()
	snap := slurm.ForecastSnapshot(sn, s.Site, now)
	return WithHolds(snap, s.holds(sn, now.Unix())), nil
}

// Holds lists the reservations in force, lookahead's and foreign ones.
func (s *SlurmSite) Holds(ctx context.Context) ([]Hold, error) {
	sn, err := s.Client.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("slurm: %w", err)
	}
	return s.holds(sn, s.now().Unix()), nil
}

// holds are SlurmHolds with the cores this agent asked for on its own
// reservations whose CoreIDs slurmctld has not printed yet.
func (s *SlurmSite) holds(sn slurm.Snapshot, now int64) []Hold {
	cpus := nodeCPUs(sn.Nodes)
	out := SlurmHolds(sn.Reservations, cpus, s.Prefix, now)
	byName := make(map[string]slurm.Reservation, len(sn.Reservations))
	for _, r := range sn.Reservations {
		byName[r.Name] = r
	}
	for i, h := range out {
		if hosts, exact := s.split(byName[h.Reservation.ID], cpus); exact {
			out[i].Reservation.Hosts = nil
			for _, n := range hosts {
				out[i].Reservation.Hosts = append(out[i].Reservation.Hosts, forecast.HostProcs{Node: n.Node, Procs: n.CPUs})
			}
		}
	}
	return out
}

func nodeCPUs(nodes []slurm.Node) map[string]int {
	m := make(map[string]int, len(nodes))
	for _, n := range nodes {
		m[n.Name] = n.CPUs
	}
	return m
}

// SlurmHolds are the reservations not yet ended as holds: their cores on
// each node (slurm.Reservation.Hosts: at most what each may hold while
// slurmctld prints no CoreIDs), lookahead's own with their grid job and
// user. Jobs bind to a Slurm reservation by naming it, which squeue
// reports, so no binding account is needed. Pure.
func SlurmHolds(rs []slurm.Reservation, cpus map[string]int, prefix string, now int64) []Hold {
	var out []Hold
	for _, r := range rs {
		if r.End.Unix() <= now {
			continue
		}
		h := Hold{Reservation: forecast.Reservation{ID: r.Name, Start: r.Start.Unix(), End: r.End.Unix()}}
		for _, n := range r.Hosts(cpus) {
			h.Reservation.Hosts = append(h.Reservation.Hosts, forecast.HostProcs{Node: n.Node, Procs: n.CPUs})
		}
		if job, ok := slurmJobOf(prefix, r.Name); ok {
			h.Reservation.Job = job
			if len(r.Users) > 0 {
				h.User = r.Users[0]
			}
		}
		out = append(out, h)
	}
	return out
}

// JobOf names the grid job of a lookahead reservation (Prefix+job).
func (s *SlurmSite) JobOf(id string) (string, bool) { return slurmJobOf(s.Prefix, id) }

func slurmJobOf(prefix, name string) (string, bool) {
	job, ok := strings.CutPrefix(name, prefix)
	return job, ok && prefix != "" && forecast.IsPlainName(job)
}

// ResvName is the Slurm reservation of grid job job.
func (s *SlurmSite) ResvName(job string) string { return s.Prefix + job }

// fromSlurm is one of lookahead's reservations as the wire says it, its
// ACL whole (slurmIdentity, SlurmExtra); Submit is what the grid user
// adds to sbatch to submit the part by hand.
func (s *SlurmSite) fromSlurm(r slurm.Reservation, job string) wire.Reservation {
	w := wire.Reservation{ID: r.Name, Job: job, Start: r.Start.Unix(), End: r.End.Unix(),
		Submit:   "--reservation=" + r.Name + " --job-name=" + wire.PartName(job, 0),
		Identity: slurmIdentity(r), Extra: SlurmExtra(r, s.Partition)}
	hosts, exact := s.split(r, nil)
	for _, n := range hosts {
		w.Nodes = append(w.Nodes, wire.NodeProcs{Node: n.Node, Procs: n.CPUs})
	}
	w.CoresUnknown = !exact
	return w
}

// split is the reservation's cores per node (slurm.Reservation.Split);
// while slurmctld prints no CoreIDs for it, the cores this agent asked
// for, when the nodes and the total slurmctld lists are those asked (it
// made exactly what nodes=… corecnt=… asked, or refused).
func (s *SlurmSite) split(r slurm.Reservation, cpus map[string]int) ([]slurm.NodeCPUs, bool) {
	hosts, exact := r.Split(cpus)
	if exact {
		return hosts, true
	}
	s.mu.Lock()
	asked := s.asked[r.Name].nodes
	s.mu.Unlock()
	if asked == nil || !sameNodesAndTotal(hosts, asked) {
		return hosts, false
	}
	return inOrderOf(hosts, asked), true
}

// sameNodesAndTotal says whether the cores asked fall on the nodes listed
// and add up to their total.
func sameNodesAndTotal(listed []slurm.NodeCPUs, asked []wire.NodeProcs) bool {
	ws := make([]wire.NodeProcs, len(listed))
	for i, h := range listed {
		ws[i] = wire.NodeProcs{Node: h.Node, Procs: h.CPUs}
	}
	return wire.SameNodes(wire.Reservation{Nodes: asked}, wire.Reservation{Nodes: ws, CoresUnknown: true})
}

// inOrderOf is the cores asked in the order of the nodes listed.
func inOrderOf(listed []slurm.NodeCPUs, asked []wire.NodeProcs) []slurm.NodeCPUs {
	out := make([]slurm.NodeCPUs, len(listed))
	for i, h := range listed {
		out[i] = slurm.NodeCPUs{Node: h.Node}
		for _, a := range asked {
			if a.Node == h.Node {
				out[i].CPUs += a.Procs
			}
		}
	}
	return out
}

// ask remembers the cores asked for reservation name until end (nil
// forgets it), and forgets those of reservations that ended.
func (s *SlurmSite) ask(name string, nodes []wire.NodeProcs, end int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now().Unix()
	for n, a := range s.asked {
		if a.end <= now {
			delete(s.asked, n)
		}
	}
	if nodes == nil {
		delete(s.asked, name)
		return
	}
	if s.asked == nil {
		s.asked = map[string]askedCores{}
	}
	s.asked[name] = askedCores{nodes: slices.Clone(nodes), end: end}
}

// List reads lookahead's reservations from slurmctld.
func (s *SlurmSite) List(ctx context.Context) ([]wire.Reservation, error) {
	rs, err := s.Client.Reservations(ctx)
	if err != nil {
		return nil, fmt.Errorf("slurm: %w", err)
	}
	var out []wire.Reservation
	for _, r := range rs {
		if job, ok := s.JobOf(r.Name); ok {
			out = append(out, s.fromSlurm(r, job))
		}
	}
	return out, nil
}
