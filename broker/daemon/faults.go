package daemon

import "lookahead/broker"

// Faults are fault-injection points for the tests of recovery and
// failover (this package's, failover/, wan/). The daemon never sets them:
// they are not part of Config, and a Broker has none unless InjectFaults
// gives them, before Run.
type Faults struct {
	// Point is asked at named points of the commit protocol ("intent",
	// "answer:<site>", "outcome"); true stops the broker there as if it
	// died (Run returns ErrCrashed, the lease is left to run out).
	Point func(point string) bool
	// LeasePause is called before each lease renewal: a test blocks it to
	// emulate a process stopped past its lease.
	LeasePause func()
	// AppendError is asked before each event is appended to the job
	// stream; an error fails the append (a failing stream).
	AppendError func(broker.Event) error
}

// InjectFaults arms f. Call it before Run; for tests only.
func (b *Broker) InjectFaults(f Faults) { b.faults = f }
