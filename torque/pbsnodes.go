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
// without name, state or np is an error naming its position.
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
	if n.Jobs, err = ParseNodeJobs(x.Jobs); err != nil {
		return n, err
	}
	n.MemMB = statusMemMB(x.Status)
	return n, nil
}

// ParseNodeJobs reads pbsnodes' jobs attribute: "0/0.vm,1/3[0].vm" (4.2),
// "0/0.vm, 1/3[0].vm" (2.5) or "0-1/5.vm,2-3/4.vm" (6.1), merging the
// slots of a job listed more than once.
func ParseNodeJobs(s string) ([]forecast.NodeJob, error) {
	var out []forecast.NodeJob
	index := map[string]int{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		slots, job, ok := strings.Cut(item, "/")
		if !ok || job == "" {
			return nil, fmt.Errorf("jobs %q: item %q is not slots/job", s, item)
		}
		idx, err := ParseSlotList(slots)
		if err != nil {
			return nil, fmt.Errorf("jobs %q: %w", s, err)
		}
		if i, seen := index[job]; seen {
			out[i].Slots = append(out[i].Slots, idx...)
			continue
		}
		index[job] = len(out)
		out = append(out, forecast.NodeJob{Job: job, Slots: idx})
	}
	return out, nil
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
