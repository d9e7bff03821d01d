package daemon

import (
	"context"
	"testing"

	"lookahead/wire"
)

// TestInitAllowsDirectGetsOnAnOlderJobStream: a job stream created before
// agents verified epochs does not allow direct gets; Inspect says so, and
// Init turns them on (the agents read the last term record with one),
// keeping everything else of the stream.
func TestInitAllowsDirectGetsOnAnOlderJobStream(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	old := jobStreamConfig(1)
	old.AllowDirect = false
	if _, err := e.js.CreateStream(ctx, old); err != nil {
		t.Fatal(err)
	}
	if _, err := e.js.Publish(ctx, "lookahead.jobs.g1", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	jobs := func(rs []InitResult) InitResult {
		for _, r := range rs {
			if r.Name == wire.JobStream {
				return r
			}
		}
		return InitResult{Note: "(no result)"}
	}
	noteOf := func(rs []InitResult) string { return jobs(rs).Note }
	rs, err := Inspect(ctx, e.js)
	if err != nil || noteOf(rs) != noDirectNote {
		t.Fatalf("inspect: %+v %v, want the job stream flagged", rs, err)
	}
	if rs, err = Init(ctx, e.js, 1, 0); err != nil || noteOf(rs) != "" || jobs(rs).Changed == "" {
		t.Fatalf("init: %+v %v", rs, err)
	}
	s, err := e.js.Stream(ctx, wire.JobStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil || !info.Config.AllowDirect || !info.Config.DenyDelete || info.State.Msgs != 1 {
		t.Fatalf("job stream after init: %+v %v", info, err)
	}
	if rs, _ := Inspect(ctx, e.js); noteOf(rs) != "" {
		t.Errorf("inspect after init: %+v", rs)
	}
}
