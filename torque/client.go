package torque

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"lookahead/forecast"
)

// Exit codes of the Torque clients that mean something to lookahead
// (PBSE_* & 0xff as the clients exit with them).
const (
	ExitUnknownJob   = 153 // PBSE_UNKJOBID: "Unknown Job Id"
	ExitInvalidState = 170 // PBSE_BADSTATE: "Request invalid for state of job"
	ExitNoNodes      = 2   // pbsnodes: the server has no node list
)

// Errors wrapped by CommandError according to the exit code.
var (
	ErrUnknownJob   = errors.New("unknown job id")
	ErrInvalidState = errors.New("request invalid for state of job")
	ErrNoNodes      = errors.New("no nodes")
	ErrCommand      = errors.New("command failed")
)

// CommandError is a Torque client that exited non-zero. Kind is one of the
// Err* values above (ErrCommand when the code has no special meaning).
type CommandError struct {
	Command  string
	ExitCode int
	Stderr   string
	Kind     error
}

func (e *CommandError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = "(no stderr)"
	}
	return fmt.Sprintf("%s: exit %d (%v): %s", e.Command, e.ExitCode, e.Kind, msg)
}

func (e *CommandError) Unwrap() error { return e.Kind }

// ClassifyExit turns a non-zero exit of tool into a *CommandError, or
// returns nil for exit 0.
func ClassifyExit(tool string, args []string, res Result) error {
	if res.ExitCode == 0 {
		return nil
	}
	kind := ErrCommand
	switch {
	case res.ExitCode == ExitUnknownJob:
		kind = ErrUnknownJob
	case res.ExitCode == ExitInvalidState:
		kind = ErrInvalidState
	case tool == "pbsnodes" && (res.ExitCode == ExitNoNodes || bytes.Contains(res.Stderr, []byte("Server has no node list"))):
		kind = ErrNoNodes
	}
	return &CommandError{Command: strings.Join(append([]string{tool}, args...), " "),
		ExitCode: res.ExitCode, Stderr: string(res.Stderr), Kind: kind}
}

// NodeConfig is what Torque does not know about a node: its speed relative
// to the reference CPU, its memory and extra features. Zero values mean
// "not set".
type NodeConfig struct {
	Speed    float64  `json:"speed" mapstructure:"speed"`
	MemMB    int64    `json:"mem_mb" mapstructure:"mem_mb"`
	Features []string `json:"features" mapstructure:"features"`
}

// ClientConfig configures a Client.
type ClientConfig struct {
	// Site names the cluster in snapshots.
	Site string
	// Qstat and Pbsnodes are the command names or paths (defaults "qstat",
	// "pbsnodes").
	Qstat, Pbsnodes string
	// QstatArgs default to -f -x -t: full XML with array subjobs expanded.
	// Without -t, Torque lists an array as one parent job.
	QstatArgs []string
	// PbsnodesArgs default to -x.
	PbsnodesArgs []string
	// Server, when set, names the pbs_server to query ("host" or
	// "host:port") as the clients take it: qstat gets the destination
	// "@server" after its arguments, pbsnodes "-s server" before them.
	// Empty: the clients' default (<pbs_home>/server_name).
	Server string
	// Default applies to every node; Nodes overrides it per node name.
	// Speed defaults to 1.0. MemMB, when set, replaces the memory that
	// pbsnodes reports; Features are added to the node's properties.
	Default NodeConfig
	Nodes   map[string]NodeConfig
	// Now is the clock for Snapshot.Taken (default time.Now).
	Now func() time.Time
	// OnSkipped, when set, is told of every item of qstat's or pbsnodes'
	// output that did not parse; the snapshot is still taken, with the
	// node or job treated conservatively (see ItemError).
	OnSkipped func(*ItemError)
}

// Client takes cluster snapshots from Torque's client commands. Safe for
// concurrent use if its Runner is.
type Client struct {
	run     Runner
	cfg     ClientConfig
	skipped atomic.Uint64
}

// Skipped counts the output items that did not parse since the Client was
// made (each also told to ClientConfig.OnSkipped).
func (c *Client) Skipped() uint64 { return c.skipped.Load() }

// goOn reports the skipped items of a parse error and clears it when
// only such items failed.
func (c *Client) goOn(err error) error {
	var sk *SkippedError
	if !errors.As(err, &sk) {
		return err
	}
	for _, it := range sk.Items {
		c.skipped.Add(1)
		if c.cfg.OnSkipped != nil {
			c.cfg.OnSkipped(it)
		}
	}
	return nil
}

// NewClient returns a Client running commands through r.
func NewClient(r Runner, cfg ClientConfig) *Client {
	if cfg.Qstat == "" {
		cfg.Qstat = "qstat"
	}
	if cfg.Pbsnodes == "" {
		cfg.Pbsnodes = "pbsnodes"
	}
	if cfg.QstatArgs == nil {
		cfg.QstatArgs = []string{"-f", "-x", "-t"}
	}
	if cfg.PbsnodesArgs == nil {
		cfg.PbsnodesArgs = []string{"-x"}
	}
	if cfg.Server != "" {
		cfg.QstatArgs = append(slices.Clone(cfg.QstatArgs), "@"+cfg.Server)
		cfg.PbsnodesArgs = append([]string{"-s", cfg.Server}, cfg.PbsnodesArgs...)
	}
	if cfg.Default.Speed <= 0 {
		cfg.Default.Speed = 1
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Client{run: r, cfg: cfg}
}

// Jobs runs qstat and parses every job it lists (completed ones included).
func (c *Client) Jobs(ctx context.Context) ([]forecast.LocalJob, error) {
	res, err := c.run.Run(ctx, c.cfg.Qstat, c.cfg.QstatArgs...)
	if err != nil {
		return nil, fmt.Errorf("qstat on %s: %w", c.site(), err)
	}
	if err := ClassifyExit("qstat", c.cfg.QstatArgs, res); err != nil {
		// A job that vanished between qstat's listing and its status
		// request makes qstat exit 153 after printing the others.
		if !errors.Is(err, ErrUnknownJob) || len(bytes.TrimSpace(res.Stdout)) == 0 {
			return nil, fmt.Errorf("qstat on %s: %w", c.site(), err)
		}
	}
	jobs, err := ParseQstatXML(bytes.NewReader(res.Stdout))
	if err = c.goOn(err); err != nil {
		return nil, fmt.Errorf("qstat on %s: %w", c.site(), err)
	}
	return jobs, nil
}

// Nodes runs pbsnodes and parses its nodes, with the configured speed,
// memory and features applied. A server without nodes gives none.
func (c *Client) Nodes(ctx context.Context) ([]forecast.SnapshotNode, error) {
	res, err := c.run.Run(ctx, c.cfg.Pbsnodes, c.cfg.PbsnodesArgs...)
	if err != nil {
		return nil, fmt.Errorf("pbsnodes on %s: %w", c.site(), err)
	}
	if err := ClassifyExit("pbsnodes", c.cfg.PbsnodesArgs, res); err != nil {
		if errors.Is(err, ErrNoNodes) {
			return nil, nil
		}
		return nil, fmt.Errorf("pbsnodes on %s: %w", c.site(), err)
	}
	nodes, err := ParsePbsnodesXML(bytes.NewReader(res.Stdout))
	if err = c.goOn(err); err != nil {
		return nil, fmt.Errorf("pbsnodes on %s: %w", c.site(), err)
	}
	for i := range nodes {
		c.applyNodeConfig(&nodes[i])
	}
	return nodes, nil
}

// Snapshot reads nodes, then jobs, and returns the cluster state: nodes
// with configured speed, and the jobs that are not completed (state C
// jobs, kept by keep_completed, hold nothing) and are not array parents
// (their subjobs are listed instead). Taken is the clock after both reads.
// A running job without resources_used.walltime gets Used from its start.
func (c *Client) Snapshot(ctx context.Context) (*forecast.Snapshot, error) {
	nodes, err := c.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	jobs, err := c.Jobs(ctx)
	if err != nil {
		return nil, err
	}
	taken := c.cfg.Now().Unix()
	return &forecast.Snapshot{Site: c.cfg.Site, Taken: taken, Nodes: nodes, Jobs: liveJobs(jobs, taken)}, nil
}

func liveJobs(jobs []forecast.LocalJob, now int64) []forecast.LocalJob {
	out := make([]forecast.LocalJob, 0, len(jobs))
	for _, j := range jobs {
		if j.State == forecast.JobCompleted || IsArrayParent(j.ID) {
			continue
		}
		if j.Running() && j.Used == 0 && j.Started > 0 && now > j.Started {
			j.Used = now - j.Started
		}
		out = append(out, j)
	}
	return out
}

func (c *Client) applyNodeConfig(n *forecast.SnapshotNode) {
	nc, ok := c.cfg.Nodes[n.Name]
	n.Speed = c.cfg.Default.Speed
	if ok && nc.Speed > 0 {
		n.Speed = nc.Speed
	}
	for _, mem := range []int64{c.cfg.Default.MemMB, nc.MemMB} {
		if mem > 0 {
			n.MemMB = mem
		}
	}
	for _, f := range append(slices.Clone(c.cfg.Default.Features), nc.Features...) {
		if !slices.Contains(n.Features, f) {
			n.Features = append(n.Features, f)
		}
	}
}

func (c *Client) site() string {
	if c.cfg.Site == "" {
		return "the local server"
	}
	return c.cfg.Site
}
