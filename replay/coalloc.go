package replay

import (
	"slices"

	"lookahead/broker/coalloc"
	"lookahead/forecast"
)

// coallocOptions is the co-allocation core's runtime model for a run.
func coallocOptions(sc Scenario) coalloc.Options {
	o := coalloc.Options{
		Tiers:           sc.Broker.Tiers,
		MultiSiteFactor: sc.Broker.MultiSiteFactor,
		StagingDelay:    sc.Broker.StagingDelay.Seconds(),
		Tolerance:       coalloc.DefaultTolerance,
		FreeTolerance:   coalloc.DefaultFreeTolerance,
	}
	if sc.Broker.Tolerance != nil {
		o.Tolerance = *sc.Broker.Tolerance
	}
	if sc.Broker.FreeTolerance != nil {
		o.FreeTolerance = *sc.Broker.FreeTolerance
	}
	o.FreeWait = sc.Broker.FreeWait.Seconds()
	o.FreeWindow = sc.Broker.FreeWindow
	o.FreeFallback = sc.Broker.FreeFallback
	if sc.Broker.SplitBacklog != nil {
		o.SplitBacklog = *sc.Broker.SplitBacklog
	}
	switch sc.Broker.Order {
	case OrderPriority:
		o.Order = coalloc.OrderPrice
	case OrderAging:
		o.Order, o.Aging = coalloc.OrderAging, float64(sc.Broker.Aging.Seconds())
	case OrderArea:
		o.Order, o.Aging = coalloc.OrderArea, float64(sc.Broker.Aging.Seconds())
	default: // fcfs, the broker's default (planning.order)
		o.Order = coalloc.OrderFCFS
	}
	return o
}

// queueOrder sorts a copy of the queue in the options' order.
func queueOrder(o coalloc.Options) func([]forecast.JobRequest) []forecast.JobRequest {
	return func(jobs []forecast.JobRequest) []forecast.JobRequest {
		out := slices.Clone(jobs)
		o.SortQueue(out)
		return out
	}
}

// CoallocPools is the default pool factory: the co-allocation core with the
// scenario's multi-site factor, staging delay and tiers.
func CoallocPools(sc Scenario) PoolFactory {
	opts := coallocOptions(sc)
	return func(fcs []forecast.Forecast, notBefore int64) (Pool, error) {
		o := opts
		o.NotBefore = notBefore
		return coalloc.NewPool(fcs, o)
	}
}

// Queue orders of the lookahead strategies (BrokerSpec.Order).
const (
	OrderPriority = "priority"
	OrderFCFS     = "fcfs"
	OrderAging    = "aging" // BrokerSpec.Aging seconds per credit
	OrderArea     = "area"  // experimental: the largest first, BrokerSpec.Aging seconds per CPU-hour
)
