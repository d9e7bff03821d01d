package slurm

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Condition is what a node can give the forecast, from its state and flags.
type Condition string

// A node's condition, the first that applies in this order: down (base
// state down, future or error, or the node not responding or failing),
// drained (DRAIN set: drained, or draining while its jobs finish),
// completing (jobs' epilogs still running), then its base state.
const (
	NodeDown       Condition = "down"
	NodeDrained    Condition = "drained"
	NodeCompleting Condition = "completing"
	NodeIdle       Condition = "idle"
	NodeMixed      Condition = "mixed"
	NodeAllocated  Condition = "allocated"
	NodeUnknown    Condition = "unknown" // a base state this package does not know
)

// Node is one node of sinfo --json.
type Node struct {
	Name       string
	State      string   // base state as Slurm prints it: idle, mixed, allocated, down, unknown, …
	Flags      []string // DRAIN, COMPLETING, NOT_RESPONDING, RESERVED, MAINT, …
	CPUs       int
	AllocCPUs  int
	IdleCPUs   int // Slurm counts a down node's CPUs as idle: see Usable
	Partitions []string
	Reason     string
	MemMB      int64    // RealMemory (1 when slurm.conf sets none)
	Features   []string // active features (what --constraint matches)
}

// Condition classifies the node (see the constants).
func (n Node) Condition() Condition {
	switch {
	case n.State == "down" || n.State == "future" || n.State == "error" ||
		n.has("NOT_RESPONDING") || n.has("FAIL"):
		return NodeDown
	case n.has("DRAIN"):
		return NodeDrained
	case n.has("COMPLETING"):
		return NodeCompleting
	}
	switch c := Condition(n.State); c {
	case NodeIdle, NodeMixed, NodeAllocated:
		return c
	}
	return NodeUnknown
}

// Usable says whether new work may start on the node: not down, not
// drained, in a known state.
func (n Node) Usable() bool {
	switch n.Condition() {
	case NodeDown, NodeDrained, NodeUnknown:
		return false
	}
	return true
}

func (n Node) has(flag string) bool { return slices.Contains(n.Flags, flag) }

// openapiErrors is the "errors" array of Slurm's --json answers: with
// slurmctld down, sinfo --json and squeue --json exit 0 with an error
// here and no nodes or jobs (testdata/mn-sinfo-down.json).
type openapiErrors struct {
	Errors []struct {
		Error string `json:"error"`
		Errno int    `json:"errno"`
	} `json:"errors"`
}

// err is the answer's errors as one error, nil when there are none.
func (e openapiErrors) err(cmd string) error {
	if len(e.Errors) == 0 {
		return nil
	}
	msgs := make([]string, len(e.Errors))
	for i, x := range e.Errors {
		msgs[i] = fmt.Sprintf("%s (errno %d)", x.Error, x.Errno)
	}
	return fmt.Errorf("%s: Slurm answered with errors: %s (is slurmctld up? scontrol ping)", cmd, strings.Join(msgs, "; "))
}

type sinfoDoc struct {
	openapiErrors
	Nodes []struct {
		Name       string   `json:"name"`
		State      string   `json:"state"`
		StateFlags []string `json:"state_flags"`
		CPUs       *int     `json:"cpus"`
		AllocCPUs  *int     `json:"alloc_cpus"`
		IdleCPUs   *int     `json:"idle_cpus"`
		Partitions []string `json:"partitions"`
		Reason     string   `json:"reason"`
		RealMemory *int64   `json:"real_memory"`
		Features   string   `json:"active_features"` // comma-separated
	} `json:"nodes"`
}

// ParseSinfoJSON reads the nodes of `sinfo --json`.
func ParseSinfoJSON(r io.Reader) ([]Node, error) {
	var doc sinfoDoc
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, fmt.Errorf("sinfo --json: %w", err)
	}
	if err := doc.err("sinfo --json"); err != nil {
		return nil, err
	}
	nodes := make([]Node, 0, len(doc.Nodes))
	for i, n := range doc.Nodes {
		if n.Name == "" {
			return nil, fmt.Errorf("sinfo --json: node %d has no name", i)
		}
		nodes = append(nodes, Node{Name: n.Name, State: n.State, Flags: n.StateFlags,
			CPUs: deref(n.CPUs), AllocCPUs: deref(n.AllocCPUs), IdleCPUs: deref(n.IdleCPUs),
			Partitions: n.Partitions, Reason: n.Reason, MemMB: max(0, deref(n.RealMemory)), Features: features(n.Features)})
	}
	return nodes, nil
}

func deref[T int | int64](p *T) T {
	if p == nil {
		return 0
	}
	return *p
}

// features splits sinfo's comma-separated feature list ("" is none).
func features(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
