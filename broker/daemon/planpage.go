package daemon

import (
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go/micro"

	"lookahead/forecast"
	"lookahead/wire"
)

// planPage encodes the page of plan p that starts at allocation from:
// the envelope with as many allocations as fit in budget bytes (at least
// one, so that every page moves on), Total the whole plan's and Next
// where the next page starts (0: none). Only the page's allocations are
// encoded, so a page of a plan of 100,000 jobs costs what it carries,
// not the whole plan.
func planPage(p wire.Plan, from, budget int) ([]byte, error) {
	total := len(p.Allocations)
	from = min(max(from, 0), total)
	env := p
	env.Allocations, env.Total, env.Next = nil, total, total // the longest Next it may carry
	head, err := json.Marshal(encodedPage{Plan: env, Allocations: []json.RawMessage{}})
	if err != nil {
		return nil, fmt.Errorf("encode plan: %w", err)
	}
	room := budget - len(head)
	page := []json.RawMessage{}
	env.Next = 0
	for i := from; i < total; i++ {
		data, err := json.Marshal(p.Allocations[i])
		if err != nil {
			return nil, fmt.Errorf("encode plan: job %s: %w", p.Allocations[i].Job, err)
		}
		if len(page) > 0 && len(data)+1 > room {
			env.Next = i
			break
		}
		page, room = append(page, data), room-len(data)-1
	}
	out, err := json.Marshal(encodedPage{Plan: env, Allocations: page})
	if err != nil {
		return nil, fmt.Errorf("encode plan: %w", err)
	}
	return out, nil
}

// encodedPage is a Plan whose allocations are already encoded (the
// outer field hides the embedded one's).
type encodedPage struct {
	wire.Plan
	Allocations []json.RawMessage `json:"allocations"`
}

// planPageBytes is how big one plan message may be: the server's
// max_payload.
func (b *Broker) planPageBytes() int { return int(b.nc.MaxPayload()) }

// publishPage publishes the first page of plan on PlanSubject: the whole
// plan when it fits in one message.
func (b *Broker) publishPage(plan wire.Plan) {
	data, err := planPage(plan, 0, b.planPageBytes())
	if err != nil {
		b.log.Warn().Err(err).Uint64("cycle", plan.Cycle).Msg("plan not published")
		return
	}
	if err := b.nc.Publish(wire.PlanSubject, data); err != nil {
		b.log.Warn().Err(err).Uint64("cycle", plan.Cycle).Msg("plan not published")
	}
}

func (b *Broker) onPlan(req micro.Request) {
	var pr wire.PlanRequest
	if len(req.Data()) > 0 {
		if msg := decodeRequest(req.Data(), &pr, func() string { return pr.Type }, wire.TypePlan); msg != "" {
			respond(req, wire.Plan{Type: wire.TypePlan, Code: wire.CodeInvalid, Message: msg, Allocations: []forecast.Allocation{}})
			return
		}
	}
	if pr.After < 0 {
		respond(req, wire.Plan{Type: wire.TypePlan, Code: wire.CodeInvalid, Message: fmt.Sprintf("after %d: want 0 or a page's next", pr.After), Allocations: []forecast.Allocation{}})
		return
	}
	data, err := planPage(b.Plan(), pr.After, b.planPageBytes())
	if err != nil {
		req.Error("500", err.Error(), nil)
		return
	}
	if err := req.Respond(data); err != nil {
		b.log.Warn().Err(err).Msg("plan reply not sent")
	}
}
