package main

import (
	"fmt"
	"maps"
	"slices"

	"lookahead/forecast"
)

// validateNodes checks what the config says of the cluster's nodes:
// speeds in [forecast.MinSpeed, forecast.MaxSpeed] (torque.speeds,
// torque.nodes.*.speed; 0 there means "not set"), memory in the model's
// bounds and features that are plain names (a grid job names the
// features it needs with plain names, docs/formats.md).
func (c Config) validateNodes() []error {
	var errs []error
	bad := func(key string, v float64) {
		errs = append(errs, fmt.Errorf("%s: %v, must lie in [%v, %v] (the node's speed relative to the reference CPU)",
			key, v, forecast.MinSpeed, forecast.MaxSpeed))
	}
	node := func(key, name string) {
		if !forecast.ValidNodeName(name) {
			errs = append(errs, fmt.Errorf("%s: node name %q: 1-%d bytes without spaces (a host name as pbsnodes lists it)",
				key, forecast.Clip(name, forecast.MaxNameBytes), forecast.MaxNodeNameBytes))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Torque.Speeds)) {
		node("torque.speeds", name)
		if s := c.Torque.Speeds[name]; !forecast.ValidSpeed(s) {
			bad("torque.speeds."+name, s)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Torque.Nodes)) {
		node("torque.nodes", name)
		n, key := c.Torque.Nodes[name], "torque.nodes."+name
		if n.Speed != 0 && !forecast.ValidSpeed(n.Speed) {
			bad(key+".speed", n.Speed)
		}
		if n.MemMB < 0 || n.MemMB > forecast.MaxMemMB {
			errs = append(errs, fmt.Errorf("%s.mem_mb: %d, must lie in [0, %d]", key, n.MemMB, forecast.MaxMemMB))
		}
		errs = append(errs, plainNames(key+".features", n.Features)...)
	}
	return append(errs, plainNames("simulated.features", c.Simulated.Features)...)
}

// validateSimulated bounds the simulated cluster as a forecast bounds a
// site: nodes, processors and memory per node.
func (c Config) validateSimulated() []error {
	var errs []error
	s := c.Simulated
	if s.Nodes > forecast.MaxForecastNodes {
		errs = append(errs, fmt.Errorf("simulated.nodes %d: at most %d (a forecast's nodes)", s.Nodes, forecast.MaxForecastNodes))
	}
	if s.PPN > forecast.MaxProcs {
		errs = append(errs, fmt.Errorf("simulated.ppn %d: at most %d", s.PPN, forecast.MaxProcs))
	}
	if s.MemMB > forecast.MaxMemMB {
		errs = append(errs, fmt.Errorf("simulated.mem_mb %d: at most %d", s.MemMB, forecast.MaxMemMB))
	}
	return errs
}

// plainNames refuses the items of a list that are not plain names.
func plainNames(key string, names []string) []error {
	var errs []error
	for i, n := range names {
		if !forecast.IsPlainName(n) {
			errs = append(errs, fmt.Errorf("%s[%d] %q: must be a plain name (1-%d bytes of letters, digits, _ . -; not starting with . or -)",
				key, i, forecast.Clip(n, forecast.MaxNameBytes), forecast.MaxNameBytes))
		}
	}
	return errs
}
