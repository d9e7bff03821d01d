package agent

import (
	"context"
	"errors"
	"fmt"
	"lookahead/internal/version"

	"github.com/nats-io/nats.go/micro"

	"lookahead/wire"
)

// ErrScheduler marks a Reserver error where the scheduler refused (as
// opposed to the machinery failing); the reply code is then
// wire.CodeSchedulerEr.
var ErrScheduler = errors.New("scheduler refused")

// VerbStatus is the agent service endpoint that returns Status.
const VerbStatus = wire.VerbAgentStatus

// startService registers the micro service with its reserve, release,
// list and status endpoints on wire.AgentSubject(site, verb).
func (a *Agent) startService(ctx context.Context) error {
	svc, err := micro.AddService(a.deps.Conn, micro.Config{
		Name: wire.AgentServiceName, Version: version.Service(),
		Description: "lookahead site agent: reservations for grid jobs",
		Metadata:    map[string]string{"site": a.cfg.Site, "version": version.String()},
	})
	if err != nil {
		return fmt.Errorf("agent service of %s: %w", a.cfg.Site, err)
	}
	nothing := func() {}
	// each handler answers, then waits for its outcome's audit record
	handlers := map[string]func(context.Context, []byte) (any, func()){
		wire.VerbReserve:  func(ctx context.Context, d []byte) (any, func()) { return a.reserve(ctx, d) },
		wire.VerbRelease:  func(ctx context.Context, d []byte) (any, func()) { return a.release(ctx, d) },
		wire.VerbList:     func(ctx context.Context, d []byte) (any, func()) { return a.List(ctx), nothing },
		VerbStatus:        func(context.Context, []byte) (any, func()) { return a.Status(), nothing },
		wire.VerbDispatch: func(ctx context.Context, d []byte) (any, func()) { return a.dispatch(ctx, d) },
		wire.VerbStop:     func(ctx context.Context, d []byte) (any, func()) { return a.stop(ctx, d) },
	}
	for verb, h := range handlers {
		handler := micro.HandlerFunc(func(r micro.Request) {
			rctx, cancel := context.WithTimeout(ctx, a.cfg.RequestTimeout)
			defer cancel()
			reply, done := h(rctx, r.Data())
			if err := r.RespondJSON(reply); err != nil {
				a.log.Warn().Err(err).Str("verb", verb).Msg("reply failed")
			}
			done()
		})
		if err := svc.AddEndpoint(verb, handler, micro.WithEndpointSubject(wire.AgentSubject(a.cfg.Site, verb))); err != nil {
			svc.Stop()
			return fmt.Errorf("agent service endpoint %s of %s: %w", verb, a.cfg.Site, err)
		}
	}
	a.mu.Lock()
	a.svc = svc
	a.mu.Unlock()
	return nil
}

func (a *Agent) stopService() {
	a.mu.Lock()
	svc := a.svc
	a.svc = nil
	a.mu.Unlock()
	if svc != nil {
		svc.Stop()
	}
}

// List answers a list request with the site's reservations as the
// scheduler reports them.
func (a *Agent) List(ctx context.Context) wire.ListReply {
	reply := wire.ListReply{Type: wire.TypeListReply, Site: a.cfg.Site, Code: wire.CodeOK, Reservations: []wire.Reservation{}}
	res, err := a.deps.Reserver.List(ctx)
	if err != nil {
		reply.Code, reply.Message = wire.CodeInternal, err.Error()
	} else if res != nil {
		reply.Reservations = a.stamp(res)
	}
	a.countRequest(wire.VerbList, reply.Code)
	return reply
}
