package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"lookahead/broker"
	"lookahead/forecast"
	"lookahead/internal/cli"
	"lookahead/wire"
)

// serve registers the broker's micro service. Submit and cancel are served
// both on the plain verb subject (actor unknown: allowed only without an
// identity map) and on verb.<nats-user>, whose last token the NATS server's
// permissions make trustworthy.
func (b *Broker) serve() (micro.Service, error) {
	svc, err := micro.AddService(b.nc, micro.Config{
		Name: wire.BrokerServiceName, Version: serviceVersion(),
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

func serviceVersion() string {
	if v := cli.Version; v != "" && v != "dev" && !strings.ContainsAny(v, "+") {
		return strings.TrimPrefix(v, "v")
	}
	return "0.0.0"
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

func (b *Broker) onSubmit(req micro.Request) {
	var sr wire.SubmitRequest
	if err := json.Unmarshal(req.Data(), &sr); err != nil {
		respond(req, wire.SubmitReply{Type: wire.TypeSubmitReply, Code: wire.CodeInvalid, Message: "decode submit request: " + err.Error()})
		return
	}
	respond(req, b.Submit(context.Background(), actor(req.Subject(), wire.VerbSubmit), sr))
}

// Submit admits one job for actor: validated, checked against identity
// and budget, and appended durably before the reply. Safe for concurrent
// use.
func (b *Broker) Submit(ctx context.Context, actor string, sr wire.SubmitRequest) wire.SubmitReply {
	b.mu.Lock()
	e, reply := broker.Admit(b.state, b.cfg.Policy, actor, sr, b.now())
	if e.Kind != "" {
		if err := b.record(ctx, e); err != nil {
			reply = wire.SubmitReply{Type: wire.TypeSubmitReply, Code: wire.CodeInternal, Message: err.Error()}
		}
	}
	b.mu.Unlock()
	b.cfg.Metrics.Submission(reply.Code)
	if e.Kind != "" && reply.Code == wire.CodeOK {
		b.log.Info().Str("job", reply.Job).Str("actor", actor).Int("procs", e.Request.Procs).Msg("submitted")
		b.kick()
	} else if reply.Code != wire.CodeOK {
		b.log.Info().Str("actor", actor).Str("code", reply.Code).Str("why", reply.Message).Msg("submission refused")
	}
	return reply
}

func (b *Broker) onCancel(req micro.Request) {
	var cr wire.CancelRequest
	if err := json.Unmarshal(req.Data(), &cr); err != nil {
		respond(req, wire.CancelReply{Type: wire.TypeCancelReply, Code: wire.CodeInvalid, Message: "decode cancel request: " + err.Error()})
		return
	}
	respond(req, b.Cancel(context.Background(), actor(req.Subject(), wire.VerbCancel), cr.Job))
}

// Cancel cancels job id for actor. A reserved job's reservations are
// owed a release, sent by the next cycle (debounced, so within about a
// second) and retried until the sites confirm.
func (b *Broker) Cancel(ctx context.Context, actor, id string) wire.CancelReply {
	b.mu.Lock()
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
		if err := json.Unmarshal(req.Data(), &sr); err != nil {
			respond(req, wire.StatusReply{Type: wire.TypeStatusReply, Code: wire.CodeInvalid, Message: err.Error()})
			return
		}
	}
	respond(req, b.Status(sr))
}

// Status reports one job or the queue.
func (b *Broker) Status(sr wire.StatusRequest) wire.StatusReply {
	b.mu.Lock()
	defer b.mu.Unlock()
	reply := wire.StatusReply{Type: wire.TypeStatusReply, Code: wire.CodeOK, Now: b.now(), Jobs: []wire.JobStatus{}}
	for _, j := range b.state.Jobs() {
		if sr.Job != "" && j.Req.ID != sr.Job {
			continue
		}
		if sr.Job == "" && !sr.All && !j.Active() {
			continue
		}
		var plan *forecast.Allocation
		if a, ok := b.planned[j.Req.ID]; ok && j.State == wire.JobWaiting {
			plan = &a
		}
		reply.Jobs = append(reply.Jobs, j.Status(plan))
	}
	if sr.Job != "" && len(reply.Jobs) == 0 {
		reply.Code, reply.Message = wire.CodeNotFound, fmt.Sprintf("no job %q", sr.Job)
	}
	return reply
}

func (b *Broker) onPlan(req micro.Request) { respond(req, b.Plan()) }

// Plan is the last cycle's plan.
func (b *Broker) Plan() wire.Plan {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.plan
	p.Type = wire.TypePlan
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
		Sites: broker.SiteStatuses(b.siteList(), now, ttl)}
}

func (b *Broker) onAudit(req micro.Request) {
	var ar wire.AuditRequest
	if len(req.Data()) > 0 {
		if err := json.Unmarshal(req.Data(), &ar); err != nil {
			respond(req, wire.AuditReport{Type: wire.TypeAuditReport, Code: wire.CodeInvalid, Message: err.Error()})
			return
		}
	}
	respond(req, b.Audit(context.Background(), ar.Repair))
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
// failed) to a reserved or running job that has a part there.
func (b *Broker) onJobEvent(m *nats.Msg) {
	var je wire.JobEvent
	if err := json.Unmarshal(m.Data, &je); err != nil || je.Job == "" || je.Site == "" {
		b.log.Warn().Str("subject", m.Subject).Msg("job event rejected")
		return
	}
	switch je.State {
	case broker.SiteStarted, broker.SiteFinished, broker.SiteFailed:
	default:
		b.log.Warn().Str("state", je.State).Msg("job event with unknown state")
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	j := b.state.Job(je.Job)
	if j == nil || (j.State != wire.JobReserved && j.State != wire.JobRunning) || !hasSite(j, je.Site) {
		return
	}
	e := broker.Event{Kind: broker.EvSite, Time: b.now(), Job: je.Job, Site: je.Site, State: je.State}
	if err := b.record(context.Background(), e); err != nil {
		b.log.Error().Err(err).Msg("job event not recorded")
	}
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
