// Package simsite is a simulated cluster with no Torque or Maui: its local
// workload (jobs from a slice of a real SWF trace, or any sim.Job list) runs
// in the built-in engine (forecast/sim) on a clock the caller passes in. A
// Site is an agent.Snapshotter and an agent.Reserver: grid reservations are
// held in the engine, so local jobs plan around them exactly as Maui's would.
// The demo and the end-to-end tests run several of them in one process:
//
//	site, err := simsite.New(simsite.Config{Site: "alpha", Nodes: 64, PPN: 8,
//		Speed: 1.0, Workload: jobs, Start: t0, Clock: clock})
//	a, err := agent.New(agent.Config{Site: "alpha"}, agent.Deps{
//		Conn: nc, Snapshotter: site, Reserver: site, Now: clock,
//		Engine: agent.BuiltinEngine{Horizon: 48 * time.Hour, Policy: sim.EASY, Pricing: pricing}})
//	go a.Run(ctx)
//
// Safe for concurrent use.
package simsite
