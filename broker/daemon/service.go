package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"lookahead/broker"
	"lookahead/forecast"
	"lookahead/internal/version"
	"lookahead/wire"
)

// serve registers the broker's micro service. Submit and cancel are served
// both on the plain verb subject (actor unknown: allowed only without an
// identity map) and on verb.<nats-user>, whose last token the NATS server's
// permissions make trustworthy.
func (b *Broker) serve() (micro.Service, error) {
	svc, err := micro.AddService(b.nc, micro.Config{
		Name: wire.BrokerServiceName, Version: version.Service(),
		Description: "lookahead broker: grid queue, plan, sites, audit",
	})
	if err != nil {
		return nil, fmt.Errorf("broker service: %w", err)
	}
	eps := []struct {
		name, subject string
		h             micro.HandlerFunc
	}{
		{"submit", wire.BrokerSubject(wire.VerbSubmit), b.onSubmit},
		{"submit-as", wire.BrokerUserSubject(wire.VerbSubmit, "*"), b.onSubmit},
		{"cancel", wire.BrokerSubject(wire.VerbCancel), b.onCancel},
		{"cancel-as", wire.BrokerUserSubject(wire.VerbCancel, "*"), b.onCancel},
		{"status", wire.BrokerSubject(wire.VerbStatus), b.onStatus},
		{"status-as", wire.BrokerUserSubject(wire.VerbStatus, "*"), b.onStatus},
		{"plan", wire.BrokerSubject(wire.VerbPlan), b.onPlan},
		{"sites", wire.BrokerSubject(wire.VerbSites), b.onSites},
		{"audit", wire.BrokerSubject(wire.VerbAudit), b.onAudit},
	}
	for _, ep := range eps {
		if err := svc.AddEndpoint(ep.name, ep.h, micro.WithEndpointSubject(ep.subject)); err != nil {
			svc.Stop()
			return nil, fmt.Errorf("broker endpoint %s: %w", ep.name, err)
		}
	}
	return svc, nil
}

// actor is the NATS user a request came from: the subject's token after
// the verb, empty on the plain subject.
func actor(subject, verb string) string {
	prefix := wire.BrokerSubject(verb) + "."
	if strings.HasPrefix(subject, prefix) {
		return strings.TrimPrefix(subject, prefix)
	}
	return ""
}

func respond(req micro.Request, v any) {
	if err := req.RespondJSON(v); err != nil {
		req.Error("500", "respond: "+err.Error(), nil)
	}
}

// decodeRequest reads a request strictly (unknown fields, a wrong type or
// trailing data are refused) and returns why it is refused, clipped.
func decodeRequest(data []byte, v any, typ func() string, want string) string {
	if err := wire.DecodeStrict(data, v); err != nil {
		return wire.Clip("decode request: "+err.Error(), maxMessage)
	}
	if t := typ(); t != "" && t != want {
		return fmt.Sprintf("request type %q, want %q", wire.Clip(t, 64), want)
	}
	return ""
}

// maxMessage bounds a refusal's message: nothing a client sent is echoed
// back at length.
const maxMessage = 500

func (b *Broker) onSubmit(req micro.Request) {
	var sr wire.SubmitRequest
	if msg := decodeRequest(req.Data(), &sr, func() string { return sr.Type }, wire.TypeSubmit); msg != "" {
		b.cfg.Metrics.Submission(wire.CodeInvalid)
		respond(req, wire.SubmitReply{Type: wire.TypeSubmitReply, Code: wire.CodeInvalid, Message: msg})
		return
	}
	ctx, cancel := b.requestContext(handlerTimeout)
	defer cancel()
	respond(req, b.Submit(ctx, actor(req.Subject(), wire.VerbSubmit), sr))
}

// handlerTimeout bounds what one request handler may wait for the job
// stream (its JetStream appends).
const handlerTimeout = 10 * time.Second

// requestContext is a request handler's context: micro requests carry
// none, so it is the handler's own deadline.
func (b *Broker) requestContext(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

// Submit admits one job for actor: validated, checked against identity
// and budget, and appended durably before the reply. Safe for concurrent
// use: submissions and cancels are decided one at a time, on a state with
// every appended event applied (lockToWrite), and b.mu is not held while
// the event is appended (record).
func (b *Broker) Submit(ctx context.Context, actor string, sr wire.SubmitRequest) wire.SubmitReply {
	b.reqWrite.Lock()
	defer b.reqWrite.Unlock()
	b.lockToWrite()
	p := b.cfg.Policy
	p.Grid = b.capacity.Of(maps.Values(b.sites)) // a job no known site set could hold is refused
	e, reply := broker.Admit(b.state, p, actor, sr, b.now())
	if e.Kind != "" {
		if err := b.record(ctx, e); err != nil {
			reply = wire.SubmitReply{Type: wire.TypeSubmitReply, Code: wire.CodeInternal, Message: err.Error()}
		}
	}
	b.mu.Unlock()
	reply.Message = wire.Clip(reply.Message, maxMessage)
	b.cfg.Metrics.Submission(reply.Code)
	if e.Kind != "" && reply.Code == wire.CodeOK {
		b.log.Info().Str("job", reply.Job).Str("actor", actor).Int("procs", e.Request.Procs).Msg("submitted")
		b.kick()
	} else if reply.Code != wire.CodeOK {
		b.log.Info().Str("actor", wire.Clip(actor, 64)).Str("code", reply.Code).Str("why", reply.Message).Msg("submission refused")
	}
	return reply
}

func (b *Broker) onCancel(req micro.Request) {
	var cr wire.CancelRequest
	if msg := decodeRequest(req.Data(), &cr, func() string { return cr.Type }, wire.TypeCancel); msg != "" {
		respond(req, wire.CancelReply{Type: wire.TypeCancelReply, Code: wire.CodeInvalid, Message: msg})
		return
	}
	ctx, cancel := b.requestContext(handlerTimeout)
	defer cancel()
	respond(req, b.Cancel(ctx, actor(req.Subject(), wire.VerbCancel), cr.Job))
}

// Cancel cancels job id for actor. A reserved job's reservations are
// owed a release, sent by the next cycle (debounced, so within about a
// second) and retried until the sites confirm.
func (b *Broker) Cancel(ctx context.Context, actor, id string) wire.CancelReply {
	if !forecast.IsPlainName(id) {
		return wire.CancelReply{Type: wire.TypeCancelReply, Code: wire.CodeInvalid, Job: wire.Clip(id, 64), Message: "job id must be a plain name"}
	}
	b.reqWrite.Lock()
	defer b.reqWrite.Unlock()
	b.lockToWrite()
	e, reply := broker.DecideCancel(b.state, b.cfg.Policy, actor, id, b.now())
	if e.Kind != "" {
		if err := b.record(ctx, e); err != nil {
			reply = wire.CancelReply{Type: wire.TypeCancelReply, Code: wire.CodeInternal, Job: id, Message: err.Error()}
		}
	}
	b.mu.Unlock()
	if e.Kind != "" && reply.Code == wire.CodeOK {
		b.audit(ctx, wire.AuditRecord{Action: "cancel", Job: id, Actor: actor, Code: wire.CodeOK, Message: reply.Message})
		if len(e.Release) > 0 {
			b.audit(ctx, wire.AuditRecord{Action: "refund", Job: id, Code: wire.CodeOK, Message: reply.Message})
			b.kick() // the next cycle (debounced) sends the releases
		}
	}
	return reply
}

func (b *Broker) onStatus(req micro.Request) {
	var sr wire.StatusRequest
	if len(req.Data()) > 0 {
		if msg := decodeRequest(req.Data(), &sr, func() string { return sr.Type }, wire.TypeStatus); msg != "" {
			respond(req, wire.StatusReply{Type: wire.TypeStatusReply, Code: wire.CodeInvalid, Message: msg, Jobs: []wire.JobStatus{}})
			return
		}
	}
	v, refusal := b.viewer(req)
	if refusal != "" {
		respond(req, wire.StatusReply{Type: wire.TypeStatusReply, Code: wire.CodeForbidden, Message: refusal, Jobs: []wire.JobStatus{}})
		return
	}
	reply, encoded := b.status(v, sr)
	data, err := encodeStatus(reply, encoded)
	if err != nil {
		req.Error("500", "encode status: "+err.Error(), nil)
		return
	}
	req.Respond(data)
}

// statusWire is wire.StatusReply with its jobs already encoded
// (TestStatusWireMatchesStatusReply keeps the two in step).
type statusWire struct {
	Type    string            `json:"type"`
	Code    string            `json:"code"`
	Message string            `json:"message,omitempty"`
	Now     int64             `json:"now"`
	Jobs    []json.RawMessage `json:"jobs"`
	Next    uint64            `json:"next,omitempty"`
	Leader  *wire.Leadership  `json:"leader,omitempty"`
}

func encodeStatus(r wire.StatusReply, jobs []json.RawMessage) ([]byte, error) {
	return json.Marshal(statusWire{Type: r.Type, Code: r.Code, Message: r.Message, Now: r.Now, Jobs: jobs, Next: r.Next, Leader: r.Leader})
}

// viewer is who asks for the status: the NATS user of status.<user> (the
// server's permissions bind that token), or on the plain subject whoever
// the server lets publish there — an operator, unless the request crossed
// from another account (a service import stamps it with
// Nats-Request-Info), where identities are configured.
func (b *Broker) viewer(req micro.Request) (broker.Viewer, string) {
	p := b.cfg.Policy
	if a := actor(req.Subject(), wire.VerbStatus); a != "" {
		return broker.ViewerFor(p, a), ""
	}
	if p.Identities != nil && req.Headers().Get(requestInfoHeader) != "" {
		return broker.Viewer{}, "ask on lookahead.broker.status.<your NATS user>: the plain status subject is for operators"
	}
	return broker.Viewer{All: true}, ""
}

// requestInfoHeader is set by the NATS server on requests that come
// through a service import with share: true.
const requestInfoHeader = "Nats-Request-Info"

// Status reports one job or the whole queue (every page) as an operator
// sees it, for in-process callers (the demo, tests).
func (b *Broker) Status(sr wire.StatusRequest) wire.StatusReply {
	all := broker.Viewer{All: true}
	out := b.StatusAs(all, sr)
	for next := out.Next; next != 0; {
		sr.After = next
		page := b.StatusAs(all, sr)
		out.Jobs, next = append(out.Jobs, page.Jobs...), page.Next
	}
	out.Next = 0
	return out
}

// StatusAs reports one job or a page of the queue, as viewer v may see it.
// A page fits in one NATS message (see broker.State.Status).
func (b *Broker) StatusAs(v broker.Viewer, sr wire.StatusRequest) wire.StatusReply {
	reply, _ := b.status(v, sr)
	return reply
}

func (b *Broker) status(v broker.Viewer, sr wire.StatusRequest) (wire.StatusReply, []json.RawMessage) {
	why := ""
	if sr.Job != "" {
		why = b.explainNoFit(sr.Job) // outside mu: it searches the forecasts
	} else if sr.After == 0 {
		b.explainUnplaced() // once per listing, not per page: each explanation searches the forecasts
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	planned := func(id string) *broker.Planned {
		pl := b.plannedFor(id)
		if id == sr.Job {
			explained(pl.Allocation(), why)
		} else if a := pl.Allocation(); a != nil && a.Error != "" {
			explained(a, b.whys[id]) // a job that did not fit: why, when explainUnplaced got to it
		}
		return pl
	}
	reply, jobs := b.state.StatusEncoded(b.cfg.Policy, v, sr, planned, broker.Page{Bytes: b.pageBytes()}, b.now())
	reply.Leader = b.Leadership()
	return reply, jobs
}

// plannedFor is what the last cycle says of job id: its allocation and
// its place in the cycle's queue order; nil when the cycle planned
// nothing for it. Under mu. Status and the web view both read it.
func (b *Broker) plannedFor(id string) *broker.Planned {
	a, ok := b.planned[id]
	if !ok {
		return nil
	}
	return &broker.Planned{Alloc: a, Queue: wire.QueuePlace{Position: b.queuePos[id] + 1, Of: len(b.plan.Allocations), Order: b.order()}}
}

// order is the queue order the broker plans in (Config.Queue's).
func (b *Broker) order() string { return b.cfg.Queue.Order() }

// pageBytes is how much of a status reply its jobs may take: the server's
// max_payload less room for the envelope.
func (b *Broker) pageBytes() int { return statusPageBytes(b.nc.MaxPayload()) }

// statusPageBytes leaves 64 KiB of maxPayload for a status reply's
// envelope, or a quarter of a smaller one: under 128 KiB a floor of
// 64 KiB for the jobs made pages bigger than the server takes, and the
// reply was dropped (lookahead status timed out).
func statusPageBytes(maxPayload int64) int {
	return int(maxPayload - min(64<<10, maxPayload/4))
}

// Plan is the last cycle's plan.
func (b *Broker) Plan() wire.Plan {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.plan
	p.Type, p.Order = wire.TypePlan, b.order()
	if p.Allocations == nil {
		p.Allocations = []forecast.Allocation{}
	}
	return p
}

func (b *Broker) onSites(req micro.Request) { respond(req, b.Sites()) }

// Sites summarises every site the broker has heard of.
func (b *Broker) Sites() wire.SitesReply {
	b.mu.Lock()
	defer b.mu.Unlock()
	now, ttl := b.now(), int64(b.cfg.ForecastTTL.Seconds())
	return wire.SitesReply{Type: wire.TypeSitesReply, Code: wire.CodeOK, Now: now, TTL: ttl,
		Sites: broker.SiteStatuses(b.siteList(), now, ttl), Leader: b.Leadership()}
}

func (b *Broker) onAudit(req micro.Request) {
	var ar wire.AuditRequest
	if len(req.Data()) > 0 {
		if msg := decodeRequest(req.Data(), &ar, func() string { return ar.Type }, wire.TypeAuditReq); msg != "" {
			respond(req, wire.AuditReport{Type: wire.TypeAuditReport, Code: wire.CodeInvalid, Message: msg, Findings: []wire.AuditFinding{}})
			return
		}
	}
	// every site is asked (list, and with repair release or reserve)
	ctx, cancel := b.requestContext(handlerTimeout + 3*b.cfg.ReserveTimeout)
	defer cancel()
	respond(req, b.Audit(ctx, ar.Repair))
}

// subscribe follows job events from the sites and heartbeats.
func (b *Broker) subscribe() ([]*nats.Subscription, error) {
	ev, err := b.nc.Subscribe(wire.JobEventSubjects, b.onJobEvent)
	if err != nil {
		return nil, fmt.Errorf("subscribe %s: %w", wire.JobEventSubjects, err)
	}
	hb, err := b.nc.Subscribe(wire.ForecastSubjects, b.onForecastMsg)
	if err != nil {
		ev.Unsubscribe()
		return nil, fmt.Errorf("subscribe %s: %w", wire.ForecastSubjects, err)
	}
	return []*nats.Subscription{ev, hb}, nil
}

// onJobEvent applies what a site saw of a grid job (started, finished,
// failed) to a reserved or running job that has a part there. The site
// and the job are the subject's (lookahead.jobevent.<site>.<job>: the
// server's permissions bind the site token to the site's agent); a body
// that names another site or job is refused.
func (b *Broker) onJobEvent(m *nats.Msg) {
	code, msg := b.takeJobEvent(m)
	if m.Reply == "" {
		return // a plain publish (an agent before acknowledged events)
	}
	if data, err := json.Marshal(wire.JobEventAck{Type: wire.TypeJobEventAck, Code: code, Message: msg}); err == nil {
		m.Respond(data)
	}
}

// takeJobEvent applies a site's job event and says what became of it:
// CodeOK recorded, or nothing to record (a duplicate, a job it does not
// know or a site not in the job: the site need not send it again);
// CodeInternal not recorded now (the site sends it again); CodeInvalid
// refused.
func (b *Broker) takeJobEvent(m *nats.Msg) (string, string) {
	site, job, err := jobEventFrom(m.Subject, m.Data)
	if err != nil {
		b.badEvents.Add(1)
		b.log.Warn().Err(err).Str("subject", wire.Clip(m.Subject, 128)).Msg("job event refused")
		return wire.CodeInvalid, wire.Clip(err.Error(), 200)
	}
	ctx, cancel := b.requestContext(handlerTimeout)
	defer cancel()
	defer b.flushAudits(ctx)
	b.lockToWrite()
	defer b.mu.Unlock()
	j := b.state.Job(job.Job)
	if j == nil || !hasSite(j, site) {
		b.ignoredEvent(site, job, j == nil)
		return wire.CodeOK, "ignored"
	}
	e, ok := siteEvent(j, site, job, b.now())
	if !ok {
		return wire.CodeOK, "nothing to record"
	}
	if err := b.record(ctx, e); err != nil {
		b.log.Error().Err(err).Msg("job event not recorded")
		return wire.CodeInternal, "not recorded: " + wire.Clip(err.Error(), 200)
	}
	if j.Dispatched() {
		b.logPart(j, site)
		b.concludeLocked(ctx, job.Job)
	}
	return wire.CodeOK, "recorded"
}

// jobEventFrom reads a job event and checks it against its subject.
func jobEventFrom(subject string, data []byte) (string, wire.JobEvent, error) {
	var je wire.JobEvent
	tok := strings.Split(subject, ".")
	if len(tok) != 4 || !forecast.IsPlainName(tok[2]) || !forecast.IsPlainName(tok[3]) {
		return "", je, fmt.Errorf("subject is not lookahead.jobevent.<site>.<job>")
	}
	site := tok[2]
	if err := wire.DecodeStrict(data, &je); err != nil {
		return "", je, fmt.Errorf("decode: %w", err)
	}
	switch {
	case je.Type != "" && je.Type != wire.TypeJobEvent:
		return "", je, fmt.Errorf("type %q, want %q", wire.Clip(je.Type, 64), wire.TypeJobEvent)
	case je.Site != "" && je.Site != site:
		return "", je, fmt.Errorf("published by site %s but names site %q", site, wire.Clip(je.Site, 64))
	case je.Job != tok[3]:
		return "", je, fmt.Errorf("subject names job %s, body %q", tok[3], wire.Clip(je.Job, 64))
	}
	switch je.State {
	case broker.SiteStarted, broker.SiteFinished, broker.SiteFailed, broker.SiteLost, broker.SiteForeign, broker.SiteRebound:
	default:
		return "", je, fmt.Errorf("unknown state %q", wire.Clip(je.State, 32))
	}
	for _, r := range je.Reservations {
		if je.State != broker.SiteRebound || r.Job != je.Job || (r.Site != "" && r.Site != site) {
			return "", je, fmt.Errorf("a %s event carries reservation %q of job %q on site %q: only a rebound one of its own job and site may",
				wire.Clip(je.State, 32), wire.Clip(r.ID, 64), wire.Clip(r.Job, 64), wire.Clip(r.Site, 64))
		}
	}
	return site, je, nil
}

func hasSite(j *broker.Job, site string) bool {
	if j.Alloc == nil {
		return false
	}
	for _, s := range j.Alloc.Sites() {
		if s == site {
			return true
		}
	}
	return false
}
