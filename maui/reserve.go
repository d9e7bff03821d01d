package maui

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"lookahead/forecast"
)

// ClientConfig configures the reservation client.
type ClientConfig struct {
	// Prefix starts every reservation name lookahead creates; the name is
	// Prefix + grid job id, and Maui appends ".N". List and Release only
	// ever touch reservations whose name has this prefix. Default "la.".
	Prefix string
	// Relative makes setres times relative ("+HH:MM:SS" from the command's
	// own clock). Required against a Maui in SIMULATION mode, which shifts
	// absolute times; otherwise absolute times are sent.
	Relative bool
	// Location is the Maui host's time zone: setres' absolute times are
	// written, and showres' stamps read, in it. Default time.Local.
	Location *time.Location
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Tolerance is how far showres' start may differ from the request's
	// before a reservation is judged wrong (default 120 s; relative
	// times are taken when the command runs).
	Tolerance time.Duration
	// Capacity, when set, is the processors per node; Reserve then refuses
	// requests above a node's capacity and requests overlapping what user
	// reservations and running jobs already hold (Maui 3.3.1 accepts an
	// overlapping reservation on an explicitly named node).
	Capacity map[string]int
}

// Client creates, lists and releases Maui advance reservations for grid
// jobs. It is safe for concurrent use when its Runner is, but two Reserve
// calls for the same job must not race (the agent serialises per job).
type Client struct {
	r   Runner
	cfg ClientConfig
}

// NewClient returns a reservation client running Maui commands through r.
func NewClient(r Runner, cfg ClientConfig) *Client {
	if cfg.Prefix == "" {
		cfg.Prefix = "la."
	}
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Tolerance <= 0 {
		cfg.Tolerance = 120 * time.Second
	}
	return &Client{r: r, cfg: cfg}
}

// ReserveRequest asks for Hosts (processors per named node) over
// [Start, End) for grid job Job, usable only by the job's parts: jobs of
// User (and Group, when given) charged to the binding account Reserve
// picks (see reserve_bind.go). Account is the identity's own account,
// recorded in the ACL but not what admits a job. InUse lists accounts the
// site's local jobs use; a binding account is never one of them.
type ReserveRequest struct {
	Job     string
	Start   int64
	End     int64
	Hosts   []forecast.HostProcs
	User    string
	Group   string
	Account string
	InUse   []string
	// Bind, when set, is the binding account to use: a repair keeps the
	// one the job's parts were told. It must be a pool account that no
	// other grid job's reservation is bound to.
	Bind string
}

// Reservation is a grid job's hold on one site: one or more Maui
// reservations (IDs, full names with ".N") over [Start, End). User, Group
// and Account are the identity; Bind the binding account its parts must
// be charged to (empty for reservations made before binding existed).
// Qsub is QsubArgs: what the grid job's part must be submitted with.
type Reservation struct {
	Job     string               `json:"job"`
	IDs     []string             `json:"ids"`
	Start   int64                `json:"start"`
	End     int64                `json:"end"`
	Hosts   []forecast.HostProcs `json:"hosts"`
	User    string               `json:"user,omitempty"`
	Group   string               `json:"group,omitempty"`
	Account string               `json:"account,omitempty"`
	Bind    string               `json:"bind,omitempty"`
	Qsub    []string             `json:"qsub"`
}

// QsubString is Qsub joined by spaces, e.g.
// "-A la.acct0 -W x=FLAGS:ADVRES:la.g17.0".
func (r Reservation) QsubString() string { return strings.Join(r.Qsub, " ") }

// BaseName is the setres -n name of a grid job's reservations.
func (c *Client) BaseName(job string) string { return c.cfg.Prefix + job }

// JobOf returns the grid job a reservation id belongs to, false when the
// id is not one of lookahead's ("<prefix><job>.<N>").
func (c *Client) JobOf(id string) (string, bool) {
	rest, ok := strings.CutPrefix(id, c.cfg.Prefix)
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(rest, '.')
	if i <= 0 || !isDigits(rest[i+1:]) {
		return "", false
	}
	return rest[:i], true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Validate checks a request before anything runs; a bad request is a
// Refusal with a stable code.
func (c *Client) Validate(req ReserveRequest) error {
	if !forecast.IsPlainName(req.Job) || !forecast.IsPlainName(c.BaseName(req.Job)) {
		return refuse(CodeBadIdentity, "job id %q is not a plain name", req.Job)
	}
	if req.User == "" && req.Group == "" && req.Account == "" {
		return refuse(CodeBadIdentity, "job %s: no ACL identity (user, group or account)", req.Job)
	}
	for _, id := range []struct{ what, v string }{{"user", req.User}, {"group", req.Group}, {"account", req.Account}} {
		if id.v != "" && !forecast.IsPlainName(id.v) {
			return refuse(CodeBadIdentity, "job %s: %s %q is not a plain name", req.Job, id.what, id.v)
		}
	}
	now := c.cfg.Now().Unix()
	switch {
	case req.End <= req.Start:
		return refuse(CodeBadTime, "job %s: end %d not after start %d", req.Job, req.End, req.Start)
	case req.End <= now:
		return refuse(CodeBadTime, "job %s: end %d is in the past (now %d)", req.Job, req.End, now)
	case req.Start < now-int64(c.cfg.Tolerance/time.Second):
		return refuse(CodeBadTime, "job %s: start %d is in the past (now %d)", req.Job, req.Start, now)
	}
	return c.validateHosts(req)
}

func (c *Client) validateHosts(req ReserveRequest) error {
	if len(req.Hosts) == 0 {
		return refuse(CodeBadCount, "job %s: no hosts", req.Job)
	}
	seen := map[string]bool{}
	for _, h := range req.Hosts {
		switch {
		case !forecast.IsPlainName(h.Node):
			return refuse(CodeBadIdentity, "job %s: node %q is not a plain name", req.Job, h.Node)
		case h.Procs <= 0:
			return refuse(CodeBadCount, "job %s: node %s: procs %d, must be > 0", req.Job, h.Node, h.Procs)
		case seen[strings.ToLower(h.Node)]:
			return refuse(CodeBadCount, "job %s: node %s named twice", req.Job, h.Node)
		}
		seen[strings.ToLower(h.Node)] = true
		if c.cfg.Capacity != nil {
			if cp, ok := c.cfg.Capacity[h.Node]; !ok {
				return refuse(CodeUnknownNode, "job %s: node %s is not in the site's node list", req.Job, h.Node)
			} else if h.Procs > cp {
				return refuse(CodeBadCount, "job %s: node %s: %d procs exceed its %d", req.Job, h.Node, h.Procs, cp)
			}
		}
	}
	return nil
}

// setresCall is one setres invocation: the nodes that get Procs each.
type setresCall struct {
	procs int
	nodes []string
}

// maxPattern bounds one setres node expression (Maui copies it into a
// fixed buffer).
const maxPattern = 800

// plan groups the request's nodes by processor count: one setres per
// group (a host-expression reservation gives each node one task of
// -r PROCS=k), split further when the expression would get too long.
func plan(hosts []forecast.HostProcs) []setresCall {
	by := map[int][]string{}
	for _, h := range hosts {
		by[h.Procs] = append(by[h.Procs], h.Node)
	}
	var procs []int
	for p := range by {
		procs = append(procs, p)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(procs)))
	var out []setresCall
	for _, p := range procs {
		nodes := by[p]
		sort.Strings(nodes)
		cur := setresCall{procs: p}
		size := 0
		for _, n := range nodes {
			if size+len(n)+4 > maxPattern && len(cur.nodes) > 0 {
				out = append(out, cur)
				cur, size = setresCall{procs: p}, 0
			}
			cur.nodes = append(cur.nodes, n)
			size += len(n) + 4
		}
		out = append(out, cur)
	}
	return out
}

// nodePattern is a POSIX ERE matching exactly these node names (Maui
// matches unanchored and case-insensitively).
func nodePattern(nodes []string) string {
	q := make([]string, len(nodes))
	for i, n := range nodes {
		q[i] = regexp.QuoteMeta(n)
	}
	return "^(" + strings.Join(q, "|") + ")$"
}

// setresArgs builds one setres argument vector. Inputs are validated plain
// names, so nothing here can be read as an option or a shell word.
func (c *Client) setresArgs(req ReserveRequest, bind string, call setresCall) []string {
	args := aclArgs(req, bind)
	args = append(args, "-n", c.BaseName(req.Job), "-s", c.timeArg(req.Start),
		"-d", FormatDuration(req.End-req.Start), "-r", fmt.Sprintf("PROCS=%d", call.procs),
		nodePattern(call.nodes))
	return args
}

// timeArg writes a setres start time: "+HH:MM:SS" from now in relative
// mode, else "HH:MM:SS_MM/DD/YYYY" in the Maui host's zone.
func (c *Client) timeArg(t int64) string {
	if c.cfg.Relative {
		return "+" + FormatDuration(max(0, t-c.cfg.Now().Unix()))
	}
	return time.Unix(t, 0).In(c.cfg.Location).Format("15:04:05_01/02/2006")
}

// classifySetres turns setres' complaint into a refusal code.
func classifySetres(stderr, stdout []byte) Code {
	s := string(stderr) + string(stdout)
	switch {
	case strings.Contains(s, "no matches found for node expression"), strings.Contains(s, "cannot determine nodelist"):
		return CodeUnknownNode
	case strings.Contains(s, "cannot select"), strings.Contains(s, "tasks available"):
		return CodeNoResources
	case strings.Contains(s, "invalid StartTime"), strings.Contains(s, "invalid timeframe"), strings.Contains(s, "Usage: setres"):
		return CodeBadTime
	}
	return CodeRefused
}

func trimmed(b []byte) string { return clip(bytes.TrimSpace(b)) }
