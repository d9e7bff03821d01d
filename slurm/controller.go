package slurm

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
)

// ParsePing says whether `scontrol ping` found slurmctld up, and what it
// printed otherwise (its error lines, without the banner).
func ParsePing(out string) (up bool, detail string) {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "scontrol: error:"))
		switch {
		case strings.Contains(l, " is UP"):
			up = true
		case l == "" || strings.HasPrefix(l, "**") || strings.Contains(l, "If munged is up"):
		default:
			lines = append(lines, l)
		}
	}
	return up, strings.Join(lines, "; ")
}

// Ping asks slurmctld whether it answers (`scontrol ping`: immediate
// when it is down or munged does not answer, where sinfo waits about
// 9 s). Nil when it is up.
func (c *Client) Ping(ctx context.Context) error {
	res, err := c.Run.Run(ctx, "scontrol", "ping")
	if err != nil {
		return fmt.Errorf("scontrol ping: %w", err)
	}
	up, detail := ParsePing(string(res.Stdout) + "\n" + string(res.Stderr))
	if !up {
		return fmt.Errorf("slurmctld does not answer (scontrol ping: %s)", detail)
	}
	return nil
}

// ParseConfig reads `scontrol show config`: its "Key = Value" lines
// (the first line, the date, and the ping line at the end are not).
func ParseConfig(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " = ")
		if k = strings.TrimSpace(k); ok && k != "" && !strings.ContainsAny(k, " \t") {
			out[k] = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("scontrol show config: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("scontrol show config: no Key = Value line")
	}
	return out, nil
}

// Config reads slurmctld's running configuration (scontrol show config).
func (c *Client) Config(ctx context.Context) (map[string]string, error) {
	out, err := c.output(ctx, "scontrol", "show", "config")
	if err != nil {
		return nil, err
	}
	return ParseConfig(bytes.NewReader(out))
}

// PartitionInfo is one partition as slurmctld shows it (scontrol show
// partition); Partition is one of slurm.conf.
type PartitionInfo struct {
	Name    string
	Default bool
	Nodes   string // hostlist expression
	State   string // UP, DOWN, DRAIN, INACTIVE
}

// ParsePartitions reads `scontrol show partition`; "No partitions in
// the system" is none.
func ParsePartitions(r io.Reader) ([]PartitionInfo, error) {
	var out []PartitionInfo
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for line := 1; sc.Scan(); line++ {
		for _, p := range splitPairs(sc.Text()) {
			if p.Key == "PartitionName" {
				out = append(out, PartitionInfo{Name: p.Value})
				continue
			}
			if len(out) == 0 {
				return nil, fmt.Errorf("scontrol show partition: line %d: %s before any PartitionName", line, p.Key)
			}
			switch cur := &out[len(out)-1]; p.Key {
			case "Default":
				cur.Default = p.Value == "YES"
			case "Nodes":
				cur.Nodes = nullable(p.Value)
			case "State":
				cur.State = p.Value
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("scontrol show partition: %w", err)
	}
	return out, nil
}

// Partitions reads every partition (scontrol show partition).
func (c *Client) Partitions(ctx context.Context) ([]PartitionInfo, error) {
	out, err := c.output(ctx, "scontrol", "show", "partition")
	if err != nil {
		return nil, err
	}
	return ParsePartitions(bytes.NewReader(out))
}
