package maui

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"lookahead/forecast"
)

// liveSiteSnapshot is the live site's one node (vm, np=8) with alice's
// nodes=1:ppn=4 job running for 100 s and a nodes=1:ppn=6 job waiting.
func liveSiteSnapshot(now int64) forecast.Snapshot {
	return forecast.Snapshot{Site: "vm", Taken: now, Nodes: []forecast.SnapshotNode{{Name: "vm", Procs: 8, State: []string{"job-sharing"}}},
		Jobs: []forecast.LocalJob{
			{ID: "1.vm", User: "alice", Group: "alice", Queue: "batch", State: "R", Procs: 4, Nodes: 1, PPN: 4, Walltime: 600,
				Started: now - 100, Used: 89, Hosts: []forecast.HostProcs{{Node: "vm", Procs: 4}}},
			{ID: "2.vm", User: "alice", Group: "alice", Queue: "batch", State: "Q", Procs: 6, Nodes: 1, PPN: 6, Walltime: 600, Submitted: now - 90},
		}}
}

// TestRealMauiExactNodeSite forecasts with the live site's maui.cfg
// (JOBNODEMATCHPOLICY EXACTNODE) on a real Maui 3.3.1: the running job
// holds vm until started + walltime and the waiting one follows it. With
// the config copied as it was, Maui dropped the waiting job as corrupt
// and never started the running one: an empty forecast, "node free".
func TestRealMauiExactNodeSite(t *testing.T) {
	bin := mauiBin(t)
	now := time.Now().Unix()
	s := NewSimulator(SimulatorConfig{BinDir: bin, WorkDir: t.TempDir(), SiteConfig: "testdata/live-site/maui.cfg"})
	preds, st, err := s.ForecastOrdered(context.Background(), liveSiteSnapshot(now), nil, now, now+3600)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stats %+v preds %+v", st, preds)
	if len(preds) != 2 || preds[0].Job != "1.vm" || preds[1].Job != "2.vm" {
		t.Fatalf("predictions %+v", preds)
	}
	end := now - 100 + 600
	if preds[0].Start != now-100 || preds[0].End != end {
		t.Errorf("running job %+v, want [%d, %d)", preds[0], now-100, end)
	}
	if preds[1].Start != end || preds[1].End != end+600 || len(preds[1].Hosts) != 1 || preds[1].Hosts[0] != (forecast.HostProcs{Node: "vm", Procs: 6}) {
		t.Errorf("waiting job %+v, want vm:6 from %d", preds[1], end)
	}
}

// TestRealMauiDroppedJobIsAnError: a job Maui finds corrupt at load is
// an error naming it, with Maui's own log line, never a forecast
// without it.
func TestRealMauiDroppedJobIsAnError(t *testing.T) {
	bin := mauiBin(t)
	var res, wl bytes.Buffer
	if err := WriteResourceTrace(&res, []TraceNode{{Name: "n01", Procs: 8, MemMB: 2048, Classes: []ClassSlots{{Class: "batch", Slots: 8}}}}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	jobs := []TraceJob{
		{Name: "ok", Tasks: 2, User: "alice", Group: "alice", Class: "batch", WCLimit: 600, Queue: now, Runtime: 600},
		{Name: "bad", Nodes: 2, Tasks: 4, TPN: 4, User: "alice", Group: "alice", Class: "batch", WCLimit: 600, Queue: now, Runtime: 600},
	}
	if err := WriteWorkloadTrace(&wl, jobs); err != nil {
		t.Fatal(err)
	}
	s := NewSimulator(SimulatorConfig{BinDir: bin, WorkDir: t.TempDir()})
	_, _, err := s.RunTraces(context.Background(), res.Bytes(), wl.Bytes(), now, now+3600)
	if !errors.Is(err, ErrMauiFailed) || !strings.Contains(err.Error(), "dropped 1 of 2 jobs") || !strings.Contains(err.Error(), "bad") ||
		!strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("err %v", err)
	}
}

func TestRealMauiSelfTest(t *testing.T) {
	bin := mauiBin(t)
	s := NewSimulator(SimulatorConfig{BinDir: bin, WorkDir: t.TempDir(), SiteConfig: "testdata/live-site/maui.cfg"})
	if _, err := s.SelfTest(context.Background(), time.Now().Unix()); err != nil {
		t.Fatal(err)
	}
}
