package torque

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"lookahead/forecast"
)

// QsubSpec is one job submission: everything that goes on qsub's command
// line, and the script that goes to its standard input.
type QsubSpec struct {
	// User is the local user the job runs as, submitted by a Torque
	// manager with `-P user` (see docs/dispatch.md for what the server
	// needs). Empty: the job runs as whoever runs qsub.
	User string
	// UID is the uid the agent's check resolved User to through the
	// system's NSS. qsub -P takes a name only (pbs_server and pbs_mom
	// resolve it through the same NSS); sbatch --uid takes this number
	// (agent.SbatchOf). Not written by QsubArgs.
	UID int
	// Name is the job name (-N): at most 256 printable characters, no
	// white space.
	Name string
	// Queue (-q), optional.
	Queue string
	// Server, optional: the pbs_server ("host" or "host:port") the job
	// goes to, as qsub's destination `-q [Queue]@Server`.
	Server string
	// Nodes are the processors per named node, exactly (-l
	// nodes=a:ppn=2+b:ppn=4).
	Nodes []forecast.HostProcs
	// Walltime in seconds (-l walltime=HH:MM:SS), > 0.
	Walltime int64
	// Bind are options that bind the job to its reservation, passed as
	// they are (the maui package's qsub options, e.g. "-A", "acct", "-W",
	// "x=FLAGS:ADVRES:la.g17.0").
	Bind []string
	// Output and Error are the stdout and stderr paths (-o, -e), absolute,
	// optionally prefixed with "host:".
	Output, Error string
	// Env is exported to the job (-v NAME=value,...), in order.
	Env []EnvVar
	// Script is the job script, given to qsub on standard input.
	Script []byte
}

// EnvVar is one variable of qsub -v. Torque splits -v on commas, so a
// value may not hold one (nor quotes or white space).
type EnvVar struct{ Name, Value string }

// ErrBadSpec is wrapped by QsubArgs when a submission cannot be written
// as a qsub command line.
var ErrBadSpec = errors.New("bad job submission")

// QsubArgs renders spec as qsub's argument vector (without "qsub"). The
// order is fixed: -P, -N, -q, -l nodes, -l walltime, the binding options,
// -o, -e, -v.
func QsubArgs(s QsubSpec) ([]string, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	var args []string
	if s.User != "" {
		args = append(args, "-P", s.User)
	}
	args = append(args, "-N", s.Name)
	if s.Queue != "" || s.Server != "" {
		dest := s.Queue
		if s.Server != "" {
			dest += "@" + s.Server
		}
		args = append(args, "-q", dest)
	}
	args = append(args, "-l", "nodes="+ExactNodes(s.Nodes), "-l", "walltime="+FormatDuration(s.Walltime))
	args = append(args, s.Bind...)
	if s.Output != "" {
		args = append(args, "-o", s.Output)
	}
	if s.Error != "" {
		args = append(args, "-e", s.Error)
	}
	if len(s.Env) > 0 {
		vars := make([]string, len(s.Env))
		for i, v := range s.Env {
			vars[i] = v.Name + "=" + v.Value
		}
		args = append(args, "-v", strings.Join(vars, ","))
	}
	return args, nil
}

func (s QsubSpec) check() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrBadSpec, fmt.Sprintf(format, a...))
	}
	switch {
	case s.User != "" && !forecast.IsPlainName(s.User):
		return bad("user %q is not a plain name", s.User)
	case s.User == "root":
		return bad("user root: Torque refuses jobs of root")
	case s.Name == "" || len(s.Name) > 256 || !printable(s.Name):
		return bad("job name %q: 1 to 256 printable characters without spaces", s.Name)
	case s.Queue != "" && !forecast.IsPlainName(s.Queue):
		return bad("queue %q is not a plain name", s.Queue)
	case s.Server != "" && !ValidServer(s.Server):
		return bad("server %q is not host or host:port", s.Server)
	case len(s.Nodes) == 0:
		return bad("no nodes")
	case s.Walltime <= 0:
		return bad("walltime %d s: must be > 0", s.Walltime)
	}
	for _, n := range s.Nodes {
		if !forecast.IsPlainName(n.Node) || n.Procs <= 0 {
			return bad("node %q × %d: a plain name and procs > 0", n.Node, n.Procs)
		}
	}
	for _, p := range []string{s.Output, s.Error} {
		if p != "" && (!printable(p) || !strings.Contains(p, "/") || strings.Contains(p, ",")) {
			return bad("output path %q: printable, no spaces or commas, absolute", p)
		}
	}
	for _, opt := range s.Bind {
		if opt == "" || !printable(opt) {
			return bad("binding option %q: printable, no spaces", opt)
		}
	}
	return checkEnv(s.Env)
}

func checkEnv(env []EnvVar) error {
	for _, v := range env {
		if !isEnvName(v.Name) {
			return fmt.Errorf("%w: variable name %q", ErrBadSpec, v.Name)
		}
		if !printable(v.Value) && v.Value != "" || strings.ContainsAny(v.Value, `,'"\`) {
			return fmt.Errorf("%w: variable %s=%q: no commas, quotes, backslashes or white space", ErrBadSpec, v.Name, v.Value)
		}
	}
	return nil
}

func isEnvName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// printable: non-empty, only graphic ASCII (no white space, no control).
func printable(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// ExactNodes is Torque's exact node request for hosts: "a:ppn=2+b:ppn=4".
func ExactNodes(hosts []forecast.HostProcs) string {
	parts := make([]string, len(hosts))
	for i, h := range hosts {
		parts[i] = h.Node + ":ppn=" + strconv.Itoa(h.Procs)
	}
	return strings.Join(parts, "+")
}

// FormatDuration writes seconds as Torque's HH:MM:SS (hours may exceed 99).
func FormatDuration(s int64) string {
	if s < 0 {
		s = 0
	}
	return fmt.Sprintf("%02d:%02d:%02d", s/3600, s%3600/60, s%60)
}

// ParseQsubID reads the job id qsub prints on success ("12.vm"): the last
// non-empty line of its standard output, which must look like a job id.
func ParseQsubID(stdout []byte) (string, error) {
	lines := strings.Split(strings.TrimSpace(string(stdout)), "\n")
	id := strings.TrimSpace(lines[len(lines)-1])
	if !looksLikeJobID(id) {
		return "", fmt.Errorf("qsub printed no job id: %q", clipBytes(bytes.TrimSpace(stdout)))
	}
	return id, nil
}

// looksLikeJobID: "<digits>[<index>].<server>" or "<digits>".
func looksLikeJobID(id string) bool {
	seq, _, _ := strings.Cut(id, ".")
	seq, _, _ = strings.Cut(seq, "[")
	return seq != "" && isDigits(seq) && printable(id)
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

func clipBytes(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// Args is QsubArgs(s).
func (s QsubSpec) Args() ([]string, error) { return QsubArgs(s) }

// ValidServer reports whether s is "host" or "host:port" with a plain
// host name and a decimal port.
func ValidServer(s string) bool {
	host, port, hasPort := strings.Cut(s, ":")
	if !hasPort {
		return forecast.IsPlainName(host)
	}
	n, err := strconv.Atoi(port)
	return forecast.IsPlainName(host) && err == nil && isDigits(port) && n > 0 && n <= 65535
}
