package maui

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// TraceNode is one node of a v230 resource trace.
type TraceNode struct {
	Name    string
	Procs   int
	MemMB   int64
	SwapMB  int64
	DiskMB  int64
	Classes []ClassSlots
	// Features are node properties; empty writes "[NONE]".
	Features []string
	Opsys    string
	Arch     string
}

// ClassSlots is a class (Torque queue) a node serves and how many of its
// processors that class may use.
type ClassSlots struct {
	Class string
	Slots int
}

// TraceJob is one job of a v230 workload trace. Runtime is what Maui will
// simulate (it writes Completion = Queue + Runtime with Dispatch = Start =
// Queue); HostList pins the job to nodes, one entry per task. Nodes is the
// node count (0: any).
type TraceJob struct {
	Name        string
	Nodes       int
	Tasks       int
	TPN         int
	User        string
	Group       string
	Account     string
	Class       string
	WCLimit     int64
	Queue       int64
	Runtime     int64
	HostList    []string
	Reservation string
	// Features are the node features the job asks for (field 20, the
	// requested features MTraceLoadWorkload reads); empty writes "[NONE]".
	Features []string
}

// WriteResourceTrace writes nodes as v230 resource records (21 fields),
// in the exact layout the captured traces use.
func WriteResourceTrace(w io.Writer, nodes []TraceNode) error {
	bw := bufio.NewWriter(w)
	for _, n := range nodes {
		if err := checkTraceWord("node name", n.Name); err != nil {
			return err
		}
		f := []string{"COMPUTENODE", "AVAILABLE", "0", n.Name, "NONE",
			mb(n.SwapMB), mb(n.MemMB), mb(n.DiskMB), strconv.Itoa(n.Procs), "-1", "-1", "1",
			orDefault(n.Opsys, "LINUX"), orDefault(n.Arch, "x86_64"), bracketList(n.Features), classList(n.Classes),
			"[NONE]", "[NONE]", "NONE", "NONE", "NONE"}
		if len(f) != resourceFieldCount {
			panic("resource record layout")
		}
		fmt.Fprintln(bw, strings.Join(f, " "))
	}
	return bw.Flush()
}

// WriteWorkloadTrace writes a "VERSION 230" line and jobs as v230 workload
// records (44 fields), in the exact layout the captured traces use.
func WriteWorkloadTrace(w io.Writer, jobs []TraceJob) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "VERSION %d\n", TraceVersion)
	for _, j := range jobs {
		for _, word := range []struct{ what, v string }{{"job name", j.Name}, {"user", j.User}, {"group", j.Group}, {"class", j.Class}} {
			if err := checkTraceWord(word.what, word.v); err != nil {
				return fmt.Errorf("job %q: %w", j.Name, err)
			}
		}
		for _, ft := range j.Features {
			if err := checkTraceWord("feature", ft); err != nil {
				return fmt.Errorf("job %q: %w", j.Name, err)
			}
		}
		q := strconv.FormatInt(j.Queue, 10)
		f := []string{j.Name, strconv.Itoa(j.Nodes), strconv.Itoa(j.Tasks), j.User, j.Group, strconv.FormatInt(j.WCLimit, 10), "Completed",
			"[" + j.Class + ":1]", q, q, q, strconv.FormatInt(j.Queue+j.Runtime, 10),
			"[NONE]", "[NONE]", "[NONE]", ">=", "0M", ">=", "0M", bracketList(j.Features), q, strconv.Itoa(j.Tasks), strconv.Itoa(j.TPN),
			"[DEFAULT]:[DEFAULT]", "[NONE]", orDefault(j.Account, "[NONE]"), "/bin/sleep", "[NONE]", "0", "0.00", "[DEFAULT]",
			"1", "0M", "0M", "0M", "0", "0", "[NONE]", "0", hostList(j.HostList), orDefault(j.Reservation, "[NONE]"),
			"[NONE]", "[NONE]", "[NONE]"}
		if len(f) != workloadFieldCount {
			panic("workload record layout")
		}
		fmt.Fprintln(bw, strings.Join(f, " "))
	}
	return bw.Flush()
}

// checkTraceWord refuses values that would shift the whitespace-separated
// fields of a trace line.
func checkTraceWord(what, v string) error {
	if v == "" || strings.ContainsAny(v, " \t\r\n:[]") {
		return fmt.Errorf("%s %q: empty or contains whitespace, ':' or brackets", what, v)
	}
	return nil
}

func mb(v int64) string { return strconv.FormatInt(v, 10) + "M" }

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func bracketList(items []string) string {
	if len(items) == 0 {
		return "[NONE]"
	}
	var b strings.Builder
	for _, it := range items {
		b.WriteString("[" + it + "]")
	}
	return b.String()
}

func classList(cs []ClassSlots) string {
	if len(cs) == 0 {
		return "[NONE]"
	}
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "[%s:%d]", c.Class, c.Slots)
	}
	return b.String()
}

func hostList(h []string) string {
	if len(h) == 0 {
		return "[NONE]"
	}
	return strings.Join(h, ":")
}

// ResourceProcs sums the processors of the AVAILABLE nodes of a v230
// resource trace.
func ResourceProcs(resource []byte) (int, error) {
	ls, err := lines(bytes.NewReader(resource))
	if err != nil {
		return 0, err
	}
	total := 0
	for i, l := range ls {
		f := strings.Fields(l)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) != resourceFieldCount || f[0] != "COMPUTENODE" {
			return 0, &lineError{"resource trace", i + 1, l, fmt.Errorf("want %d fields starting COMPUTENODE", resourceFieldCount)}
		}
		if f[1] != "AVAILABLE" {
			continue
		}
		p, err := atoiField(f[8], "procs")
		if err != nil {
			return 0, &lineError{"resource trace", i + 1, l, err}
		}
		total += p
	}
	return total, nil
}
