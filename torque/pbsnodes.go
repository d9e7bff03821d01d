package torque

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"lookahead/forecast"
)

// xmlNode is one <Node> of `pbsnodes -x`. Unknown elements are ignored.
type xmlNode struct {
	Name       string `xml:"name"`
	State      string `xml:"state"`
	NP         string `xml:"np"`
	Properties string `xml:"properties"`
	Jobs       string `xml:"jobs"`
	Status     string `xml:"status"`
	Note       string `xml:"note"`
}

// ParsePbsnodesXML reads the output of `pbsnodes -x` (Torque 2.5, 4.2,
// 6.1). Speed is left 0 and MemMB is taken from the mom's reported physmem
// when present: Client.Snapshot applies the configured values. A node
// without name, state or np is an error naming its position. A jobs item
// that does not parse does not stop the others: the node is kept in state
// forecast.NodeUnknown (nothing is offered on it) and the nodes come back
// with a *SkippedError listing the items.
func ParsePbsnodesXML(r io.Reader) ([]forecast.SnapshotNode, error) {
	return decodeElements(r, "pbsnodes", "Node", "node",
		func(x xmlNode) string { return x.Name }, xmlNode.toSnapshot)
}

func (x xmlNode) toSnapshot() (forecast.SnapshotNode, error) {
	switch {
	case x.Name == "":
		return forecast.SnapshotNode{}, errors.New("missing name")
	case x.State == "":
		return forecast.SnapshotNode{}, errors.New("missing state")
	case x.NP == "":
		return forecast.SnapshotNode{}, errors.New("missing np")
	}
	np, err := strconv.Atoi(strings.TrimSpace(x.NP))
	if err != nil || np < 0 {
		return forecast.SnapshotNode{}, fmt.Errorf("np %q", x.NP)
	}
	n := forecast.SnapshotNode{Name: x.Name, Procs: np, Note: x.Note}
	n.State = splitList(x.State)
	n.Features = splitList(x.Properties)
	n.MemMB = statusMemMB(x.Status)
	n.Jobs, err = ParseNodeJobs(x.Jobs)
	if it, ok := asItemError(err); ok {
		it.Where = "node " + x.Name + " " + it.Where
		n.State = append(n.State, forecast.NodeUnknown)
		return n, it
	}
	return n, err
}

// ParseNodeJobs reads pbsnodes' jobs attribute: "0/0.vm,1/3[0].vm" (4.2),
// "0/0.vm, 1/3[0].vm" (2.5), "0-1/5.vm,2-3/4.vm" (6.1) and 6.1's
// non-adjacent slots "0-1/42.vm,2-3,6-7/45.vm" (a slot list holds commas:
// items without "/" belong to the next job), merging the slots of a job
// listed more than once. Items that do not parse are skipped and named in
// the *ItemError returned beside the jobs that did.
func ParseNodeJobs(s string) ([]forecast.NodeJob, error) {
	var out []forecast.NodeJob
	var bad []string
	var firstErr error
	index := map[string]int{}
	var pending []string // slot ranges waiting for their "/job"
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		slots, job, ok := strings.Cut(item, "/")
		if !ok {
			if _, err := ParseSlotList(item); err != nil {
				bad, firstErr = append(bad, item), cmpErr(firstErr, err)
			} else {
				pending = append(pending, item)
			}
			continue
		}
		full := strings.Join(append(pending, item), ",")
		slots, pending = strings.Join(append(pending, slots), ","), nil
		idx, err := ParseSlotList(slots)
		if job = strings.TrimSpace(job); err == nil && (job == "" || strings.ContainsAny(job, "/ \t")) {
			err = fmt.Errorf("job id %q", job)
		}
		if err != nil {
			bad, firstErr = append(bad, full), cmpErr(firstErr, err)
			continue
		}
		if i, seen := index[job]; seen {
			out[i].Slots = append(out[i].Slots, idx...)
			continue
		}
		index[job] = len(out)
		out = append(out, forecast.NodeJob{Job: job, Slots: idx})
	}
	if len(pending) > 0 {
		bad, firstErr = append(bad, strings.Join(pending, ",")), cmpErr(firstErr, errors.New("slots without a job"))
	}
	if len(bad) > 0 {
		return out, &ItemError{Where: "jobs", Item: strings.Join(bad, " | "), Err: firstErr}
	}
	return out, nil
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// statusMemMB takes physmem (or totmem) from the mom's status string; 0
// when the node reports no status (down) or the value does not parse.
func statusMemMB(status string) int64 {
	var phys, tot string
	for _, kv := range strings.Split(status, ",") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "physmem":
			phys = v
		case "totmem":
			tot = v
		}
	}
	for _, v := range []string{phys, tot} {
		if mb, err := ParseSizeMB(v); v != "" && err == nil {
			return mb
		}
	}
	return 0
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
