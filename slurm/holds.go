package slurm

import (
	"strconv"
	"strings"
)

// Count is the number of cores CoreIDs lists ("0-3,6" is 5); 0 when it
// lists none or cannot be read.
func (nc NodeCores) Count() int {
	n := 0
	for _, part := range strings.Split(nc.CoreIDs, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}

// Hosts is what the reservation holds on each node: the cores its
// CoreIDs lines list; without them (a future core reservation may show
// none until slurmctld restarts, docs/slurm.md) CoreCnt spread over its
// nodes, the first nodes taking the remainder; for a whole-node
// reservation (no CoreCnt, or as many as its nodes have: a maintenance
// one over ALL nodes) each node's CPUs from cpus. Pure.
func (r Reservation) Hosts(cpus map[string]int) []NodeCPUs {
	var out []NodeCPUs
	for _, c := range r.Cores {
		if n := c.Count(); n > 0 {
			out = append(out, NodeCPUs{Node: c.Node, CPUs: n})
		}
	}
	if len(out) > 0 {
		return out
	}
	names, err := ExpandHostlist(r.Nodes)
	if err != nil || len(names) == 0 {
		return nil
	}
	if sum := sumCPUs(names, cpus); r.CoreCount <= 0 || sum > 0 && r.CoreCount >= sum {
		for _, n := range names {
			out = append(out, NodeCPUs{Node: n, CPUs: cpus[n]})
		}
		return out
	}
	per, extra := r.CoreCount/len(names), r.CoreCount%len(names)
	for i, n := range names {
		c := per
		if i < extra {
			c++
		}
		out = append(out, NodeCPUs{Node: n, CPUs: c})
	}
	return out
}

func sumCPUs(names []string, cpus map[string]int) int {
	s := 0
	for _, n := range names {
		s += cpus[n]
	}
	return s
}
