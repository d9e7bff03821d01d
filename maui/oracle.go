package maui

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"

	"lookahead/forecast"
	"lookahead/forecast/sim"
)

// The oracle: before Maui runs, the built-in simulator (forecast/sim)
// schedules the very traces Maui is fed, under the site's policy as far as
// it follows it. Where it predicts no start, Maui needs no iteration, so
// the exact phase stops Maui only at the simulator's start times (Plan). At
// every stop the driver reads Maui's state anyway; if a job Maui started
// differs from the prediction (time or hosts), the forecast is run again
// with the plain exact stepping (Diverged). See docs/maui.md, "The
// adaptive step".

// Oracle is the built-in simulator's schedule of a run's traces: each
// job's start (seconds from the first iteration) and per-node tasks, and
// each job's end.
type Oracle struct {
	Start map[string]int64
	End   map[string]int64
	Hosts map[string]map[string]int
}

// oracleFor simulates the traces with the policy of the site's maui.cfg
// (nil: Maui's defaults) in zone, up to horizon seconds after the first
// iteration. ok is false, with why, when the site uses a setting the
// simulator does not follow: its predictions would then differ from
// Maui's and only cost a second run.
func oracleFor(resource, workload, site []byte, holds []forecast.Reservation, zone *time.Location, now, horizon int64) (o Oracle, why string, err error) {
	mc, err := sim.ReadMauiConfig(bytes.NewReader(site))
	if err != nil {
		return Oracle{}, "", fmt.Errorf("oracle: %w", err)
	}
	if len(mc.Unmodelled) > 0 {
		return Oracle{}, "site maui.cfg: " + mc.Unmodelled[0], nil
	}
	p := mc.Policy
	// The simulation's config zeroes every priority weight (WriteSimConfig):
	// queued jobs keep trace order, which is submission order here.
	p.Priority, p.Fairshare, p.ExactNode, p.Poll = nil, nil, false, 0
	if p.Standing != nil {
		st := *p.Standing
		st.Zone = zone
		p.Standing = &st
	}
	nodes, err := resourceNodes(resource)
	if err != nil {
		return Oracle{}, "", err
	}
	recs, err := ParseWorkload(bytes.NewReader(workload))
	if err != nil {
		return Oracle{}, "", err
	}
	e := sim.NewEngine(sim.Cluster{Nodes: nodes}, p, now)
	q0 := int64(0)
	for i, r := range recs {
		if i == 0 || r.Queue < q0 {
			q0 = r.Queue
		}
	}
	o = Oracle{Start: map[string]int64{}, End: map[string]int64{}, Hosts: map[string]map[string]int{}}
	for _, r := range recs {
		j := sim.Job{ID: r.ID, Procs: r.Tasks, Walltime: r.WCLimit, Runtime: r.Runtime(), Submit: r.Queue - q0 + now,
			User: r.User, Group: r.Group, Account: traceValue(r.Account), Queue: traceClass(r.Class), Features: traceFeatures(r)}
		if len(r.HostList) > 0 && traceClass(r.Class) == RunningClass {
			// A running job: pinned, it holds its hosts from the start.
			if err := e.AddRunning(j, now, taskHosts(r.HostList)); err != nil {
				return Oracle{}, "", fmt.Errorf("oracle: %w", err)
			}
			o.Start[r.ID], o.End[r.ID], o.Hosts[r.ID] = 0, min(j.Runtime, j.Walltime), hostMap(taskHosts(r.HostList))
			continue
		}
		e.Submit(j)
	}
	for _, h := range holds {
		if h.End <= now || len(h.Hosts) == 0 {
			continue
		}
		h.Start = max(h.Start, now)
		if err := e.Reserve(h); err != nil {
			return Oracle{}, fmt.Sprintf("the simulator cannot hold %s: %v", h.ID, err), nil
		}
	}
	for _, ev := range e.AdvanceTo(now + horizon) {
		switch ev.Kind {
		case sim.Started:
			o.Start[ev.Job], o.End[ev.Job], o.Hosts[ev.Job] = ev.Start-now, ev.End-now, hostMap(ev.Hosts)
		case sim.Rejected:
			return Oracle{}, fmt.Sprintf("the simulator refuses job %s (%s)", ev.Job, ev.Reason), nil
		}
	}
	return o, "", nil
}

// resourceNodes reads the AVAILABLE nodes of a v230 resource trace.
func resourceNodes(resource []byte) ([]forecast.SnapshotNode, error) {
	ls, err := lines(bytes.NewReader(resource))
	if err != nil {
		return nil, err
	}
	var out []forecast.SnapshotNode
	for i, l := range ls {
		f := strings.Fields(l)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) != resourceFieldCount || f[0] != "COMPUTENODE" {
			return nil, &lineError{"resource trace", i + 1, l, fmt.Errorf("want %d fields starting COMPUTENODE", resourceFieldCount)}
		}
		if f[1] != "AVAILABLE" {
			continue
		}
		p, err := atoiField(f[8], "procs")
		if err != nil {
			return nil, &lineError{"resource trace", i + 1, l, err}
		}
		out = append(out, forecast.SnapshotNode{Name: f[3], Procs: p, State: []string{"free"}, Speed: 1, Features: brackets(f[14])})
	}
	return out, nil
}

// brackets reads "[a][b]" ("[NONE]": none).
func brackets(s string) []string {
	var out []string
	for _, it := range strings.Split(strings.Trim(s, "[]"), "][") {
		if it != "" && it != "NONE" {
			out = append(out, it)
		}
	}
	return out
}

func traceFeatures(r WorkloadRecord) []string {
	if len(r.Fields) > 19 {
		return brackets(r.Fields[19])
	}
	return nil
}

// traceClass reads "[batch:1]" as batch.
func traceClass(s string) string {
	c, _, _ := strings.Cut(strings.Trim(s, "[]"), ":")
	return c
}

func traceValue(s string) string {
	if s == "[NONE]" || s == "NONE" {
		return ""
	}
	return s
}

// taskHosts turns a host list with one entry per task into per-node
// processors, in first-seen order.
func taskHosts(list []string) []forecast.HostProcs {
	var out []forecast.HostProcs
	at := map[string]int{}
	for _, h := range list {
		i, ok := at[h]
		if !ok {
			i = len(out)
			at[h] = i
			out = append(out, forecast.HostProcs{Node: h})
		}
		out[i].Procs++
	}
	return out
}

func hostMap(hs []forecast.HostProcs) map[string]int {
	m := map[string]int{}
	for _, h := range hs {
		m[h.Node] += h.Procs
	}
	return m
}

// Plan is where the exact phase stops Maui under an oracle: every
// distinct predicted start and every known boundary (hold or standing
// window edge) inside (0, near) and not after horizon, and the last
// predicted end before near (so the fixed steps beyond the window start
// where the plain exact stepping would start them), ascending. Between
// two stops the simulator predicts no start, so Maui needs no iteration
// there. Pure.
func (o Oracle) Plan(events []int64, p StepPolicy, horizon int64) []int64 {
	p = p.WithDefaults()
	in := func(t int64) bool { return t > 0 && t < p.Near && t <= horizon }
	set := map[int64]bool{}
	var lastEnd int64
	for name, s := range o.Start {
		if in(s) {
			set[s] = true
		}
		if e := o.End[name]; in(e) && e > lastEnd {
			lastEnd = e
		}
	}
	for _, e := range events {
		if in(e) {
			set[e] = true
		}
	}
	if lastEnd > 0 {
		set[lastEnd] = true
	}
	out := make([]int64, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Check compares what Maui shows at t (seen: every job seen running, with
// its start and per-node tasks) with the oracle: each job Maui started at
// or before t must start at the same time on the same hosts in the
// prediction, and each job predicted to start at or before t (and still
// running at t, so a read at t shows it) must have been seen. "" when
// they agree, else the first difference. Pure.
func (o Oracle) Check(t int64, seen map[string]*jobObs) string {
	var names []string
	for name := range seen {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		ob := seen[name]
		s, ok := o.Start[name]
		switch {
		case !ok:
			return fmt.Sprintf("Maui started %s at %+d s, the simulator not before the horizon", name, ob.start)
		case s != ob.start:
			return fmt.Sprintf("Maui started %s at %+d s, the simulator at %+d s", name, ob.start, s)
		case !sameHosts(o.Hosts[name], ob.hosts):
			return fmt.Sprintf("Maui started %s on %v, the simulator on %v", name, ob.hosts, o.Hosts[name])
		}
	}
	names = names[:0]
	for name, s := range o.Start {
		if s <= t && o.End[name] > t && seen[name] == nil {
			names = append(names, name)
		}
	}
	if len(names) > 0 {
		sort.Strings(names)
		return fmt.Sprintf("the simulator starts %s at %+d s, Maui did not by %+d s", names[0], o.Start[names[0]], t)
	}
	return ""
}

func sameHosts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// CheckRecords compares Maui's stats/simstat.out (records of the jobs it
// completed; c0 its first iteration) with the oracle for every job Maui
// started inside the window [0, near): same start, same nodes. It covers
// the jobs that started and ended between two reads. "" when they agree.
// Pure.
func (o Oracle) CheckRecords(recs []WorkloadRecord, c0, near int64) string {
	for _, r := range recs {
		s, ok := o.Start[r.ID]
		rel := r.Start - c0
		switch {
		case rel >= near && (!ok || s >= near):
			continue
		case !ok || s != rel:
			return fmt.Sprintf("simstat.out: Maui started %s at %+d s, the simulator at %+d s (known %v)", r.ID, rel, s, ok)
		case len(r.Hosts) > 0 && sortedNodes(o.Hosts[r.ID]) != strings.Join(uniqSorted(r.Hosts), ","):
			return fmt.Sprintf("simstat.out: Maui ran %s on %s, the simulator on %s", r.ID, strings.Join(r.Hosts, ","), sortedNodes(o.Hosts[r.ID]))
		}
	}
	return ""
}

func sortedNodes(m map[string]int) string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func uniqSorted(s []string) []string {
	m := map[string]int{}
	for _, h := range s {
		m[h]++
	}
	return strings.Split(sortedNodes(m), ",")
}
