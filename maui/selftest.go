package maui

import (
	"context"
	"fmt"

	"lookahead/forecast"
)

// SelfTest runs a tiny simulation (one node of 2 processors, a job
// running for 60 more seconds, one waiting for the node) with the
// configured install and site policy, and checks Maui's answer: the
// waiting job starts when the running one ends. It is what
// `lookahead-agent check` runs for engine maui; a failure says why
// (ErrNotInstalled, ErrMauiFailed with Maui's words).
func (s *Simulator) SelfTest(ctx context.Context, now int64) (SimStats, error) {
	snap := forecast.Snapshot{Site: "selftest", Taken: now,
		Nodes: []forecast.SnapshotNode{{Name: selfTestNode(s.cfg.Host), Procs: 2, State: []string{forecast.NodeFree}}},
		Jobs: []forecast.LocalJob{
			{ID: "1.selftest", User: "lookahead", State: forecast.JobRunning, Procs: 2, Nodes: 1, PPN: 2, Walltime: 120,
				Started: now - 60, Hosts: []forecast.HostProcs{{Node: selfTestNode(s.cfg.Host), Procs: 2}}},
			{ID: "2.selftest", User: "lookahead", State: forecast.JobQueued, Procs: 2, Nodes: 1, PPN: 2, Walltime: 60, Submitted: now - 30},
		}}
	preds, st, err := s.ForecastOrdered(ctx, snap, nil, now, now+600)
	if err != nil {
		return st, err
	}
	if len(preds) != 2 || preds[0].Job != "1.selftest" || preds[0].End != now+60 || preds[1].Job != "2.selftest" || preds[1].Start != now+60 {
		return st, fmt.Errorf("%w: self-test schedule %+v, want 1.selftest to end and 2.selftest to start at +60 s", ErrMauiFailed, preds)
	}
	return st, nil
}

// selfTestNode is the self-test's node name: any name works in a
// simulation; this host's keeps Maui's log readable.
func selfTestNode(host string) string {
	if forecast.IsPlainName(host) {
		return host
	}
	return "n01"
}
