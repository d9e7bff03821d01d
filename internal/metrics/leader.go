package metrics

import "github.com/prometheus/client_golang/prometheus"

// leaderMetrics are the broker's leadership gauges (docs/broker.md,
// "Active and standby brokers").
type leaderMetrics struct {
	active  prometheus.Gauge
	epoch   prometheus.Gauge
	changes prometheus.Counter
}

func newLeaderMetrics(reg prometheus.Registerer) leaderMetrics {
	m := leaderMetrics{
		active: prometheus.NewGauge(gaugeOpts("broker", "active",
			"1 while this broker is the active one (holds the leadership lease and has begun its term), 0 as a standby.")),
		epoch: prometheus.NewGauge(gaugeOpts("broker", "epoch",
			"The active term's epoch (0 as a standby): the job stream sequence of the term's first record.")),
		changes: prometheus.NewCounter(counterOpts("broker", "leadership_changes_total",
			"Times this broker became active or stopped being active.")),
	}
	registerer(reg).MustRegister(m.active, m.epoch, m.changes)
	return m
}

// SetLeader reports whether this broker is active, and its epoch.
func (b *Broker) SetLeader(active bool, epoch uint64) {
	if b == nil {
		return
	}
	v := 0.0
	if active {
		v = 1
	}
	b.active.Set(v)
	b.epoch.Set(float64(epoch))
	b.changes.Inc()
}
