package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/prometheus/client_golang/prometheus"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/internal/cli"
	"lookahead/internal/metrics"
	"lookahead/torque"
)

// snapshotter reads the cluster from Torque, or from a snapshot JSON file
// when file is set (forecast --snapshot).
func snapshotter(c Config, file string) agent.Snapshotter {
	if file != "" {
		return fileSnapshotter(file)
	}
	nodes := map[string]torque.NodeConfig{}
	for name, n := range c.Torque.Nodes {
		nodes[name] = n
	}
	for name, speed := range c.Torque.Speeds {
		n := nodes[name]
		n.Speed = speed
		nodes[name] = n
	}
	run := torque.NewExecRunner(torque.ExecConfig{Timeout: c.Torque.CommandTimeout})
	client := torque.NewClient(run, torque.ClientConfig{Site: c.Site, Qstat: c.Torque.Qstat, Pbsnodes: c.Torque.Pbsnodes,
		Default: torque.NodeConfig{Speed: c.Torque.DefaultSpeed}, Nodes: nodes})
	return agent.TorqueSnapshotter{Client: client}
}

type fileSnapshotter string

func (f fileSnapshotter) Snapshot(context.Context) (forecast.Snapshot, error) {
	fh, err := os.Open(string(f))
	if err != nil {
		return forecast.Snapshot{}, fmt.Errorf("snapshot file: %w", err)
	}
	defer fh.Close()
	var snap forecast.Snapshot
	dec := json.NewDecoder(fh)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&snap); err != nil {
		return forecast.Snapshot{}, fmt.Errorf("snapshot file %s: %w: %v", f, forecast.ErrInvalid, err)
	}
	return snap, nil
}

// engine is the configured forecaster (Validate refuses what is not wired).
func engine(c Config) agent.Engine {
	policy, _ := sim.ParsePolicy(c.Policy)
	return agent.BuiltinEngine{Horizon: c.Horizon, Policy: policy, Pricing: c.pricing()}
}

// agentMetrics registers the agent's metrics on a fresh registry.
func agentMetrics() (*metrics.Agent, *prometheus.Registry) {
	reg := metrics.NewRegistry()
	m := metrics.NewAgent(reg)
	m.SetVersion(cli.Version)
	return m, reg
}

// reserver is the site's reservation backend: Maui setres/showres/
// releaseres. Nil (service off) until the Maui adapter is wired.
func reserver(c Config) (agent.Reserver, error) {
	return nil, nil
}
