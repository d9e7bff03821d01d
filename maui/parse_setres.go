package maui

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// HostTasks is a node and a number of Maui tasks on it.
type HostTasks struct {
	Node  string
	Tasks int
}

// SetresReply is what a successful setres printed: the full reservation id
// Maui chose (the -n base name plus ".N"), and the nodes with their task
// counts.
type SetresReply struct {
	ID    string
	Nodes int
	Tasks int
	Hosts []HostTasks
}

// ParseSetres reads setres' stdout. It is an error when no "reservation
// '<id>' created" line is there: setres failed (its reasons are on stderr).
func ParseSetres(r io.Reader) (SetresReply, error) {
	var out SetresReply
	ls, err := lines(r)
	if err != nil {
		return out, fmt.Errorf("setres: %w", err)
	}
	found := false
	for i, l := range ls {
		switch {
		case strings.HasPrefix(l, "reservation '"):
			if out, err = parseCreated(l); err != nil {
				return out, &lineError{"setres", i + 1, l, err}
			}
			found = true
		case found && strings.Count(l, ":") == 1 && !strings.ContainsAny(l, " \t"):
			node, n, _ := strings.Cut(l, ":")
			tc, err := strconv.Atoi(n)
			if err != nil || node == "" {
				return out, &lineError{"setres", i + 1, l, fmt.Errorf("want node:tasks")}
			}
			out.Hosts = append(out.Hosts, HostTasks{Node: node, Tasks: tc})
		}
	}
	if !found {
		return out, fmt.Errorf("setres: no \"reservation '<id>' created\" line")
	}
	return out, nil
}

// parseCreated reads "reservation 'gridres1.0' created on 1 node (2 tasks)".
func parseCreated(l string) (SetresReply, error) {
	var out SetresReply
	rest := strings.TrimPrefix(l, "reservation '")
	id, rest, ok := strings.Cut(rest, "' created on ")
	if !ok || id == "" {
		return out, fmt.Errorf("want \"reservation '<id>' created on N nodes (M tasks)\"")
	}
	out.ID = id
	f := strings.Fields(strings.NewReplacer("(", " ", ")", " ").Replace(rest))
	if len(f) != 4 {
		return out, fmt.Errorf("want \"N node(s) (M tasks)\", got %q", rest)
	}
	var err error
	if out.Nodes, err = atoiField(f[0], "nodes"); err != nil {
		return out, err
	}
	out.Tasks, err = atoiField(f[2], "tasks")
	return out, err
}

// ReleaseLine is one answer of releaseres: Released with the reservation's
// type, or not (Message holds Maui's ERROR text, e.g. "cannot locate
// reservation 'x.0'").
type ReleaseLine struct {
	ID       string
	Type     string
	Released bool
	Message  string
}

// ParseReleaseres reads releaseres' stdout. releaseres exits 0 even when it
// cannot locate a reservation, so callers must look at Released.
func ParseReleaseres(r io.Reader) ([]ReleaseLine, error) {
	ls, err := lines(r)
	if err != nil {
		return nil, fmt.Errorf("releaseres: %w", err)
	}
	var out []ReleaseLine
	for i, l := range ls {
		l = strings.TrimSpace(l)
		switch {
		case l == "":
		case strings.HasPrefix(l, "released "):
			f := strings.Fields(l)
			if len(f) != 4 || f[2] != "reservation" {
				return nil, &lineError{"releaseres", i + 1, l, fmt.Errorf("want \"released <type> reservation '<id>'\"")}
			}
			out = append(out, ReleaseLine{ID: strings.Trim(f[3], "'"), Type: f[1], Released: true})
		case strings.HasPrefix(l, "ERROR:"):
			msg := strings.TrimSpace(strings.TrimPrefix(l, "ERROR:"))
			rl := ReleaseLine{Message: msg}
			if a := strings.Index(msg, "'"); a >= 0 {
				if b := strings.LastIndex(msg, "'"); b > a {
					rl.ID = msg[a+1 : b]
				}
			}
			out = append(out, rl)
		default:
			return nil, &lineError{"releaseres", i + 1, l, fmt.Errorf("unexpected line")}
		}
	}
	return out, nil
}
