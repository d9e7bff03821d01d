package slurm

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Conf is what a slurm.conf says about scheduling: its global parameters
// (the last value of each, by lower-case name, as Slurm's names are
// case-insensitive) and its partitions.
type Conf struct {
	Params     map[string]string
	Partitions []Partition
	Nodes      []string // the NodeName lines' names (hostlist expressions)
	Includes   []string // Include lines: files not read here
}

// Partition is one PartitionName line.
type Partition struct {
	Name   string
	Nodes  string // hostlist expression, "ALL", or ""
	Params map[string]string
}

// Param is a global parameter's value ("" when unset).
func (c Conf) Param(name string) string { return c.Params[strings.ToLower(name)] }

// ReadConf reads a slurm.conf: one Key=Value per line, or a NodeName /
// PartitionName line of several; '#' starts a comment; values may be
// double-quoted. A line that is not Key=Value is an error naming it.
func ReadConf(r io.Reader) (Conf, error) {
	c := Conf{Params: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if f := strings.Fields(line); strings.EqualFold(f[0], "include") {
			c.Includes = append(c.Includes, strings.Join(f[1:], " "))
			continue
		}
		kv, err := confPairs(line)
		if err != nil {
			return Conf{}, fmt.Errorf("slurm.conf:%d: %w", n, err)
		}
		c.add(kv)
	}
	if err := sc.Err(); err != nil {
		return Conf{}, fmt.Errorf("slurm.conf: %w", err)
	}
	return c, nil
}

func (c *Conf) add(kv []pair) {
	first := strings.ToLower(kv[0].Key)
	switch first {
	case "nodename":
		c.Nodes = append(c.Nodes, kv[0].Value)
	case "partitionname":
		p := Partition{Name: kv[0].Value, Params: map[string]string{}}
		for _, x := range kv[1:] {
			p.Params[strings.ToLower(x.Key)] = x.Value
		}
		p.Nodes = p.Params["nodes"]
		c.Partitions = append(c.Partitions, p)
	case "downnodes", "nodeset", "frontendname":
	default:
		for _, x := range kv {
			c.Params[strings.ToLower(x.Key)] = x.Value
		}
	}
}

// confPairs splits a slurm.conf line into Key=Value pairs separated by
// blanks; a value may be double-quoted (and then hold blanks).
func confPairs(line string) ([]pair, error) {
	var out []pair
	for line = strings.TrimSpace(line); line != ""; line = strings.TrimSpace(line) {
		k, rest, ok := strings.Cut(line, "=")
		if !ok || k == "" || strings.ContainsAny(k, " \t\"") {
			return nil, fmt.Errorf("%q: want Key=Value", line)
		}
		var v string
		if strings.HasPrefix(rest, `"`) {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("%s: unterminated quote", k)
			}
			v, line = rest[1:end+1], rest[end+2:]
		} else {
			v, line, _ = strings.Cut(rest, " ")
			v = strings.TrimRight(v, "\t")
		}
		out = append(out, pair{Key: k, Value: v})
	}
	return out, nil
}
