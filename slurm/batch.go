package slurm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"lookahead/internal/execx"
)

// SbatchSpec is one batch job to submit into a reservation.
type SbatchSpec struct {
	// User is the local user the job runs as, by name (never empty, never
	// root), and UID its uid as the agent's check resolved it: sbatch
	// --uid=<UID>, run as root, so the job runs as the uid that passed
	// the check, not as whatever the name resolves to later.
	User        string
	UID         int
	Name        string
	Reservation string
	Partition   string // optional
	// Nodes are the cores per named node the job asks for.
	Nodes []NodeCPUs
	// TimeLimit is rounded down to whole minutes (Slurm's unit), so the
	// job never outlives the time it was given: at least one minute.
	TimeLimit time.Duration
	Output    string
	Error     string
	Dir       string // working directory (--chdir), optional
	// Env is exported to the job, and nothing else of the submitter's
	// environment (--export=NAME=value,…; --export=NONE without).
	Env    []string
	Script []byte
}

// ErrBadSbatch is wrapped by SbatchArgs when a spec cannot be submitted.
var ErrBadSbatch = errors.New("bad batch job")

// SbatchArgs is sbatch's argument vector for spec (the script goes on its
// standard input). Pure.
func SbatchArgs(spec SbatchSpec) ([]string, error) {
	minutes := int64(spec.TimeLimit / time.Minute)
	switch {
	case spec.User == "" || spec.User == "root" || strings.ContainsAny(spec.User, " ,=\t\n") || spec.UID < 1:
		return nil, fmt.Errorf("%w: user %q (uid %d): a part runs as a named local user with its uid, never root", ErrBadSbatch, spec.User, spec.UID)
	case spec.Name == "" || spec.Reservation == "" || len(spec.Nodes) == 0:
		return nil, fmt.Errorf("%w: a name, a reservation and nodes are needed", ErrBadSbatch)
	case minutes < 1:
		return nil, fmt.Errorf("%w: time limit %v: Slurm counts whole minutes, at least one is needed", ErrBadSbatch, spec.TimeLimit)
	}
	names, total := make([]string, 0, len(spec.Nodes)), 0
	for _, n := range spec.Nodes {
		if n.CPUs < 1 || n.Node == "" {
			return nil, fmt.Errorf("%w: node %q with %d cores", ErrBadSbatch, n.Node, n.CPUs)
		}
		names, total = append(names, n.Node), total+n.CPUs
	}
	args := []string{"--parsable", "--uid=" + strconv.Itoa(spec.UID), "--job-name=" + spec.Name, "--reservation=" + spec.Reservation}
	if spec.Partition != "" {
		args = append(args, "--partition="+spec.Partition)
	}
	args = append(args, "--nodes="+strconv.Itoa(len(names)), "--nodelist="+strings.Join(names, ","), "--ntasks="+strconv.Itoa(total))
	if uniform(spec.Nodes) {
		args = append(args, "--ntasks-per-node="+strconv.Itoa(spec.Nodes[0].CPUs))
	}
	args = append(args, "--time="+strconv.FormatInt(minutes, 10), "--output="+spec.Output, "--error="+spec.Error)
	if spec.Dir != "" {
		args = append(args, "--chdir="+spec.Dir)
	}
	export := "NONE"
	if len(spec.Env) > 0 {
		for _, e := range spec.Env {
			if strings.ContainsAny(e, ",'\"") || !strings.Contains(e, "=") {
				return nil, fmt.Errorf("%w: variable %q: NAME=value without commas or quotes", ErrBadSbatch, e)
			}
		}
		export = strings.Join(spec.Env, ",")
	}
	return append(args, "--export="+export), nil
}

func uniform(ns []NodeCPUs) bool {
	return !slices.ContainsFunc(ns, func(n NodeCPUs) bool { return n.CPUs != ns[0].CPUs })
}

// CommandError is a Slurm client's refusal: its exit status and words.
type CommandError struct {
	Argv     []string
	ExitCode int
	Message  string
}

func (e *CommandError) Error() string {
	return fmt.Sprintf("%s: exit %d: %s", strings.Join(e.Argv, " "), e.ExitCode, e.Message)
}

// Submit runs sbatch (through the Runner's RunInput: the script on its
// standard input) and returns the job id and the argument vector run.
func (c *Client) Submit(ctx context.Context, spec SbatchSpec) (string, []string, error) {
	args, err := SbatchArgs(spec)
	argv := append([]string{"sbatch"}, args...)
	if err != nil {
		return "", argv, err
	}
	in, ok := c.Run.(execx.InputRunner)
	if !ok {
		return "", argv, fmt.Errorf("sbatch: the runner cannot give the script on standard input")
	}
	res, err := in.RunInput(ctx, spec.Script, "sbatch", args...)
	if err != nil {
		return "", argv, fmt.Errorf("sbatch: %w", err)
	}
	if res.ExitCode != 0 {
		return "", argv, &CommandError{Argv: argv, ExitCode: res.ExitCode, Message: message(res)}
	}
	id, _, _ := strings.Cut(strings.TrimSpace(string(res.Stdout)), ";") // --parsable: id[;cluster]
	if _, err := strconv.ParseInt(id, 10, 64); err != nil {
		return "", argv, fmt.Errorf("sbatch: job id %q: %w", id, err)
	}
	return id, argv, nil
}

// Jobs reads squeue --json (finished jobs included for as long as
// slurmctld keeps them: MinJobAge).
func (c *Client) Jobs(ctx context.Context) ([]Job, []string, error) {
	argv := []string{"squeue", "--json"}
	out, err := c.output(ctx, argv[0], argv[1:]...)
	if err != nil {
		return nil, argv, err
	}
	jobs, err := ParseSqueueJSON(strings.NewReader(string(out)))
	return jobs, argv, err
}

// Cancel runs scancel on a job. scancel says nothing, exit 0, also for a
// job id it does not know (testdata/scancel-unknown.txt).
func (c *Client) Cancel(ctx context.Context, id string) ([]string, error) {
	argv := []string{"scancel", id}
	_, err := c.output(ctx, argv[0], argv[1:]...)
	return argv, err
}
