package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"lookahead/agent"
	"lookahead/agent/simsite"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/forecast/swf"
	"lookahead/internal/cli"
)

// Backends: where the site's state comes from.
const (
	backendTorque    = "torque"    // pbs_server and Maui on this host
	backendSimulated = "simulated" // a simulated cluster in this process, for trying lookahead without one
)

func (c Config) simulated() bool { return c.Backend == backendSimulated }

func (c Config) validateBackend() []error {
	switch c.Backend {
	case backendTorque:
		return nil
	case backendSlurm:
		return c.validateSlurm()
	case backendSimulated:
	default:
		return []error{fmt.Errorf("backend %q: must be %s, %s or %s", c.Backend, backendTorque, backendSlurm, backendSimulated)}
	}
	var errs []error
	if c.Engine == "maui" {
		errs = append(errs, fmt.Errorf("engine maui: needs backend %s (a simulated site has no Maui); use engine builtin", backendTorque))
	}
	if t := c.Simulated.Trace; t != "" {
		if _, err := os.Stat(t); err != nil {
			errs = append(errs, fmt.Errorf("simulated.trace: %w", err))
		}
	}
	return errs
}

// simulatedSites holds the one simulated site of this process, so the
// forecasts and the reservation service see the same cluster.
var simulatedSites = struct {
	sync.Mutex
	m       map[string]*simsite.Site
	leftOut map[string]string // what of its trace was left out and why (swf.LeftOut)
}{m: map[string]*simsite.Site{}, leftOut: map[string]string{}}

// simulatedTraceLeftOut says what of the simulated site's trace was left
// out and why ("" when nothing, or the site is not built): the agent logs
// it once at start.
func simulatedTraceLeftOut(c Config) string {
	simulatedSites.Lock()
	defer simulatedSites.Unlock()
	return simulatedSites.leftOut[simulatedKey(c)]
}

// simulatedKey names the simulated site of config c.
func simulatedKey(c Config) string { return fmt.Sprintf("%s %+v", c.Site, c.Simulated) }

// simulatedSite is the cluster of backend: simulated, built at the first
// call: the configured nodes, the trace's jobs arriving from that moment
// on (its first job at once), scheduled by the configured policy.
func simulatedSite(c Config) (*simsite.Site, error) {
	key := simulatedKey(c)
	simulatedSites.Lock()
	defer simulatedSites.Unlock()
	if s := simulatedSites.m[key]; s != nil {
		return s, nil
	}
	s := c.Simulated
	var jobs []sim.Job
	if s.Trace != "" {
		f, err := os.Open(s.Trace)
		if err != nil {
			return nil, fmt.Errorf("simulated.trace: %w", err)
		}
		defer f.Close()
		var skipped []swf.Skip
		if jobs, skipped, err = simsite.ReadWorkload(f, c.Site); err != nil {
			return nil, cli.UsageError{Err: fmt.Errorf("simulated.trace %s: %w", s.Trace, err)}
		}
		if len(jobs)+len(skipped) == 0 {
			return nil, cli.Usagef("simulated.trace %s: no job records: an empty or cut file, or not an SWF trace", s.Trace)
		}
		simulatedSites.leftOut[key] = swf.LeftOut(len(jobs)+len(skipped), skipped)
	}
	policy, _ := sim.ParsePolicy(c.Policy)
	site, err := simsite.New(simsite.Config{Site: c.Site, Nodes: s.Nodes, PPN: s.PPN, Speed: s.Speed, MemMB: s.MemMB,
		Features: s.Features, Policy: policy, Workload: jobs, Start: time.Now().Unix()})
	if err != nil {
		return nil, err
	}
	simulatedSites.m[key] = site
	return site, nil
}

// simulatedSnapshotter is the simulated site as the forecasts' source; a
// site that cannot be built fails every snapshot with the reason.
func simulatedSnapshotter(c Config) agent.Snapshotter {
	site, err := simulatedSite(c)
	if err != nil {
		return failedSnapshotter{err}
	}
	return site
}

// simulatedReserver is the simulated site as the reservation backend.
func simulatedReserver(c Config) (agent.Reserver, error) {
	site, err := simulatedSite(c)
	if err != nil {
		return nil, err
	}
	return site, nil
}

type failedSnapshotter struct{ err error }

func (f failedSnapshotter) Snapshot(context.Context) (forecast.Snapshot, error) {
	return forecast.Snapshot{}, f.err
}
