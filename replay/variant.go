package replay

import (
	"fmt"
	"strconv"
	"strings"

	"lookahead/broker/coalloc"
)

// A policy may name a strategy with broker settings of its own, for
// studies that weigh settings side by side on the same jobs and baseline:
// "lookahead[order=fcfs,free_tolerance=0.5]". The keys are BrokerSpec's:
// order, aging, tolerance, free_tolerance, free_wait, free_window, split_backlog,
// free_fallback, commit_lead, hold_free.

// splitPolicy is a policy's strategy name and its settings ("" when none).
func splitPolicy(p string) (name, settings string) {
	i := strings.IndexByte(p, '[')
	if i < 0 || !strings.HasSuffix(p, "]") {
		return p, ""
	}
	return p[:i], p[i+1 : len(p)-1]
}

// forPolicy is the scenario with the policy's own broker settings applied.
func (s Scenario) forPolicy(p string) (Scenario, error) {
	_, settings := splitPolicy(p)
	if settings == "" {
		return s, nil
	}
	for _, kv := range strings.Split(settings, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return s, fmt.Errorf("policy %q: %q: want key=value", p, kv)
		}
		if err := s.Broker.set(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
			return s, fmt.Errorf("policy %q: %w", p, err)
		}
	}
	return s, nil
}

func (b *BrokerSpec) set(k, v string) error {
	num := func() (*float64, error) {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("%s %q: not a number", k, v)
		}
		return &f, nil
	}
	dur := func(to *Duration) error {
		var d Duration
		err := d.UnmarshalText([]byte(v))
		if err == nil {
			*to = d
		}
		return err
	}
	var err error
	switch k {
	case "order":
		b.Order = v
	case "aging":
		err = dur(&b.Aging)
	case "tolerance":
		b.Tolerance, err = num()
	case "free_tolerance":
		b.FreeTolerance, err = num()
	case "free_wait":
		err = dur(&b.FreeWait)
	case "free_fallback":
		b.FreeFallback, err = v, coalloc.CheckFreeFallback(k, v)
	case "split_backlog":
		b.SplitBacklog, err = num()
	case "hold_free":
		b.HoldFree, err = strconv.ParseBool(v)
	case "commit_lead":
		err = dur(&b.CommitLead)
	case "free_window":
		b.FreeWindow, err = v, coalloc.CheckFreeWindow(k, v)
	default:
		return fmt.Errorf("unknown broker setting %q (order, aging, tolerance, free_tolerance, free_wait, free_window, free_fallback, commit_lead, hold_free, split_backlog)", k)
	}
	return err
}
