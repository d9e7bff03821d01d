package maui

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"lookahead/forecast"
)

// RunningClass is the class the simulation gives jobs already running at
// the snapshot: its high priority starts them first, on their own hosts.
const RunningClass = "running"

// TraceOptions says how a snapshot becomes simulation traces.
type TraceOptions struct {
	// Now is the snapshot instant written into the traces (T0).
	Now int64
	// Order lists queued job ids in the live scheduler's priority order
	// (from showq -i of the live Maui). Jobs not listed follow, by
	// snapshot priority, then submission time, then id.
	Order []string
	// DefaultWalltime is used for jobs without a walltime limit (default
	// 24 h). Jobs are simulated to run to their limit: the only runtime a
	// scheduler knows in advance.
	DefaultWalltime int64
	// DefaultClass is the class of jobs without a queue (default "batch").
	DefaultClass string
	// MemMB is used for nodes whose memory is unknown (default 2048);
	// SwapMB and DiskMB are written for every node (defaults 4096, 10000).
	MemMB, SwapMB, DiskMB int64
	// ExactNode writes each queued job's node count as the live Maui
	// derives it under JOBNODEMATCHPOLICY EXACTNODE (tasks / tasks per
	// node): the simulation config then drops EXACTNODE, whose trace
	// reading (node count = task count) would reject every multi-task
	// node request as corrupt and keep running jobs off their hosts.
	ExactNode bool
}

func (o *TraceOptions) defaults() {
	if o.DefaultWalltime <= 0 {
		o.DefaultWalltime = 86400
	}
	if o.DefaultClass == "" {
		o.DefaultClass = "batch"
	}
	if o.MemMB <= 0 {
		o.MemMB = 2048
	}
	if o.SwapMB <= 0 {
		o.SwapMB = 4096
	}
	if o.DiskMB <= 0 {
		o.DiskMB = 10000
	}
}

// Traces are the simulation inputs built from a snapshot. Jobs maps each
// trace job name (j0001, ...) back to the snapshot job; Skipped lists
// snapshot jobs left out, with why.
type Traces struct {
	Resource []byte
	Workload []byte
	Jobs     map[string]TraceJob
	IDs      map[string]string // trace name -> snapshot job id
	Queued   int
	Skipped  []string
	// Procs is the processors of all simulated nodes.
	Procs int
}

// BuildTraces turns a snapshot into a resource and a workload trace: usable
// nodes serve every queue plus RunningClass; running jobs come first, in
// RunningClass, pinned to their hosts until their walltime limit (started
// + walltime); queued jobs follow in live priority order (see
// TraceOptions.Order). Held and other non-eligible jobs are not simulated,
// nor jobs bound to a reservation of the snapshot (they run inside it,
// and the reservation holds their processors). Pure.
func BuildTraces(snap forecast.Snapshot, opt TraceOptions) (Traces, error) {
	opt.defaults()
	out := Traces{Jobs: map[string]TraceJob{}, IDs: map[string]string{}}
	nodes, usable, err := traceNodes(snap, opt)
	if err != nil {
		return out, err
	}
	var jobs []TraceJob
	add := func(j forecast.LocalJob, tj TraceJob) {
		tj.Name = fmt.Sprintf("j%05d", len(jobs)+1)
		jobs = append(jobs, tj)
		out.Jobs[tj.Name] = tj
		out.IDs[tj.Name] = j.ID
	}
	inside := map[string]bool{}
	for _, r := range snap.Reservations {
		inside[r.ID] = true
	}
	for _, j := range snap.Jobs {
		if j.Reservation != "" && inside[j.Reservation] && (j.Running() || j.Waiting()) {
			out.Skipped = append(out.Skipped, j.ID+": inside reservation "+j.Reservation)
		}
	}
	for _, j := range snap.Jobs {
		if !j.Running() || inside[j.Reservation] {
			continue
		}
		tj, why := runningTraceJob(j, usable, opt)
		if why != "" {
			out.Skipped = append(out.Skipped, j.ID+": "+why)
			continue
		}
		add(j, tj)
	}
	for _, j := range queuedInOrder(snap.Jobs, opt.Order) {
		if inside[j.Reservation] {
			continue
		}
		tj, why := queuedTraceJob(j, opt)
		if why != "" {
			out.Skipped = append(out.Skipped, j.ID+": "+why)
			continue
		}
		add(j, tj)
		out.Queued++
	}
	var res, wl bytes.Buffer
	if err := WriteResourceTrace(&res, nodes); err != nil {
		return out, fmt.Errorf("resource trace: %w", err)
	}
	if err := WriteWorkloadTrace(&wl, jobs); err != nil {
		return out, fmt.Errorf("workload trace: %w", err)
	}
	out.Resource, out.Workload = res.Bytes(), wl.Bytes()
	for _, p := range usable {
		out.Procs += p
	}
	return out, nil
}

func traceNodes(snap forecast.Snapshot, opt TraceOptions) ([]TraceNode, map[string]int, error) {
	classes := map[string]bool{opt.DefaultClass: true}
	for _, j := range snap.Jobs {
		if j.Queue != "" {
			classes[j.Queue] = true
		}
	}
	delete(classes, RunningClass)
	names := make([]string, 0, len(classes))
	for c := range classes {
		names = append(names, c)
	}
	sort.Strings(names)
	names = append(names, RunningClass)
	usable := map[string]int{}
	var nodes []TraceNode
	for _, n := range snap.Nodes {
		if !n.Usable() {
			continue
		}
		tn := TraceNode{Name: n.Name, Procs: n.Procs, MemMB: n.MemMB, SwapMB: opt.SwapMB, DiskMB: opt.DiskMB, Features: n.Features}
		if tn.MemMB <= 0 {
			tn.MemMB = opt.MemMB
		}
		for _, c := range names {
			tn.Classes = append(tn.Classes, ClassSlots{Class: c, Slots: n.Procs})
		}
		nodes = append(nodes, tn)
		usable[n.Name] = n.Procs
	}
	if len(nodes) == 0 {
		return nil, nil, fmt.Errorf("snapshot of %s: no usable node", snap.Site)
	}
	return nodes, usable, nil
}

func ident(j forecast.LocalJob) (user, group string) {
	user = orDefault(j.User, "nobody")
	return user, orDefault(j.Group, user)
}

func runningTraceJob(j forecast.LocalJob, usable map[string]int, opt TraceOptions) (TraceJob, string) {
	if len(j.Hosts) == 0 {
		return TraceJob{}, "running without hosts"
	}
	var hl []string
	for _, h := range j.Hosts {
		if _, ok := usable[h.Node]; !ok {
			return TraceJob{}, "runs on unusable node " + h.Node
		}
		for range h.Procs {
			hl = append(hl, h.Node)
		}
	}
	limit := j.Walltime
	if limit <= 0 {
		limit = opt.DefaultWalltime
	}
	// Held until started + limit. Torque's resources_used.walltime lags
	// (the mom reports it every ~45 s): limit − used would move the end
	// with every snapshot, so the start is used when known.
	left := max(limit-j.Used, 1)
	if j.Started > 0 {
		left = max(j.Started+limit-opt.Now, 1)
	}
	user, group := ident(j)
	return TraceJob{Tasks: len(hl), User: user, Group: group, Account: j.Account, Class: RunningClass,
		WCLimit: left, Queue: opt.Now, Runtime: left, HostList: hl}, ""
}

func queuedTraceJob(j forecast.LocalJob, opt TraceOptions) (TraceJob, string) {
	if j.Procs <= 0 {
		return TraceJob{}, "no processors requested"
	}
	limit := j.Walltime
	if limit <= 0 {
		limit = opt.DefaultWalltime
	}
	for _, ft := range j.Features {
		if checkTraceWord("feature", ft) != nil {
			return TraceJob{}, fmt.Sprintf("feature %q cannot be written to a trace", ft)
		}
	}
	user, group := ident(j)
	tj := TraceJob{Tasks: j.Procs, User: user, Group: group, Account: j.Account, Class: orDefault(j.Queue, opt.DefaultClass),
		WCLimit: limit, Queue: min(j.Submitted, opt.Now), Runtime: limit, Features: j.Features}
	if j.Nodes > 0 && j.PPN > 0 && j.Nodes*j.PPN == j.Procs {
		tj.TPN = j.PPN
	}
	if opt.ExactNode {
		tj.Nodes = tj.Tasks / max(tj.TPN, 1) // MPBSI.c: NodeCount = TaskCount / MAX(1, TasksPerNode)
	}
	if tj.Queue <= 0 {
		tj.Queue = opt.Now
	}
	return tj, ""
}

// queuedInOrder returns the eligible queued jobs: first those named in
// order (live priority order), then the rest by priority, submission, id.
func queuedInOrder(jobs []forecast.LocalJob, order []string) []forecast.LocalJob {
	rank := map[string]int{}
	for i, id := range order {
		if _, dup := rank[id]; !dup {
			rank[id] = i
		}
	}
	var out []forecast.LocalJob
	for _, j := range jobs {
		if j.Waiting() {
			out = append(out, j)
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		ra, oka := rankOf(rank, out[a].ID)
		rb, okb := rankOf(rank, out[b].ID)
		switch {
		case oka != okb:
			return oka
		case oka:
			return ra < rb
		case out[a].Priority != out[b].Priority:
			return out[a].Priority > out[b].Priority
		case out[a].Submitted != out[b].Submitted:
			return out[a].Submitted < out[b].Submitted
		}
		return out[a].ID < out[b].ID
	})
	return out
}

// rankOf finds a job in the live order. Maui shows Torque job "12.server"
// as "12", so the part before the first '.' is tried too.
func rankOf(rank map[string]int, id string) (int, bool) {
	if r, ok := rank[id]; ok {
		return r, true
	}
	short, _, _ := strings.Cut(id, ".")
	r, ok := rank[short]
	return r, ok
}
