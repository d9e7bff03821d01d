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
	nodes := make(map[string]bool, len(s.Nodes))
	for i, n := range s.Nodes {
		switch {
		case n.Name == "":
			return invalid("snapshot nodes[%d].name: empty", i)
		case nodes[n.Name]:
			return invalid("snapshot nodes[%d].name: duplicate node %q", i, n.Name)
		case n.Procs < 0:
			return invalid("snapshot nodes[%d].procs: %d, must be >= 0", i, n.Procs)
		case badFloat(n.Speed) || n.Speed < 0:
			return invalid("snapshot nodes[%d].speed: %v, must be >= 0 (0 means 1)", i, n.Speed)
		}
		nodes[n.Name] = true
	}
	ids := map[string]bool{}
	for i, j := range s.Jobs {
		switch {
		case j.ID == "":
			return invalid("snapshot jobs[%d].id: empty", i)
		case ids[j.ID]:
			return invalid("snapshot jobs[%d].id: duplicate job %q", i, j.ID)
		case j.Procs <= 0:
			return invalid("snapshot jobs[%d] (%s).procs: %d, must be > 0", i, j.ID, j.Procs)
		case j.Walltime < 0:
			return invalid("snapshot jobs[%d] (%s).walltime: %d, must be >= 0", i, j.ID, j.Walltime)
		}
		ids[j.ID] = true
		if err := knownHosts(nodes, j.Hosts, "snapshot jobs[%d] (%s)", i, j.ID); err != nil {
			return err
		}
	}
	for i, r := range s.Reservations {
		if r.End <= r.Start {
			return invalid("snapshot reservations[%d] (%s): end %d is not after start %d", i, r.ID, r.End, r.Start)
		}
		if err := knownHosts(nodes, r.Hosts, "snapshot reservations[%d] (%s)", i, r.ID); err != nil {
			return err
		}
	}
	return nil
}

func knownHosts(nodes map[string]bool, hosts []HostProcs, where string, args ...any) error {
	for k, h := range hosts {
		if !nodes[h.Node] {
			return invalid("%s.hosts[%d]: unknown node %q", fmt.Sprintf(where, args...), k, h.Node)
		}
		if h.Procs <= 0 {
			return invalid("%s.hosts[%d]: %d processors on %q, must be > 0", fmt.Sprintf(where, args...), k, h.Procs, h.Node)
		}
	}
	return nil
}
