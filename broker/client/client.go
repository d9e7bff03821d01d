package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"lookahead/forecast"
	"lookahead/wire"
)

// ErrUnavailable wraps failures to reach the broker (no responders,
// timeouts), so the CLI can exit with its "unavailable" code.
var ErrUnavailable = errors.New("broker unavailable")

// ErrBadConnection wraps connection settings that cannot work (a bad
// URL, two ways to authenticate, a bad JetStream domain): the CLI exits
// with its "invalid input" code.
var ErrBadConnection = errors.New("bad NATS connection settings")

// NoBroker says that no broker answers on the NATS server at url and how
// to start one: what a user sees instead of "nats: no responders".
func NoBroker(url string) string {
	return fmt.Sprintf("no broker answers on the NATS server %s: start one (`systemctl start lookahead-broker`, "+
		"or `lookahead-broker run` for a try; docs/quickstart.md), or check --nats-url and that this is the grid's server; "+
		"during a failover the standby answers within the lease TTL", url)
}

// Client talks to the broker over one NATS connection.
type Client struct {
	nc *nats.Conn
	// User is the NATS user this client authenticated as; when set,
	// submit and cancel go to the subject that carries it, so the broker
	// knows who asks.
	User string
	// Timeout bounds each request (default 10 s).
	Timeout time.Duration
	// Attempts is how often a submission is sent before giving up (default 3).
	Attempts int
	// JSDomain is the grid's JetStream domain, for what the client reads
	// from JetStream itself (the audit trail); empty: the server's own.
	JSDomain string
}

// New wraps a connection.
func New(nc *nats.Conn, user string) *Client {
	return &Client{nc: nc, User: user, Timeout: 10 * time.Second, Attempts: 3}
}

// Conn is the client's NATS connection.
func (c *Client) Conn() *nats.Conn { return c.nc }

func (c *Client) request(ctx context.Context, subject string, v, out any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode request to %s: %w", subject, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	msg, err := c.nc.RequestWithContext(ctx, subject, data)
	if err != nil {
		if errors.Is(err, nats.ErrNoResponders) {
			return fmt.Errorf("%w: %s", ErrUnavailable, NoBroker(c.nc.ConnectedUrlRedacted()))
		}
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
			return fmt.Errorf("%w: %s: no answer within %v: %v (a broker taking over answers within its lease TTL; retry)", ErrUnavailable, subject, c.Timeout, err)
		}
		return fmt.Errorf("request %s: %w", subject, err)
	}
	if err := json.Unmarshal(msg.Data, out); err != nil {
		return fmt.Errorf("reply from %s: %w", subject, err)
	}
	return nil
}

func (c *Client) userSubject(verb string) string {
	if c.User != "" {
		return wire.BrokerUserSubject(verb, c.User)
	}
	return wire.BrokerSubject(verb)
}

// NewRequestID returns a random id for a submission.
func NewRequestID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Submit sends a job; on a timeout it retries with the same request id, so
// the broker creates the job once. A refusal is a reply with its Code, not
// an error.
func (c *Client) Submit(ctx context.Context, job forecast.JobRequest, requestID string) (wire.SubmitReply, error) {
	return c.SubmitScript(ctx, job, nil, requestID)
}

// SubmitScript is Submit with a script: the broker then dispatches the
// job's parts into its reservations itself (see docs/dispatch.md).
func (c *Client) SubmitScript(ctx context.Context, job forecast.JobRequest, script []byte, requestID string) (wire.SubmitReply, error) {
	if requestID == "" {
		requestID = NewRequestID()
	}
	req := wire.SubmitRequest{Type: wire.TypeSubmit, RequestID: requestID, Job: job, Script: script}
	var reply wire.SubmitReply
	var err error
	for i := 0; i < max(1, c.Attempts); i++ {
		if err = c.request(ctx, c.userSubject(wire.VerbSubmit), req, &reply); err == nil || !errors.Is(err, ErrUnavailable) || ctx.Err() != nil {
			break
		}
	}
	return reply, err
}

// Cancel cancels a job.
func (c *Client) Cancel(ctx context.Context, id string) (wire.CancelReply, error) {
	var reply wire.CancelReply
	err := c.request(ctx, c.userSubject(wire.VerbCancel), wire.CancelRequest{Type: wire.TypeCancel, Job: id}, &reply)
	return reply, err
}

// Status reports one job (id set) or the queue (all: with ended jobs), as
// the broker lets this client's NATS user see it (its own jobs, or all for
// an operator). The broker answers in pages that each fit in one NATS
// message; Status asks for every page and returns them as one reply.
func (c *Client) Status(ctx context.Context, id string, all bool) (wire.StatusReply, error) {
	req := wire.StatusRequest{Type: wire.TypeStatus, Job: id, All: all}
	var out wire.StatusReply
	for page := 0; ; page++ {
		var reply wire.StatusReply
		if err := c.request(ctx, c.userSubject(wire.VerbStatus), req, &reply); err != nil {
			return out, err
		}
		switch {
		case page == 0:
			out = reply
		case reply.Code != wire.CodeOK:
			return out, fmt.Errorf("status page %d: %s %s", page+1, reply.Code, reply.Message)
		default:
			out.Jobs = append(out.Jobs, reply.Jobs...)
		}
		if reply.Code != wire.CodeOK || reply.Next <= req.After {
			out.Next = 0
			return out, nil
		}
		req.After = reply.Next
	}
}

// Plan is the broker's last plan, whole: a plan too big for one message
// comes in pages (wire.Plan.Next), asked for one after the other. When
// the broker plans again while the pages are read, they are read again
// from the start (planAttempts times at most), so the plan returned is
// one cycle's.
func (c *Client) Plan(ctx context.Context) (wire.Plan, error) {
	var cycles []uint64
	for range planAttempts {
		p, changed, err := c.planPages(ctx)
		if err != nil || !changed {
			return p, err
		}
		cycles = append(cycles, p.Cycle)
	}
	return wire.Plan{}, fmt.Errorf("the broker planned again while its plan was read, %d times (cycles %v): try again", planAttempts, cycles)
}

// planAttempts is how many times Plan reads a paged plan before it gives
// up on a broker that plans faster than the pages come.
const planAttempts = 3

// planPages reads every page of the last plan; changed reports that a
// later page came from another cycle than the first.
func (c *Client) planPages(ctx context.Context) (out wire.Plan, changed bool, err error) {
	req := wire.PlanRequest{Type: wire.TypePlan}
	for page := 0; ; page++ {
		var reply wire.Plan
		if err := c.request(ctx, wire.BrokerSubject(wire.VerbPlan), req, &reply); err != nil {
			return out, false, err
		}
		if reply.Code != "" && reply.Code != wire.CodeOK {
			return out, false, fmt.Errorf("plan page %d: %s %s", page+1, reply.Code, reply.Message)
		}
		switch {
		case page == 0:
			out = reply
		case reply.Cycle != out.Cycle:
			return reply, true, nil
		default:
			out.Allocations = append(out.Allocations, reply.Allocations...)
		}
		if reply.Next <= req.After {
			out.Next = 0
			return out, false, nil
		}
		req.After = reply.Next
	}
}

// Sites reports every site the broker knows.
func (c *Client) Sites(ctx context.Context) (wire.SitesReply, error) {
	var reply wire.SitesReply
	err := c.request(ctx, wire.BrokerSubject(wire.VerbSites), struct {
		Type string `json:"type"`
	}{wire.TypeSites}, &reply)
	return reply, err
}

// Audit asks the broker to compare its records with every site's real
// reservations; repair fixes what it can.
func (c *Client) Audit(ctx context.Context, repair bool) (wire.AuditReport, error) {
	var reply wire.AuditReport
	saved := c.Timeout
	// An audit asks every site (up to the broker's reserve_timeout, 30 s
	// packaged) and may then repair: waiting only 3 × 10 s, the client gave
	// up as the broker answered "no answer: <site>" (seen live).
	c.Timeout = max(6*saved, 2*time.Minute)
	defer func() { c.Timeout = saved }()
	err := c.request(ctx, wire.BrokerSubject(wire.VerbAudit), wire.AuditRequest{Type: wire.TypeAuditReq, Repair: repair}, &reply)
	return reply, err
}
