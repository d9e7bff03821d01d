package maui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"lookahead/forecast"
)

// captureRunner runs commands through r and, with dir set, records every
// command and its output in the fixture layout (INDEX.tsv + .out/.err).
type captureRunner struct {
	r   Runner
	dir string
	mu  sync.Mutex
	n   int
}

func (c *captureRunner) Run(ctx context.Context, name string, args ...string) (Result, error) {
	res, err := c.r.Run(ctx, name, args...)
	if err != nil || c.dir == "" {
		return res, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	base := fmt.Sprintf("%02d_%s", c.n, name)
	_ = os.WriteFile(filepath.Join(c.dir, base+".out"), res.Stdout, 0o644)
	if len(res.Stderr) > 0 {
		_ = os.WriteFile(filepath.Join(c.dir, base+".err"), res.Stderr, 0o644)
	}
	f, _ := os.OpenFile(filepath.Join(c.dir, "INDEX.tsv"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	fmt.Fprintf(f, "%s\t%d\t%s\n", base, res.ExitCode, strings.Join(append([]string{name}, args...), " "))
	f.Close()
	return res, nil
}

// liveSite is the shared live Torque+Maui site, when LOOKAHEAD_LIVE=1:
// Maui clients in LOOKAHEAD_MAUI_CLIENTS (default /usr/local/maui/bin),
// MAUIHOMEDIR LOOKAHEAD_MAUI_HOME (default /var/spool/maui), one node
// LOOKAHEAD_LIVE_NODE (default vm) of LOOKAHEAD_LIVE_PROCS processors
// (default 8). Hold /work/realstack/live.lock around the run.
func liveSite(t *testing.T) (Runner, string, int) {
	if os.Getenv("LOOKAHEAD_LIVE") != "1" {
		t.Skip("LOOKAHEAD_LIVE=1 not set: no live Maui")
	}
	env := func(k, d string) string {
		if v := os.Getenv(k); v != "" {
			return v
		}
		return d
	}
	procs, err := strconv.Atoi(env("LOOKAHEAD_LIVE_PROCS", "8"))
	if err != nil {
		t.Fatal(err)
	}
	r := NewExecRunner(ExecConfig{BinDir: env("LOOKAHEAD_MAUI_CLIENTS", "/usr/local/maui/bin"), HomeDir: env("LOOKAHEAD_MAUI_HOME", "/var/spool/maui")})
	return r, env("LOOKAHEAD_LIVE_NODE", "vm"), procs
}

// TestLiveMauiReservations runs the reservation client against the live
// Maui (PBS mode): two grid jobs fill a node over one window, a third is
// refused as overlap, an admin's reservation is seen by Holds and refuses
// a fourth, and everything is released. LOOKAHEAD_MAUI_CAPTURE=dir records
// every command (testdata/live-reserve came from this, with NOW.txt).
func TestLiveMauiReservations(t *testing.T) {
	base, node, procs := liveSite(t)
	capDir := os.Getenv("LOOKAHEAD_MAUI_CAPTURE")
	now := time.Now().Truncate(time.Second)
	if capDir != "" {
		_ = os.WriteFile(filepath.Join(capDir, "NOW.txt"), []byte(strconv.FormatInt(now.Unix(), 10)+"\n"), 0o644)
	}
	r := &captureRunner{r: base, dir: capDir}
	c := NewClient(r, ClientConfig{Capacity: map[string]int{node: procs}, Now: func() time.Time { return now }})
	ctx := context.Background()
	defer func() { // whatever happened, leave the site as found
		for _, j := range []string{"maui-g1", "maui-g2", "maui-g3", "maui-g4"} {
			_, _ = c.Release(ctx, j)
		}
		_, _ = base.Run(ctx, "releaseres", "maui-admin.0")
	}()
	got := liveReserveSteps(t, c, r, node, procs, now)
	t.Logf("reserved %+v", got)
}

func liveReserveSteps(t *testing.T, c *Client, r Runner, node string, procs int, now time.Time) []Reservation {
	ctx := context.Background()
	start := now.Unix() + 300
	half := procs / 2
	req := func(job string, p int, s int64) ReserveRequest {
		return ReserveRequest{Job: job, Start: s, End: s + 600, User: "alice", Account: "proj1",
			Hosts: []forecast.HostProcs{{Node: node, Procs: p}}}
	}
	g1, err := c.Reserve(ctx, req("maui-g1", half, start))
	if err != nil {
		t.Fatal(err)
	}
	g2, err := c.Reserve(ctx, req("maui-g2", procs-half, start))
	if err != nil {
		t.Fatal(err)
	}
	if g1.Bind == g2.Bind || g1.Bind == "" {
		t.Errorf("binding accounts %q %q", g1.Bind, g2.Bind)
	}
	if _, err := c.Reserve(ctx, req("maui-g3", 1, start+60)); !isRefusal(err, CodeOverlap) {
		t.Errorf("third reservation on a full node: %v, want overlap", err)
	}
	later := start + 3600
	adm := []string{"-u", "root", "-n", "maui-admin", "-s", c.timeArg(later), "-d", "00:10:00", "-r", fmt.Sprintf("PROCS=%d", half), nodePattern([]string{node})}
	if res, err := r.Run(ctx, "setres", adm...); err != nil || res.ExitCode != 0 {
		t.Fatalf("admin setres: %+v %v", res, err)
	}
	if _, err := c.Reserve(ctx, req("maui-g4", procs, later+60)); !isRefusal(err, CodeOverlap) {
		t.Errorf("reservation over an admin's: %v, want overlap", err)
	}
	holds, err := c.Holds(ctx)
	if err != nil || len(holds) != 3 {
		t.Fatalf("holds %+v %v", holds, err)
	}
	for _, j := range []string{"maui-g1", "maui-g2"} {
		if rel, err := c.Release(ctx, j); err != nil || len(rel.Released) != 1 {
			t.Errorf("release %s: %+v %v", j, rel, err)
		}
	}
	if res, err := r.Run(ctx, "releaseres", "maui-admin.0"); err != nil || res.ExitCode != 0 {
		t.Errorf("admin releaseres: %+v %v", res, err)
	}
	return []Reservation{g1, g2}
}

func isRefusal(err error, code Code) bool {
	ref, ok := AsRefusal(err)
	return ok && ref.Code == code
}
