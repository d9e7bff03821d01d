package demo

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"

	"lookahead/broker"
	"lookahead/wire"
)

// observe subscribes the live output to what crosses NATS: forecasts, the
// broker's job events and plans. It also plays the grid's job launcher:
// when a reservation starts, the job's parts report started on each site,
// and finished at its end (the launcher itself is outside lookahead).
func (r *run) observe(nc *nats.Conn) error {
	subs := []struct {
		subject string
		h       nats.MsgHandler
	}{
		{wire.ForecastSubjects, r.onForecast},
		{wire.BrokerEventSubjects, r.onEvent},
		{wire.PlanSubject, r.onPlan},
	}
	for _, s := range subs {
		if _, err := nc.Subscribe(s.subject, s.h); err != nil {
			return fmt.Errorf("subscribe %s: %w", s.subject, err)
		}
	}
	return nil
}

func (r *run) onForecast(m *nats.Msg) {
	if m.Header.Get(wire.HeaderType) == wire.TypeHeartbeat {
		return
	}
	f, err := wire.DecodeForecast(m.Data)
	if err != nil {
		r.p.note(fmt.Sprintf("bad forecast on %s: %v", m.Subject, err))
		return
	}
	r.p.forecast(f)
	if r.o.Observer != nil {
		r.o.Observer.Forecast(f.Site)
	}
}

func (r *run) onPlan(m *nats.Msg) {
	var p wire.Plan
	if json.Unmarshal(m.Data, &p) == nil {
		r.stats.plan(p)
		r.p.plan(p)
	}
}

func (r *run) onEvent(m *nats.Msg) {
	var e broker.Event
	if json.Unmarshal(m.Data, &e) != nil {
		return
	}
	r.stats.event(e)
	r.p.event(e)
	if r.o.Observer != nil {
		r.o.Observer.Event(e)
	}
	if e.Kind == broker.EvOutcome && e.OK {
		r.launch(e)
	}
}

// launch schedules the started and finished reports of a reserved job's
// parts, one per site, at the reservation's start and end.
func (r *run) launch(e broker.Event) {
	nc := r.launcherConn()
	if nc == nil {
		return
	}
	for _, res := range e.Reservations {
		res := res
		report := func(state string, at int64) func() {
			return func() {
				if _, ok := r.scripted.Load(res.Job); ok {
					return // dispatched by the broker: its sites report its parts
				}
				data, _ := json.Marshal(wire.JobEvent{Type: wire.TypeJobEvent, Site: res.Site, Job: res.Job, State: state, Time: at})
				nc.Publish(wire.JobEventSubject(res.Site, res.Job), data)
			}
		}
		r.timers.after(r.clock.Until(res.Start), report(broker.SiteStarted, res.Start))
		r.timers.after(r.clock.Until(res.End), report(broker.SiteFinished, res.End))
	}
}

func (r *run) launcherConn() *nats.Conn {
	r.launchOnce.Do(func() {
		nc, err := r.connect("demo-launcher")
		if err != nil {
			r.p.note(err.Error())
			return
		}
		r.launchNC = nc
	})
	return r.launchNC
}

func sitesOf(e broker.Event) string {
	seen := map[string]int{}
	var order []string
	for _, res := range e.Reservations {
		if _, ok := seen[res.Site]; !ok {
			order = append(order, res.Site)
		}
		for _, n := range res.Nodes {
			seen[res.Site] += n.Procs
		}
	}
	parts := make([]string, len(order))
	for i, s := range order {
		parts[i] = fmt.Sprintf("%s×%d", s, seen[s])
	}
	return strings.Join(parts, " + ")
}
