// Package metrics owns lookahead's Prometheus instrumentation and the small
// HTTP listener that exposes it together with health endpoints.
//
// Daemons create a registry with NewRegistry (Go runtime and process
// collectors included), build their typed metric set on it — NewAgent for
// lookahead-agent, NewBroker for lookahead-broker — and call methods on that
// set where things happen (ForecastBuilt, CycleDone, ...). Metric names
// follow the Prometheus conventions: a lookahead_agent_ or
// lookahead_broker_ prefix, base units (seconds, bytes), _total on
// counters, and only low-cardinality labels (sources, verbs, result codes,
// job states — never job ids or user names).
//
// Server serves the registry on /metrics, liveness on /healthz and
// readiness on /readyz; the daemon flips readiness with SetReady and
// SetNotReady (which also tell systemd through $NOTIFY_SOCKET, so the
// state shows in `systemctl status`). A Server with an empty Addr does not
// listen at all, so the listener is off unless configured.
//
// Several agents in one process (the demo) share a registry by wrapping it
// per site:
//
//	reg := metrics.NewRegistry()
//	a := metrics.NewAgent(prometheus.WrapRegistererWith(prometheus.Labels{"site": "alpha"}, reg))
//
// Every method of a nil *Agent or *Broker does nothing, so code under test
// may pass nil.
package metrics
