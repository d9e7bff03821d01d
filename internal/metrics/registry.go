package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Namespace is the prefix of every lookahead metric.
const Namespace = "lookahead"

// NewRegistry returns a registry holding the Go runtime and process
// collectors, ready for NewAgent or NewBroker and for Server.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return reg
}

// registerer returns reg, or a private registry when reg is nil so that
// metrics still record (tests read them back) without being exposed.
func registerer(reg prometheus.Registerer) prometheus.Registerer {
	if reg == nil {
		return prometheus.NewRegistry()
	}
	return reg
}

// Buckets of the histograms, in seconds.
var (
	// buildBuckets span a built-in forecast of a small site (10 ms) to a
	// Maui SIMULATION run over a long horizon (minutes).
	buildBuckets = []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 25, 60, 120, 300}
	// startErrorBuckets span a minute to two days of start-time error.
	startErrorBuckets = []float64{60, 300, 900, 1800, 3600, 7200, 14400, 28800, 86400, 172800}
	// cycleBuckets span a trivial planning cycle (1 ms) to a heavy one.
	cycleBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
)
