package sim

import (
	"fmt"
	"strconv"
)

// SRCFG TASKCOUNT without HOSTLIST (Maui 3.3.1, MSR.c): MSRSetRes asks
// MSRSelectNodeList for the window's nodes. With a TASKCOUNT and no host
// expression the selection is "space flexible": the feasible nodes of the
// partition with the most tasks (MReqGetFNL), then those available over
// the window (MJobGetAMNodeList at its start), allocated by the
// partition's NODEALLOCATIONPOLICY (MJobAllocMNL) for at most TASKCOUNT
// tasks of RESOURCES each. MSRRefresh, at every other iteration, makes a
// window holding fewer than TASKCOUNT tasks again (MSRSetRes, then
// MResPreempt while still short).
//
// The simulator picks the nodes once, as Maui does on an idle cluster:
// the usable nodes in the reservation order (MINRESOURCE's order, or the
// policy's), each giving its whole processors (RESOURCES default) or as
// many tasks of PROCS:k as fit, until TASKCOUNT tasks are held. That is
// where Maui puts every window when no job runs into it at creation (a
// window is made DEPTH-1 days ahead, past the walltimes of the jobs
// running then); a window Maui makes over busy nodes, and MSRRefresh's
// moves, are not followed (listed in Unmodelled).

// taskCount reads TASKCOUNT=.
func (s *StandingRes) taskCount(val string) error {
	n, err := strconv.Atoi(val)
	if err != nil || n < 0 {
		return fmt.Errorf("SRCFG[%s] TASKCOUNT=%q: not a task count", s.Name, val)
	}
	s.TaskCount = n
	return nil
}

// taskCountNote says what of TASKCOUNT is not followed.
func (c *cfgReader) taskCountNote(s StandingRes) {
	if len(s.Hosts) > 0 {
		c.note("SRCFG[%s] TASKCOUNT=%d with HOSTLIST: Maui caps the window at TASKCOUNT tasks of the listed nodes; not modelled, every listed node is held", s.Name, s.TaskCount)
		return
	}
	c.note("SRCFG[%s] TASKCOUNT=%d: followed in part: the nodes are picked once, in the node allocation order, as Maui picks them on an idle cluster; where Maui places a window over busy nodes (MJobGetAMNodeList) and MSRRefresh's moves are not followed (docs/simulator.md, Standing reservations)", s.Name, s.TaskCount)
}

// srTaskHosts picks the nodes of a TASKCOUNT window.
func (e *Engine) srTaskHosts(s *StandingRes) []hostUse {
	var out []hostUse
	need := s.TaskCount
	for _, i := range e.resOrder {
		n := &e.nodes[i]
		if need <= 0 {
			break
		}
		if !n.usable {
			continue
		}
		tasks, per := 1, n.procs // RESOURCES default: the whole node
		if s.Procs > 0 {
			tasks, per = n.procs/s.Procs, s.Procs
		}
		take := min(tasks, need)
		if take <= 0 {
			continue
		}
		out = append(out, hostUse{node: i, procs: take * per})
		need -= take
	}
	return out
}
