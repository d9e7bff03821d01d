package daemon

import (
	"context"
	"fmt"
	"sort"

	"lookahead/broker"
	"lookahead/wire"
)

// SiteForecasts is what the broker holds of every site, sorted by name:
// the forecast it plans on (nodes, slots, unmodelled policy settings) and
// when the site last spoke. Read-only: the forecasts are shared with the
// broker, which replaces a site's forecast and never changes one in place;
// callers must not change them either.
func (b *Broker) SiteForecasts() []broker.Site {
	b.mu.Lock()
	out := b.siteList()
	b.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// HAStatus is the broker's own role and the lease as it last read it
// (Leader: the active broker, itself when active), as each broker answers
// `lookahead-broker status`; for a broker that is not active, Message
// says why it does not serve (a standby and which broker is active,
// starting, stepped down). LeaseTTL is left out (the caller's).
func (b *Broker) HAStatus() wire.HAStatus {
	st := wire.HAStatus{Type: wire.TypeHAStatus, Name: b.cfg.Name, Role: wire.RoleStandby}
	if l := b.Leadership(); l != nil {
		st.Role, st.Epoch, st.Since, st.Leader = wire.RoleActive, l.Epoch, l.Since, l
		return st
	}
	st.Message = b.notActive()
	b.term.mu.Lock()
	if h := b.term.holder; h != nil {
		st.Leader = &wire.Leadership{Broker: h.Broker, Epoch: h.Epoch, Since: h.Since}
	}
	b.term.mu.Unlock()
	return st
}

// AgentStatus asks site's agent for its status (the JSON its status
// endpoint answers, as `lookahead-agent status` reads it), on a reply
// subject of the site's own, until ctx ends. It changes nothing, so it is
// asked by a standby too.
func (b *Broker) AgentStatus(ctx context.Context, site string) ([]byte, error) {
	subject := wire.AgentSubject(site, wire.VerbAgentStatus)
	m, err := b.agents.request(ctx, site, subject, nil)
	if err != nil {
		return nil, fmt.Errorf("request to %s: %w", subject, err)
	}
	return m.Data, nil
}
