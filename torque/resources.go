package torque

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"lookahead/forecast"
)

// ParseDuration reads a Torque duration: "HH:MM:SS", "MM:SS", "SS" or
// "D:HH:MM:SS" (hours may exceed 24), with an optional fraction of a second
// that is dropped. It returns seconds.
func ParseDuration(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("duration: empty")
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, ":")
	if len(parts) > 4 {
		return 0, fmt.Errorf("duration %q: too many fields", s)
	}
	mult := []int64{1, 60, 3600, 86400}
	var total int64
	for i := range parts {
		p := parts[len(parts)-1-i]
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("duration %q: bad field %q", s, p)
		}
		total += v * mult[i]
	}
	return total, nil
}

// ParseSizeMB reads a Torque size ("2gb", "8140kb", "512mb", "1024b",
// "3tb", bare numbers are bytes; "w" units are 8-byte words) and returns
// whole megabytes, rounded up.
func ParseSizeMB(s string) (int64, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	i := len(s)
	for i > 0 && (s[i-1] < '0' || s[i-1] > '9') {
		i--
	}
	num, unit := s[:i], s[i:]
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("size %q: bad number", s)
	}
	word := int64(1)
	if strings.HasSuffix(unit, "w") {
		word, unit = 8, strings.TrimSuffix(unit, "w")+"b"
	}
	shift := map[string]uint{"": 0, "b": 0, "kb": 10, "mb": 20, "gb": 30, "tb": 40, "pb": 50}
	sh, ok := shift[unit]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q", s, unit)
	}
	bytes := float64(v) * float64(word) * float64(uint64(1)<<sh)
	mb := int64(bytes / (1 << 20))
	if float64(mb)*(1<<20) < bytes {
		mb++
	}
	return mb, nil
}

// NodeSpec is a parsed Resource_List.nodes request. Procs is the total of
// count×ppn over the "+" parts (a part naming a host counts once). Nodes
// and PPN are set only when the request has a single part of the form
// N[:ppn=K] (or a host name); otherwise they are 0. Features are every
// part's properties (the union); Required are the properties every part
// asks for, so every node of the job must have them (Maui 3.3.1 makes one
// request per part, each with its own features; the simulator has one
// list per job, and Required is what holds for all of its nodes).
type NodeSpec struct {
	Procs    int
	Nodes    int
	PPN      int
	Features []string
	Required []string
}

// ParseNodeSpec reads "1:ppn=2", "2:ib:ppn=4+1:ppn=2", "vm", "node01:ppn=3".
func ParseNodeSpec(s string) (NodeSpec, error) {
	var spec NodeSpec
	parts := strings.Split(strings.TrimSpace(s), "+")
	for i, part := range parts {
		count, ppn, feats, err := parseNodePart(part)
		if err != nil {
			return NodeSpec{}, fmt.Errorf("nodes %q: %w", s, err)
		}
		spec.Procs += count * ppn
		spec.Features = append(spec.Features, feats...)
		spec.Required = requiredFeatures(spec.Required, feats, i == 0)
		if len(parts) == 1 {
			spec.Nodes, spec.PPN = count, ppn
		}
	}
	return spec, nil
}

// requiredFeatures keeps the features of have that feats also asks for
// (all of feats for the first part), each once, in order.
func requiredFeatures(have, feats []string, first bool) []string {
	if first {
		have = feats
	}
	var out []string
	for _, f := range have {
		if slices.Contains(feats, f) && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

func parseNodePart(part string) (count, ppn int, feats []string, err error) {
	fields := strings.Split(part, ":")
	if fields[0] == "" {
		return 0, 0, nil, fmt.Errorf("empty part")
	}
	count, ppn = 1, 1
	if n, convErr := strconv.Atoi(fields[0]); convErr == nil {
		if n <= 0 {
			return 0, 0, nil, fmt.Errorf("node count %d", n)
		}
		count = n
	}
	for _, f := range fields[1:] {
		switch {
		case strings.HasPrefix(f, "ppn="):
			ppn, err = strconv.Atoi(f[4:])
			if err != nil || ppn <= 0 {
				return 0, 0, nil, fmt.Errorf("bad ppn %q", f)
			}
		case strings.Contains(f, "="):
			// gpus=, mics= and the like: not processors
		case f != "":
			feats = append(feats, f)
		}
	}
	return count, ppn, feats, nil
}

// ParseExecHost reads exec_host in any of the captured forms — "vm/0+vm/1"
// (4.2), "vm/2+vm/1" (2.5, descending), "vm/1-2" (6.1, ranges),
// "vm/2-3,6-7" (6.1, non-adjacent slots, captured live) and also
// "n1/0-1,3+n2/0" — and folds it per node, in order of first appearance.
func ParseExecHost(s string) ([]forecast.HostProcs, error) {
	var hosts []forecast.HostProcs
	index := map[string]int{}
	for _, part := range strings.Split(strings.TrimSpace(s), "+") {
		node, slots, ok := strings.Cut(strings.TrimSpace(part), "/")
		if node = strings.TrimSpace(node); !ok || node == "" {
			return nil, fmt.Errorf("exec_host %q: part %q is not host/slots", s, part)
		}
		n, err := countSlots(slots)
		if err != nil {
			return nil, fmt.Errorf("exec_host %q: %w", s, err)
		}
		if i, seen := index[node]; seen {
			hosts[i].Procs += n
			continue
		}
		index[node] = len(hosts)
		hosts = append(hosts, forecast.HostProcs{Node: node, Procs: n})
	}
	return hosts, nil
}

// maxSlots bounds one slot list (no node has more processors).
const maxSlots = 1 << 16

// ParseSlotList reads "0", "1-2", "0-1,3" into processor indexes.
func ParseSlotList(s string) ([]int, error) {
	var out []int
	for _, r := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil || a < 0 {
			return nil, fmt.Errorf("slot %q", r)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil || b < a {
				return nil, fmt.Errorf("slot range %q", r)
			}
		}
		if b-a+len(out) > maxSlots {
			return nil, fmt.Errorf("slot list %q: more than %d slots", s, maxSlots)
		}
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
	}
	return out, nil
}

func countSlots(s string) (int, error) {
	idx, err := ParseSlotList(s)
	return len(idx), err
}
