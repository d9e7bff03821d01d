// Package broker owns the grid side of lookahead: the co-allocation
// algorithm (pure, in broker/coalloc), and here the broker's decisions as
// pure functions of values with `now` passed in:
//
//   - the grid queue as a state machine driven by durable events (State,
//     Event, Apply): submitted → waiting → committing → reserved → running →
//     finished/failed, or cancelled/expired; replaying the event stream
//     rebuilds the state after a restart;
//   - budgets: a job's worst-case cost must fit in what its account and user
//     have left; the real cost is charged when reserved, refunded on cancel;
//   - the planning cycle over a snapshot of fresh forecasts and waiting jobs,
//     minus what reservations already hold;
//   - the commit decision (which jobs to reserve now, the reserve requests,
//     all-or-nothing judgement of the replies);
//   - audit reconciliation (missing, orphaned, drifted reservations).
//
// The NATS adapters and the daemon loop live in broker/daemon; the CLI's
// client in broker/client; the one-process demo (which also runs agents) in demo/, outside
// broker/ so that the broker does not depend on the agent.
package broker
