package maui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"lookahead/forecast"
)

// instanceRunner runs commands against one private Maui through its
// relays; with capture set it also records every command and its output
// in the fixture layout (INDEX.tsv + .out/.err).
type instanceRunner struct {
	in      *instance
	capture string
	mu      sync.Mutex
	n       int
}

func (r *instanceRunner) Run(ctx context.Context, name string, args ...string) (Result, error) {
	res, err := r.in.runQueued(ctx, name, args...)
	if err == nil && r.capture != "" {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.n++
		base := fmt.Sprintf("%02d_%s", r.n, name)
		_ = os.WriteFile(filepath.Join(r.capture, base+".out"), res.Stdout, 0o644)
		if len(res.Stderr) > 0 {
			_ = os.WriteFile(filepath.Join(r.capture, base+".err"), res.Stderr, 0o644)
		}
		f, _ := os.OpenFile(filepath.Join(r.capture, "INDEX.tsv"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		fmt.Fprintf(f, "%s\t%d\t%s\n", base, res.ExitCode, strings.Join(append([]string{name}, args...), " "))
		f.Close()
	}
	return res, err
}

// TestRealMauiReservations runs the reservation client against a real
// Maui 3.3.1 in SIMULATION mode (8 nodes x 2 procs, one long job on n01).
// LOOKAHEAD_MAUI_CAPTURE=dir records every command and output.
func TestRealMauiReservations(t *testing.T) {
	bin := mauiBin(t)
	now := time.Now().Unix()
	snap, _ := sim1Snapshot(t)
	snap.Jobs = []forecast.LocalJob{{ID: "long.vm", User: "bob", Group: "chem", State: "R", Procs: 2, Walltime: 86400,
		Hosts: []forecast.HostProcs{{Node: "n01", Procs: 2}}}}
	tr, err := BuildTraces(snap, TraceOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	s := NewSimulator(SimulatorConfig{BinDir: bin, WorkDir: t.TempDir()})
	home, err := s.prepareHome(tr)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(home)
	ctx := context.Background()
	in, err := s.start(ctx, home, len(tr.Jobs), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.stop()
	r := &instanceRunner{in: in, capture: os.Getenv("LOOKAHEAD_MAUI_CAPTURE")}
	clock := time.Now().Truncate(time.Second) // fixed: the relative setres times are then replayable
	if r.capture != "" {
		_ = os.WriteFile(filepath.Join(r.capture, "NOW.txt"), []byte(fmt.Sprintln(clock.Unix())), 0o644)
	}
	capacity := map[string]int{}
	for _, n := range snap.Nodes {
		capacity[n.Name] = n.Procs
	}
	c := NewClient(r, ClientConfig{Relative: true, Location: s.Zone(), Capacity: capacity, Now: func() time.Time { return clock }})
	start := clock.Unix() + 1800
	req := ReserveRequest{Job: "g17", Start: start, End: start + 3600, User: "griduser", Group: "grid", Account: "gridacct",
		Hosts: []forecast.HostProcs{{Node: "n02", Procs: 2}, {Node: "n03", Procs: 1}, {Node: "n04", Procs: 1}}}

	got, err := c.Reserve(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("reserved %+v", got)
	if len(got.IDs) != 2 || got.IDs[0] != "la.g17.0" || got.IDs[1] != "la.g17.1" || got.QsubString() != "-A la.acct0 -W group_list=grid" {
		t.Errorf("reservation %+v", got)
	}
	again, err := c.Reserve(ctx, req)
	if err != nil || strings.Join(again.IDs, ",") != strings.Join(got.IDs, ",") {
		t.Fatalf("retry: %+v %v", again, err)
	}
	// n01 is held by the running job: Maui would accept; the client refuses.
	over := req
	over.Job, over.Hosts = "g18", []forecast.HostProcs{{Node: "n01", Procs: 1}}
	if _, err := c.Reserve(ctx, over); err == nil {
		t.Error("overlap with the running job accepted")
	} else if ref, ok := AsRefusal(err); !ok || ref.Code != CodeOverlap {
		t.Errorf("overlap: %v", err)
	}
	one := req
	one.Job, one.Hosts = "g19", []forecast.HostProcs{{Node: "n05", Procs: 2}}
	single, err := c.Reserve(ctx, one)
	if err != nil || single.QsubString() != "-A la.acct1 -W group_list=grid,x=FLAGS:ADVRES:la.g19.0" {
		t.Fatalf("single: %+v %v", single, err)
	}
	list, err := c.List(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %+v %v", list, err)
	}
	rel, err := c.Release(ctx, "g17")
	if err != nil || len(rel.Released) != 2 {
		t.Fatalf("release: %+v %v", rel, err)
	}
	rel, err = c.Release(ctx, "g17")
	if err != nil || len(rel.Released)+len(rel.Missing) != 0 {
		t.Fatalf("second release: %+v %v", rel, err)
	}
	if _, err := c.Release(ctx, "g19"); err != nil {
		t.Fatal(err)
	}
	// An unknown id straight to releaseres: exit 0, "cannot locate".
	if res, err := c.releaseIDs(ctx, []string{"la.nosuch.0"}); err != nil || len(res.Missing) != 1 {
		t.Fatalf("unknown: %+v %v", res, err)
	}
	list, err = c.List(ctx)
	if err != nil || len(list) != 0 {
		t.Fatalf("list after release: %+v %v", list, err)
	}
}
