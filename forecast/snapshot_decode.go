package forecast

import (
	"fmt"
	"io"
)

// DecodeSnapshot reads one snapshot (the JSON form of Snapshot) and
// validates it.
func DecodeSnapshot(r io.Reader) (*Snapshot, error) {
	var s Snapshot
	if err := decodeStrict(r, &s); err != nil {
		return nil, fmt.Errorf("decode snapshot: %w", err)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// Validate checks a snapshot: unique, named nodes with processors >= 0;
// jobs with unique ids, processors > 0 and walltime >= 0; hosts and
// reservations naming known nodes; reservations with end after start.
// Errors name the list and index.
func (s *Snapshot) Validate() error {
	if !inInstants(s.Taken) {
		return invalid("snapshot taken %d: must lie in [0, %d]", s.Taken, MaxInstant)
	}
	nodes := make(map[string]bool, len(s.Nodes))
	for i, n := range s.Nodes {
		if err := validateSnapshotNode(i, n, nodes); err != nil {
			return err
		}
		nodes[n.Name] = true
	}
	ids := map[string]bool{}
	for i, j := range s.Jobs {
		if err := validateLocalJob(i, j, ids); err != nil {
			return err
		}
		ids[j.ID] = true
		if err := knownHosts(nodes, j.Hosts, "snapshot jobs[%d] (%s)", i, clipName(j.ID)); err != nil {
			return err
		}
	}
	for i, r := range s.Reservations {
		id := clipName(r.ID)
		switch {
		case !inInstants(r.Start) || !inInstants(r.End):
			return invalid("snapshot reservations[%d] (%s): [%d, %d) must lie in [0, %d]", i, id, r.Start, r.End, MaxInstant)
		case r.End <= r.Start:
			return invalid("snapshot reservations[%d] (%s): end %d is not after start %d", i, id, r.End, r.Start)
		}
		if err := knownHosts(nodes, r.Hosts, "snapshot reservations[%d] (%s)", i, id); err != nil {
			return err
		}
	}
	return nil
}

func validateSnapshotNode(i int, n SnapshotNode, seen map[string]bool) error {
	switch {
	case n.Name == "":
		return invalid("snapshot nodes[%d].name: empty", i)
	case len(n.Name) > MaxNodeNameBytes:
		return invalid("snapshot nodes[%d].name: %d bytes, at most %d", i, len(n.Name), MaxNodeNameBytes)
	case !ValidNodeName(n.Name):
		return invalid("snapshot nodes[%d].name %q: a host name has no spaces or control characters", i, clipName(n.Name))
	case seen[n.Name]:
		return invalid("snapshot nodes[%d].name: duplicate node %q", i, n.Name)
	case n.Procs < 0 || n.Procs > MaxProcs:
		return invalid("snapshot nodes[%d].procs: %d, must lie in [0, %d]", i, n.Procs, MaxProcs)
	case n.Speed != 0 && !goodSpeed(n.Speed):
		return invalid("snapshot nodes[%d].speed: %v, must be 0 (means 1) or lie in [%v, %v]", i, n.Speed, MinSpeed, MaxSpeed)
	case n.MemMB < 0 || n.MemMB > MaxMemMB:
		return invalid("snapshot nodes[%d].mem_mb: %d, must lie in [0, %d]", i, n.MemMB, MaxMemMB)
	}
	return plainFeatures(n.Features, "snapshot nodes[%d].features", i)
}

// validateLocalJob checks one snapshot job against the model's limits:
// times in [0, MaxInstant] (0: unknown), durations in [0, MaxDuration],
// processors in [1, MaxProcs].
func validateLocalJob(i int, j LocalJob, seen map[string]bool) error {
	id := clipName(j.ID)
	switch {
	case j.ID == "":
		return invalid("snapshot jobs[%d].id: empty", i)
	case len(j.ID) > MaxNodeNameBytes:
		return invalid("snapshot jobs[%d].id: %d bytes, at most %d", i, len(j.ID), MaxNodeNameBytes)
	case seen[j.ID]:
		return invalid("snapshot jobs[%d].id: duplicate job %q", i, id)
	case j.Procs <= 0 || j.Procs > MaxProcs:
		return invalid("snapshot jobs[%d] (%s).procs: %d, must lie in [1, %d]", i, id, j.Procs, MaxProcs)
	case !inDuration(j.Walltime):
		return invalid("snapshot jobs[%d] (%s).walltime: %d, must lie in [0, %d]", i, id, j.Walltime, MaxDuration)
	case !inDuration(j.Used):
		return invalid("snapshot jobs[%d] (%s).walltime_used: %d, must lie in [0, %d]", i, id, j.Used, MaxDuration)
	case !inInstants(j.Submitted):
		return invalid("snapshot jobs[%d] (%s).submitted: %d, must lie in [0, %d]", i, id, j.Submitted, MaxInstant)
	case !inInstants(j.Started):
		return invalid("snapshot jobs[%d] (%s).started: %d, must lie in [0, %d]", i, id, j.Started, MaxInstant)
	case j.MemMB < 0 || j.MemMB > MaxMemMB:
		return invalid("snapshot jobs[%d] (%s).mem_mb: %d, must lie in [0, %d]", i, id, j.MemMB, MaxMemMB)
	case j.Nodes < 0 || j.PPN < 0 || j.PPN > MaxProcs:
		return invalid("snapshot jobs[%d] (%s): nodes %d, ppn %d, must be >= 0 and ppn at most %d", i, id, j.Nodes, j.PPN, MaxProcs)
	}
	return plainFeatures(j.Features, "snapshot jobs[%d] (%s).features", i, id)
}

func knownHosts(nodes map[string]bool, hosts []HostProcs, where string, args ...any) error {
	for k, h := range hosts {
		if !nodes[h.Node] {
			return invalid("%s.hosts[%d]: unknown node %q", fmt.Sprintf(where, args...), k, Clip(h.Node, MaxNodeNameBytes))
		}
		if h.Procs <= 0 || h.Procs > MaxProcs {
			return invalid("%s.hosts[%d]: %d processors on %q, must lie in [1, %d]", fmt.Sprintf(where, args...), k, h.Procs, h.Node, MaxProcs)
		}
	}
	return nil
}
