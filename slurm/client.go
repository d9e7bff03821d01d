package slurm

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"lookahead/internal/execx"
)

// Cluster is what lookahead asks of one Slurm cluster. *Client implements
// it over the real clients; tests may swap it.
type Cluster interface {
	Snapshot(ctx context.Context) (Snapshot, error)
	Reservations(ctx context.Context) ([]Reservation, error)
	CreateReservation(ctx context.Context, spec ReservationSpec) (Answer, error)
	DeleteReservation(ctx context.Context, name string) (Answer, error)
}

var _ Cluster = (*Client)(nil)

// Snapshot is the cluster as its clients show it at one moment.
type Snapshot struct {
	Nodes        []Node
	Jobs         []Job
	Reservations []Reservation
}

// Client runs Slurm's clients (sinfo, squeue, scontrol) through a Runner:
// execx's exec runner (timeout per call, process group killed on
// cancellation, stderr kept) or a FixtureRunner over captured answers.
type Client struct {
	Run execx.Runner
	// Loc is the clients' local time zone: scontrol prints and reads
	// times in it (default UTC).
	Loc *time.Location
}

// ExecConfig configures NewExecClient.
type ExecConfig struct {
	// Conf, when set, is passed as SLURM_CONF.
	Conf string
	// Dir, when set, holds the clients (else they are looked up in PATH).
	Dir string
	// Timeout bounds each call (default 30 s).
	Timeout time.Duration
	Loc     *time.Location
}

// NewExecClient runs the clients found in $PATH.
func NewExecClient(cfg ExecConfig) *Client {
	var env []string
	if cfg.Conf != "" {
		env = append(env, "SLURM_CONF="+cfg.Conf)
	}
	return &Client{Run: execx.New(execx.Config{Env: env, Dir: cfg.Dir, Timeout: cfg.Timeout}), Loc: cfg.Loc}
}

func (c *Client) loc() *time.Location {
	if c.Loc == nil {
		return time.UTC
	}
	return c.Loc
}

// output runs a client that must exit 0 and returns its stdout.
func (c *Client) output(ctx context.Context, name string, args ...string) ([]byte, error) {
	res, err := c.Run.Run(ctx, name, args...)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("%s %s: exit %d: %s", name, strings.Join(args, " "), res.ExitCode, message(res))
	}
	return res.Stdout, nil
}

// message is what a client said, stderr first.
func message(res execx.Result) string {
	m := strings.TrimSpace(string(res.Stderr) + "\n" + string(res.Stdout))
	if m == "" {
		return "(no output)"
	}
	return m
}

// Snapshot reads nodes, jobs and reservations (three calls, not atomic:
// Slurm offers no consistent read across them), after a ping: with
// slurmctld or munged down it fails at once, saying so, where sinfo would
// wait about 9 s.
func (c *Client) Snapshot(ctx context.Context) (Snapshot, error) {
	var s Snapshot
	if err := c.Ping(ctx); err != nil {
		return s, err
	}
	out, err := c.output(ctx, "sinfo", "--json")
	if err != nil {
		return s, err
	}
	if s.Nodes, err = ParseSinfoJSON(bytes.NewReader(out)); err != nil {
		return s, err
	}
	if out, err = c.output(ctx, "squeue", "--json"); err != nil {
		return s, err
	}
	if s.Jobs, err = ParseSqueueJSON(bytes.NewReader(out)); err != nil {
		return s, err
	}
	s.Reservations, err = c.Reservations(ctx)
	return s, err
}

// Reservations reads `scontrol show reservation`.
func (c *Client) Reservations(ctx context.Context) ([]Reservation, error) {
	out, err := c.output(ctx, "scontrol", "show", "reservation")
	if err != nil {
		return nil, err
	}
	return ParseReservations(bytes.NewReader(out), c.loc())
}

// Nodes reads sinfo --json: the nodes in Slurm's order.
func (c *Client) Nodes(ctx context.Context) ([]Node, error) {
	out, err := c.output(ctx, "sinfo", "--json")
	if err != nil {
		return nil, err
	}
	return ParseSinfoJSON(bytes.NewReader(out))
}

// Location is the zone the clients print and read times in.
func (c *Client) Location() *time.Location { return c.loc() }
