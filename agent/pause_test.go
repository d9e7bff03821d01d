package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lookahead/agent"
	"lookahead/agent/simsite"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/wire"
)

// waitingRelease holds the release of job g1 in agent.Wait (as a Slurm
// release does while its cancelled parts leave the queue) until gate is
// closed; entered is closed once it waits.
type waitingRelease struct {
	agent.Reserver
	entered, gate chan struct{}
	once          sync.Once
}

func (w *waitingRelease) Release(ctx context.Context, job string) (agent.Released, error) {
	if job != "g1" {
		return w.Reserver.Release(ctx, job)
	}
	w.once.Do(func() { close(w.entered) })
	for {
		select {
		case <-w.gate:
			return w.Reserver.Release(ctx, job)
		default:
		}
		if err := agent.Wait(ctx, 10*time.Millisecond); err != nil {
			return agent.Released{}, err
		}
	}
}

// A release that waits for the scheduler waits without the request lock:
// another job's reserve is served meanwhile, and a request for the same
// job is refused (busy) until the release goes on. (Releases still come
// one at a time: the service's release endpoint serves its messages in
// order.)
func TestReleaseWaitsWithoutTheRequestLock(t *testing.T) {
	nc := startNATS(t)
	clk := newClock(t0)
	site, err := simsite.New(simsite.Config{Site: "alpha", Nodes: 4, PPN: 4, Policy: sim.EASY, Start: t0, Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	slow := &waitingRelease{Reserver: site, entered: make(chan struct{}), gate: make(chan struct{})}
	runAgent(t, testConfig("alpha"), agent.Deps{Conn: nc, Snapshotter: site, Reserver: slow, Now: clk.Now, Engine: builtinEngine()})
	waitService(t, nc, "alpha")
	reserve := func(job string) wire.ReserveReply {
		return request[wire.ReserveReply](t, nc, "alpha", wire.VerbReserve, wire.ReserveRequest{Type: wire.TypeReserve, Job: job, Site: "alpha",
			Start: t0 + 600, Duration: 1800, Procs: 4, Identity: wire.Identity{User: "alice"}, RequestedBy: "broker"})
	}
	if r := reserve("g1"); r.Code != wire.CodeOK {
		t.Fatalf("reserve g1: %+v", r)
	}
	first := make(chan wire.ReleaseReply, 1)
	go func() {
		var r wire.ReleaseReply
		defer func() { first <- r }()
		data := `{"type":"release.v1","job":"g1","site":"alpha","requested_by":"broker"}`
		if msg, err := nc.Request(wire.AgentSubject("alpha", wire.VerbRelease), []byte(data), 10*time.Second); err == nil {
			_ = json.Unmarshal(msg.Data, &r)
		}
	}()
	<-slow.entered
	if r := reserve("g2"); r.Code != wire.CodeOK {
		t.Errorf("reserve of g2 while g1's release waits: %+v", r)
	}
	if r := reserve("g1"); r.Code != wire.CodeInternal || !strings.Contains(r.Message, "still being served") {
		t.Errorf("reserve of g1 while its release waits: %+v", r)
	}
	close(slow.gate)
	if r := <-first; r.Code != wire.CodeOK || len(r.Released) == 0 {
		t.Errorf("release of g1: %+v", r)
	}
}

// undoingReserver makes the reservation, lets a forecast build read the
// site while it exists (as one that happens to run then does), deletes
// it again and fails, as a Slurm reserve whose read-back failed does.
type undoingReserver struct {
	*simsite.Site
	between func()
}

func (u *undoingReserver) Reserve(ctx context.Context, s agent.ReserveSpec) (agent.Reserved, error) {
	res, err := u.Site.Reserve(ctx, s)
	if err != nil {
		return res, err
	}
	u.between()
	rel, _ := u.Site.Release(ctx, s.Job)
	res.Commands = append(res.Commands, rel.Commands...)
	return res, errors.New("read back: not what was asked; deleted again")
}

// watchedSite signals on taken after each snapshot while armed.
type watchedSite struct {
	*simsite.Site
	armed atomic.Bool
	taken chan struct{}
}

func (w *watchedSite) Snapshot(ctx context.Context) (forecast.Snapshot, error) {
	s, err := w.Site.Snapshot(ctx)
	if w.armed.CompareAndSwap(true, false) {
		w.taken <- struct{}{}
	}
	return s, err
}

// The forecast never holds the agent's own deleted reservation: a build
// that read the site while a reserve had made it (and published after the
// reserve deleted it again) is followed at once by one that does not.
func TestForecastAfterUndoneReserve(t *testing.T) {
	nc := startNATS(t)
	clk := newClock(t0)
	site, err := simsite.New(simsite.Config{Site: "alpha", Nodes: 4, PPN: 4, Policy: sim.EASY, Start: t0, Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	w := &watchedSite{Site: site, taken: make(chan struct{}, 1)}
	u := &undoingReserver{Site: site}
	a, _ := runAgent(t, testConfig("alpha"), agent.Deps{Conn: nc, Snapshotter: w, Reserver: u, Now: clk.Now, Engine: builtinEngine()})
	kv := waitBucket(t, mustJS(t, nc))
	waitForecast(t, kv, "alpha", 1)
	waitService(t, nc, "alpha")
	free := func(f *forecast.Forecast) int { return agent.Available(slotsOf(f, "alpha-n0001"), t0+600, t0+2400) }
	u.between = func() {
		w.armed.Store(true)
		a.Notify(agent.SourceReservation)
		<-w.taken // a build has read the site with the reservation in it
	}
	r := request[wire.ReserveReply](t, nc, "alpha", wire.VerbReserve, wire.ReserveRequest{Type: wire.TypeReserve, Job: "g1", Site: "alpha",
		Start: t0 + 600, Duration: 1800, Nodes: []wire.NodeProcs{{Node: "alpha-n0001", Procs: 4}}, Identity: wire.Identity{User: "alice"}, RequestedBy: "broker"})
	if r.Code != wire.CodeInternal {
		t.Fatalf("reserve: %+v", r)
	}
	if f := waitForecast(t, kv, "alpha", 2); free(f) != 0 {
		t.Logf("the build between published a forecast offering %d procs on the node", free(f))
	}
	if f := waitForecast(t, kv, "alpha", 3); free(f) != 4 {
		t.Errorf("the forecast after the reservation was deleted offers %d procs on its node, want 4", free(f))
	}
}

func slotsOf(f *forecast.Forecast, node string) []forecast.Slot {
	var out []forecast.Slot
	for _, s := range f.Slots {
		if s.Node == node {
			out = append(out, s)
		}
	}
	return out
}
