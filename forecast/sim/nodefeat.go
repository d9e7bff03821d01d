package sim

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Node features (Maui 3.3.1: a job's requested features, RQ->ReqFBM, must
// all be among a node's, N->FBM, for the node to take any of its tasks;
// MReqCheckFeatures). A node's features are its snapshot's (Torque's node
// properties; the simulation's resource trace) plus what maui.cfg adds
// with NODECFG[name] FEATURES=. A job with no feature request may use any
// node and pays nothing: its eligible set is nil.

// NodeConfig is what maui.cfg's NODECFG[...] lines set that the simulator
// follows: the features each named node gets on top of its own, its
// PRIORITY (used by NODEALLOCATIONPOLICY PRIORITY; 0 when not set) and its
// policies (MAXJOB …, nodelimits.go; NODECFG[DEFAULT]'s in DefaultLimits).
type NodeConfig struct {
	Features      map[string][]string
	Priority      map[string]int64
	Limits        map[string]NodeLimits
	DefaultLimits NodeLimits
	// Partition is each named node's partition (NODECFG PARTITION=),
	// PartOrder the partitions in the order maui.cfg first names them
	// (partition.go)
	Partition map[string]string
	PartOrder []string
}

// nodeCfgLine reads one NODECFG[name] line.
func (c *cfgReader) nodeCfgLine(name string, attrs []string) error {
	if name == "DEFAULT" || name == "" {
		return c.nodeCfgDefault(name, attrs)
	}
	for _, a := range attrs {
		key, val, _ := strings.Cut(a, "=")
		lim := c.nodeCfg().Limits[name]
		if ok, err := nodeLimitAttr(&lim, name, strings.ToUpper(key), val); ok {
			if err != nil {
				return err
			}
			c.nodeCfg().Limits[name] = lim
			continue
		}
		switch strings.ToUpper(key) {
		case "FEATURES":
			f := c.nodeCfg().Features
			f[name] = appendNew(f[name], nodeCfgFeatures(val)...)
		case "PARTITION":
			c.nodePartition(name, val)
		case "SPEED":
			// MUNLGetMinAVal(mnaSpeed) answers 1.0 unless USEMACHINESPEED
			// is TRUE (listed as not modelled): no effect on scheduling
		case "PRIORITY":
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return fmt.Errorf("NODECFG[%s] PRIORITY=%q: not an integer", name, val)
			}
			c.nodeCfg().Priority[name] = n
		default:
			c.note("NODECFG[%s] %s: not modelled", name, a)
		}
	}
	return nil
}

func (c *cfgReader) nodeCfg() *NodeConfig {
	if c.pol.Nodes == nil {
		c.pol.Nodes = &NodeConfig{Features: map[string][]string{}, Priority: map[string]int64{}, Limits: map[string]NodeLimits{}}
	}
	return c.pol.Nodes
}

// priorityOrder is NODEALLOCATIONPOLICY PRIORITY's order
// (MJobAllocatePriority without a PRIORITYF: each node's PRIORITY, highest
// first; glibc's qsort keeps the list order among equals).
func (e *Engine) priorityOrder(list []int) []int {
	prio := func(i int) int64 {
		if e.policy.Nodes == nil {
			return 0
		}
		return e.policy.Nodes.Priority[e.nodes[i].name]
	}
	out := slices.Clone(list)
	slices.SortStableFunc(out, func(a, b int) int { return cmp.Compare(prio(b), prio(a)) })
	return out
}

// nodeCfgFeatures splits a FEATURES value as MNodeProcessConfig does: the
// first feature ends at ':', the next ones at ',', ' ' or tab (so "a,b"
// alone is one feature named "a,b", and "a:b,c" three).
func nodeCfgFeatures(v string) []string {
	first, rest, _ := strings.Cut(v, ":")
	out := []string{}
	if first != "" {
		out = append(out, first)
	}
	return append(out, strings.FieldsFunc(rest, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })...)
}

func appendNew(xs []string, ys ...string) []string {
	for _, y := range ys {
		if !slices.Contains(xs, y) {
			xs = append(xs, y)
		}
	}
	return xs
}

// initFeatures sets each node's features (nil when no node has any).
func (e *Engine) initFeatures(c Cluster, p Policy) {
	for i, n := range c.Nodes {
		var f []string
		if p.Nodes != nil {
			f = p.Nodes.Features[n.Name]
		}
		if len(n.Features)+len(f) == 0 {
			continue
		}
		if e.feats == nil {
			e.feats = make([][]string, len(c.Nodes))
		}
		e.feats[i] = appendNew(slices.Clone(n.Features), f...)
	}
	e.initNodeLimits(p)
	e.initPartitions(p)
}

// eligible is the nodes that have every feature in want (nil: want is
// empty, every node), and the processors on the usable ones.
func (e *Engine) eligible(want []string) ([]bool, int) {
	if len(want) == 0 {
		return nil, e.total
	}
	el := make([]bool, len(e.nodes))
	procs := 0
	for i := range e.nodes {
		if e.feats == nil || !hasFeatures(e.feats[i], want) {
			continue
		}
		el[i] = true
		if e.nodes[i].usable {
			procs += e.nodes[i].procs
		}
	}
	return el, procs
}

func hasFeatures(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// can reports whether j may use node i.
func (j *job) can(i int) bool { return j.elig == nil || j.elig.ok[i] }

// nodeSet is a job's eligible nodes, behind a pointer so that a job
// without a feature request carries 8 bytes for it, not a slice header
// (the queue walks touch every waiting job).
type nodeSet struct{ ok []bool }

func featureReason(j Job, procs int) string {
	return "asks for " + itoa(j.Procs) + " processors on nodes with features " + strings.Join(j.Features, ",") + ", the cluster has " + itoa(procs)
}
