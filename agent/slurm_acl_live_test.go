package agent_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"lookahead/agent"
	"lookahead/slurm/slurmtest"
	"lookahead/wire"
)

// A grid reservation widened by hand (another user, a flag, an account)
// while its part is queued in it: the agent's poll narrows it in place
// and the part stays queued. Re-creating it (release, reserve) cancelled
// the part first (a Slurm reservation with queued jobs cannot be deleted)
// and the grid job failed: seen in a black-box run of the shipped agent.
func TestLiveWidenedReservationKeepsItsQueuedPart(t *testing.T) {
	c := slurmtest.Shared(t, slurmtest.Options{CPUs: 4, Nodes: 2})
	site := slurmSite(t, c)
	nc := startNATS(t)
	log := &lockedBuffer{}
	run := slurmAgentRunner(t, nc, site, log)
	defer run()()
	r := request[wire.ReserveReply](t, nc, "sl", wire.VerbReserve, wire.ReserveRequest{Type: wire.TypeReserve, Job: "q1", Site: "sl",
		Start: time.Now().Add(time.Hour).Unix(), Duration: 600, Nodes: []wire.NodeProcs{{Node: "n2", Procs: 2}},
		Identity: wire.Identity{User: "alice"}, RequestedBy: "broker"})
	if r.Code != wire.CodeOK {
		t.Fatalf("reserve: %+v", r)
	}
	sb := c.RunAsUser2("sbatch", "--parsable", "-o", "/dev/null", "-n", "1", "--reservation=la.q1", "-t", "1", "-J", "la.q1.0", "--wrap", "true")
	part := strings.TrimSpace(sb.Stdout)
	if sb.ExitCode != 0 || part == "" {
		t.Fatalf("sbatch into la.q1: %+v", sb)
	}
	if u := c.Run("scontrol", "update", "reservationname=la.q1", "users+=root", "flags+=MAGNETIC", "accounts=root"); u.ExitCode != 0 {
		t.Fatalf("widen: %+v", u)
	}
	defer func() {
		if t.Failed() {
			t.Logf("log:\n%s", log.String())
		}
	}()
	waitSlurm(t, "la.q1 narrowed again", func() bool {
		w, _, err := findListed(site, "la.q1")
		return err == nil && w != nil && w.Identity == wire.Identity{User: slurmtest.User2} && len(w.Extra) == 0
	})
	if st := strings.TrimSpace(c.Run("squeue", "-h", "-j", part, "-o", "%T %v").Stdout); st != "PENDING la.q1" {
		t.Errorf("the part queued in la.q1 is %q after the repair, want still PENDING in it", st)
	}
	// The agent logs the repair after slurmctld answers the update, so
	// the narrowed reservation can be seen a moment before the line.
	waitSlurm(t, "the agent's log to say the ACL was restored in place", func() bool {
		return strings.Contains(log.String(), "ACL restored in place")
	})
	c.Run("scancel", part)
}

// slurmAgentRunner starts (each call) agent sl on site polling every
// second, alice mapped to User2, its log in log, and returns its stop.
func slurmAgentRunner(t *testing.T, nc *nats.Conn, site *agent.SlurmSite, log *lockedBuffer) (run func() (stop func())) {
	cfg := agent.Config{Site: "sl", Debounce: 50 * time.Millisecond, Refresh: time.Second, HoldState: filepath.Join(t.TempDir(), "holds.json"),
		Dispatch: agent.DispatchConfig{Users: map[string]string{"alice": slurmtest.User2}}}
	return func() (stop func()) {
		zl := zerolog.New(log)
		_, stop = runAgent(t, cfg, agent.Deps{Conn: nc, Snapshotter: site, Reserver: site, Log: &zl, Engine: builtinEngine()})
		waitService(t, nc, "sl")
		return stop
	}
}
