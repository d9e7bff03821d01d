package slurm

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"lookahead/forecast/sim"
)

// Policy is the built-in simulator's policy for the cluster conf
// describes, and one line per setting of it the simulator cannot follow
// (for `lookahead-agent check` and every forecast's Unmodelled).
//
//   - sched/backfill (Slurm's default): every pass plans a start for each
//     of the first bf_max_job_test queued jobs (default 500) in priority
//     order and starts lower jobs only where they delay none of them —
//     conservative backfilling to that depth, the plan redone at every
//     pass; nodes are taken in listing order. sched/builtin: strict
//     priority order, no backfill (FCFS).
//   - The queue order is slurmctld's own priority of each job as squeue
//     reports it (sim orders by Job.Priority): it already weighs every
//     multifactor factor (age, size, partition, QOS, fair-share). What
//     changes over the horizon (the age factor growing to PriorityMaxAge,
//     fair-share decay) is listed as not modelled when its weight is set.
//
// A value the simulator needs and cannot read is an error.
func (c Conf) Policy() (sim.Policy, []string, error) {
	var notes []string
	var p sim.Policy
	switch st := c.Param("SchedulerType"); st {
	case "", "sched/backfill":
		depth, err := c.schedInt("bf_max_job_test", 500)
		if err != nil {
			return p, nil, err
		}
		p = sim.Policy{Depth: depth, Reservation: sim.CurrentHighest, Backfill: sim.FirstFit, NodeAlloc: sim.FirstAvailable}
		notes = append(notes, c.backfillNotes()...)
	case "sched/builtin":
		p = sim.Policy{Depth: 0, NodeAlloc: sim.FirstAvailable}
	default:
		return p, nil, fmt.Errorf("SchedulerType=%s: the simulator knows sched/backfill and sched/builtin", st)
	}
	notes = append(notes, c.priorityNotes()...)
	notes = append(notes, c.otherNotes()...)
	return p, notes, nil
}

// schedParams are SchedulerParameters, by name ("" value for a flag).
func (c Conf) schedParams() map[string]string {
	m := map[string]string{}
	for _, f := range strings.Split(c.Param("SchedulerParameters"), ",") {
		if f = strings.TrimSpace(f); f != "" {
			k, v, _ := strings.Cut(f, "=")
			m[strings.ToLower(k)] = v
		}
	}
	return m
}

func (c Conf) schedInt(name string, def int) (int, error) {
	v, ok := c.schedParams()[name]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("SchedulerParameters %s=%q: want a whole number >= 1", name, v)
	}
	return n, nil
}

// followed are the SchedulerParameters the policy reads or explains.
var followed = []string{"bf_max_job_test", "bf_interval", "bf_window"}

func (c Conf) backfillNotes() []string {
	sp := c.schedParams()
	interval, window := "30", "1440"
	if v, ok := sp["bf_interval"]; ok {
		interval = v
	}
	if v, ok := sp["bf_window"]; ok {
		window = v
	}
	notes := []string{
		"SchedulerParameters bf_interval=" + interval + ": backfill starts jobs at its passes, that many seconds apart; the simulator starts them at once",
		"SchedulerParameters bf_window=" + window + ": backfill plans only that many minutes ahead; the simulator plans to the horizon",
	}
	var names []string
	for k := range sp {
		if !slices.Contains(followed, k) {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		notes = append(notes, "SchedulerParameters "+k+": not modelled")
	}
	return notes
}

func (c Conf) priorityNotes() []string {
	if pt := c.Param("PriorityType"); pt != "priority/multifactor" {
		return nil // priority/basic: submit order, which slurmctld's priorities already give
	}
	var notes []string
	if w := c.Param("PriorityWeightAge"); w != "" && w != "0" {
		maxAge := c.Param("PriorityMaxAge")
		if maxAge == "" {
			maxAge = "7-0"
		}
		notes = append(notes, "PriorityWeightAge="+w+": queued jobs keep slurmctld's priority order of the snapshot; the age factor reaching PriorityMaxAge="+maxAge+" over the horizon is not simulated")
	}
	if w := c.Param("PriorityWeightFairshare"); w != "" && w != "0" {
		notes = append(notes, "PriorityWeightFairshare="+w+": fair-share is taken as of the snapshot; its decay and the usage of jobs run in the horizon are not simulated")
	}
	return notes
}

func (c Conf) otherNotes() []string {
	var notes []string
	if pt := c.Param("PreemptType"); pt != "" && pt != "preempt/none" {
		notes = append(notes, "PreemptType="+pt+": preemption is not modelled")
	}
	if st := c.Param("SelectType"); st == "select/linear" {
		notes = append(notes, "SelectType=select/linear: jobs get whole nodes in Slurm; the simulator gives them processors")
	}
	if stp := strings.ToUpper(c.Param("SelectTypeParameters")); strings.Contains(stp, "MEMORY") {
		note := "SelectTypeParameters=" + c.Param("SelectTypeParameters") + ": jobs also hold memory in Slurm; the simulator counts processors only"
		if c.Param("DefMemPerCPU") == "" && c.Param("DefMemPerNode") == "" {
			note += " (and without DefMemPerCPU a job that asks for no memory gets its nodes' whole memory: no other job starts beside it)"
		}
		notes = append(notes, note)
	}
	if len(c.Partitions) > 1 {
		nodes, tiers := map[string]bool{}, map[string]bool{}
		for _, p := range c.Partitions {
			nodes[p.Nodes], tiers[p.Params["prioritytier"]] = true, true
		}
		if len(nodes) > 1 {
			notes = append(notes, "partitions with different nodes: the simulator may place a queued job on any usable node, not only its partition's")
		}
		if len(tiers) > 1 {
			notes = append(notes, "partitions' PriorityTier: higher tiers are scheduled first in Slurm; the simulator orders by job priority only")
		}
	}
	for _, p := range c.Partitions {
		if o := strings.ToUpper(p.Params["oversubscribe"]); o != "" && o != "NO" && o != "EXCLUSIVE" {
			notes = append(notes, "PartitionName="+p.Name+" OverSubscribe="+o+": shared processors are not modelled")
		}
	}
	for _, inc := range c.Includes {
		notes = append(notes, "Include "+inc+": not read")
	}
	return notes
}
