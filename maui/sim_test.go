package maui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeMaui installs stand-in maui and schedctl scripts: maui records its
// PID and sleeps (or runs body), schedctl answers as Maui with pidLine;
// the other clients fail. They test process handling, not Maui.
func fakeMaui(t *testing.T, mauiBody, schedctlBody string) (bin string) {
	bin = t.TempDir()
	script(t, bin, "maui", mauiBody)
	script(t, bin, "schedctl", schedctlBody)
	for _, c := range []string{"changeparam", "showres", "setres", "showq"} {
		script(t, bin, c, "exit 1")
	}
	return bin
}

func waitGone(t *testing.T, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("fake maui never ran: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil || pid <= 1 {
			t.Fatalf("pid file %q", b)
		}
		for syscall.Kill(pid, 0) == nil {
			if time.Now().After(deadline) {
				t.Fatalf("maui process %d left running", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func TestSimulatorRefusesAnotherInstanceAndKillsItsOwn(t *testing.T) {
	work := t.TempDir()
	pidFile := filepath.Join(work, "maui.pid")
	bin := fakeMaui(t, `echo $$ >> `+pidFile+`; exec sleep 300`, `while [ ! -s `+pidFile+` ]; do sleep 0.01; done; echo "# Maui version 3.3.1 (PID: 1)"`)
	s := NewSimulator(SimulatorConfig{BinDir: bin, WorkDir: work, Timeout: 30 * time.Second})
	_, _, err := s.ForecastOrdered(context.Background(), sampleSnapshot(), nil, 1000, 5000)
	if !errors.Is(err, ErrMauiFailed) || !strings.Contains(err.Error(), "another Maui (PID 1") {
		t.Fatalf("err %v", err)
	}
	waitGone(t, pidFile)
	if left, _ := filepath.Glob(filepath.Join(work, "lookahead-maui-*")); len(left) != 0 {
		t.Errorf("home left behind: %v", left)
	}
}

func TestSimulatorReportsMauiDyingAtStart(t *testing.T) {
	bin := fakeMaui(t, `echo "ERROR:    server must be started on host 'x' (currently on 'vm')" >&2; exit 1`, `exit 1`)
	s := NewSimulator(SimulatorConfig{BinDir: bin, WorkDir: t.TempDir(), Timeout: 30 * time.Second})
	_, err := s.Forecast(context.Background(), sampleSnapshot(), 1000, 5000)
	if !errors.Is(err, ErrMauiFailed) || !strings.Contains(err.Error(), "server must be started on host") {
		t.Fatalf("err %v", err)
	}
}

func TestSimulatorTimeoutKillsMaui(t *testing.T) {
	work := t.TempDir()
	pidFile := filepath.Join(work, "maui.pid")
	// Never answers: schedctl fails (once maui has written its pid, so
	// that the run's timeout cannot fire before there is a maui to
	// kill, on a loaded machine), maui sleeps on.
	bin := fakeMaui(t, `echo $$ >> `+pidFile+`; sleep 300 & wait`, `while [ ! -s `+pidFile+` ]; do sleep 0.01; done; exit 1`)
	s := NewSimulator(SimulatorConfig{BinDir: bin, WorkDir: work, Timeout: 5 * time.Second})
	start := time.Now()
	_, err := s.Forecast(context.Background(), sampleSnapshot(), 1000, 5000)
	if !errors.Is(err, ErrMauiFailed) {
		t.Fatalf("err %v", err)
	}
	if time.Since(start) > 40*time.Second {
		t.Fatalf("took %v", time.Since(start))
	}
	waitGone(t, pidFile)
}

func TestSimulatorMissingMaui(t *testing.T) {
	s := NewSimulator(SimulatorConfig{BinDir: t.TempDir(), WorkDir: t.TempDir()})
	if _, err := s.Forecast(context.Background(), sampleSnapshot(), 1000, 5000); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("err %v", err)
	}
}

// A standard install keeps the clients in bin/ and the server in sbin/:
// the simulator finds the server there.
func TestSimulatorFindsServerInSbin(t *testing.T) {
	root := t.TempDir()
	bin, sbin := filepath.Join(root, "bin"), filepath.Join(root, "sbin")
	for _, d := range []string{bin, sbin} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range simClients {
		script(t, bin, c, "exit 1")
	}
	script(t, sbin, "maui", "exit 1")
	s := NewSimulator(SimulatorConfig{BinDir: bin})
	if s.cfg.Server != filepath.Join(sbin, "maui") {
		t.Fatalf("server %q, want %s", s.cfg.Server, filepath.Join(sbin, "maui"))
	}
	if err := s.CheckInstall(); err != nil {
		t.Fatal(err)
	}
}

// Clients missing (the configured directory holds only the server) is
// "not installed" at once, naming what is missing, not a 45 s wait for
// an answer on the port.
func TestSimulatorMissingClientsFailsAtOnce(t *testing.T) {
	sbin := t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "maui.pid")
	script(t, sbin, "maui", `echo $$ >> `+pidFile+`; exec sleep 300`)
	s := NewSimulator(SimulatorConfig{BinDir: sbin, WorkDir: filepath.Join(t.TempDir(), "state", "maui-sim")})
	start := time.Now()
	_, err := s.Forecast(context.Background(), sampleSnapshot(), 1000, 5000)
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "schedctl") {
		t.Fatalf("err %v, want not installed naming schedctl", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
	if _, err := os.Stat(pidFile); err == nil {
		t.Error("maui was started without its clients")
	}
}

// The work directory (state_dir/maui-sim) is created when missing.
func TestSimulatorCreatesWorkDir(t *testing.T) {
	work := filepath.Join(t.TempDir(), "state", "maui-sim")
	s := NewSimulator(SimulatorConfig{BinDir: t.TempDir(), WorkDir: work})
	home, err := s.prepareHome(Traces{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(home, work+"/") {
		t.Fatalf("home %s not under %s", home, work)
	}
}

func TestStepDurationMatchesMaui(t *testing.T) {
	// Strings Maui printed in the captures (schedctl, showres).
	for sec, want := range map[int64]string{7: "00:00:07", 123: "00:02:03", 600: "00:10:00", 3600: "1:00:00",
		10740: "2:59:00", 36000: "10:00:00", 93600: "1:02:00:00", 1200: "00:20:00", 8640000: "INFINITY"} {
		if got := stepDuration(sec); got != want {
			t.Errorf("stepDuration(%d) = %q, want %q", sec, got, want)
		}
	}
	for _, f := range []string{"sim1-step_cmds/schedctl_S10.out", "sim1-step_cmds/schedctl_s300.out"} {
		b := string(readFixture(t, f))
		if !strings.Contains(b, "scheduling will stop in "+map[string]string{"sim1-step_cmds/schedctl_S10.out": stepDuration(600), "sim1-step_cmds/schedctl_s300.out": stepDuration(10740)}[f]+" at iteration") {
			t.Errorf("%s: %q", f, b)
		}
	}
}

func TestParsePIDLine(t *testing.T) {
	pid, ok := parsePIDLine(readFixture(t, "sim1-misc/schedctl_l.out"))
	if !ok || pid != 6964 {
		t.Fatalf("pid %d %v", pid, ok)
	}
	if _, ok := parsePIDLine([]byte("ERROR: cannot connect\n")); ok {
		t.Fatal("garbage accepted")
	}
}
