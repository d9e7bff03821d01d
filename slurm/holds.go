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

// Split is how the reservation's cores fall on its nodes, and whether
// scontrol says so (exact): the cores its CoreIDs lines list; for a
// whole-node reservation (no CoreCnt, or as many as its nodes have, cpus
// giving each node's CPUs: a maintenance one over ALL nodes) each node's
// CPUs; on one node, CoreCnt. A core reservation over several nodes
// whose CoreIDs slurmctld has not printed yet (for a few seconds after
// its creation, and until slurmctld restarts for a future one made while
// another is active: docs/slurm.md) gives only its nodes and its total:
// CoreCnt spread evenly, the first nodes taking the remainder, and exact
// false — the real counts may differ (nodes=n1,n2 corecnt=3,4 lists as
// CoreCnt=7 over n[1-2]). Pure.
func (r Reservation) Split(cpus map[string]int) (hosts []NodeCPUs, exact bool) {
	for _, c := range r.Cores {
		if n := c.Count(); n > 0 {
			hosts = append(hosts, NodeCPUs{Node: c.Node, CPUs: n})
		}
	}
	if len(hosts) > 0 {
		return hosts, true
	}
	names, err := ExpandHostlist(r.Nodes)
	if err != nil || len(names) == 0 {
		return nil, true
	}
	if sum := sumCPUs(names, cpus); r.CoreCount <= 0 || sum > 0 && r.CoreCount >= sum {
		for _, n := range names {
			hosts = append(hosts, NodeCPUs{Node: n, CPUs: cpus[n]})
		}
		return hosts, true
	}
	per, extra := r.CoreCount/len(names), r.CoreCount%len(names)
	for i, n := range names {
		c := per
		if i < extra {
			c++
		}
		hosts = append(hosts, NodeCPUs{Node: n, CPUs: c})
	}
	return hosts, len(names) == 1
}

// Hosts is what the reservation may hold on each node, for a forecast
// that must never offer a reserved core: its Split when exact; else, its
// per-node counts unknown, as many cores on each node as it could hold
// there (its total less one core for each other node, at most the
// node's CPUs from cpus). Pure.
func (r Reservation) Hosts(cpus map[string]int) []NodeCPUs {
	hosts, exact := r.Split(cpus)
	if exact {
		return hosts
	}
	for i := range hosts {
		c := r.CoreCount - (len(hosts) - 1)
		if n := cpus[hosts[i].Node]; n > 0 && n < c {
			c = n
		}
		hosts[i].CPUs = c
	}
	return hosts
}

func sumCPUs(names []string, cpus map[string]int) int {
	s := 0
	for _, n := range names {
		s += cpus[n]
	}
	return s
}
