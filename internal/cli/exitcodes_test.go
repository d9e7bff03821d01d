package cli_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"lookahead/internal/cli"
	"lookahead/internal/cli/clitest"
	"lookahead/internal/natstest"
)

// TestExitCodesOfEveryBinary builds the three binaries and runs them as a
// user would, checking each exit code against the README's table: 2 for
// bad flags, arguments, config and missing input files; 3 for an
// unreachable service; 4 for a refusal; 130 for an interrupted command;
// 0 for a daemon stopped by SIGTERM or SIGINT (its normal end).
func TestExitCodesOfEveryBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	bin := binaries(t)
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unitless := file("agent-unitless.yaml", "site: a\nintervals:\n  refresh: 60\n")
	brokerUnitless := file("broker-unitless.yaml", "planning:\n  cycle: 30\n")
	noPBS := file("agent-nopbs.yaml", "site: a\ntorque: {pbs_home: "+filepath.Join(dir, "nonexistent")+"}\n")
	dead := "nats://127.0.0.1:1"
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		want int
		args []string
		says string
	}{
		{0, []string{"lookahead", "--version"}, ""},
		{2, []string{"lookahead", "--bogus"}, "unknown flag: --bogus"},
		{2, []string{"lookahead", "nosuch"}, `unknown command "nosuch"`},
		{2, []string{"lookahead", "cancel"}, "accepts 1 arg"},
		{2, []string{"lookahead", "submit", "--walltime", "60"}, `invalid argument "60" for "--walltime"`},
		{2, []string{"lookahead", "plan", "--forecast", missing + ".json", "--jobs", missing + ".json"}, "no such file"},
		{2, []string{"lookahead", "simulate", "--trace", missing + ".swf"}, "no such file"},
		{2, []string{"lookahead", "forecast", "--snapshot", missing + ".json"}, "no such file"},
		{2, []string{"lookahead", "replay", "--scenario", missing + ".yaml"}, "no such file"},
		{2, []string{"lookahead", "submit", missing + ".json"}, "no such file"},
		{3, []string{"lookahead", "status", "--nats-url", dead, "--timeout", "1s"}, "unavailable"},
		{0, []string{"lookahead-agent", "--version"}, ""},
		{2, []string{"lookahead-agent", "--bogus"}, "unknown flag: --bogus"},
		{2, []string{"lookahead-agent", "run", "extra"}, `unknown command "extra"`},
		{2, []string{"lookahead-agent", "run", "--config", unitless}, unitless + ":3: intervals.refresh: 60 has no unit"},
		{2, []string{"lookahead-agent", "check", "--config", unitless}, "intervals.refresh"},
		{2, []string{"lookahead-agent", "config", "--config", missing + ".yaml"}, "no such file"},
		{2, []string{"lookahead-agent", "events", "--config", noPBS}, "no such file"},
		{2, []string{"lookahead-agent", "forecast", "--once", "--site", "a", "--config", noPBS, "--snapshot", missing + ".json"}, "no such file"},
		{3, []string{"lookahead-agent", "run", "--site", "a", "--config", noPBS, "--nats-url", dead}, "no servers available"},
		{0, []string{"lookahead-broker", "--version"}, ""},
		{2, []string{"lookahead-broker", "--bogus"}, "unknown flag: --bogus"},
		{2, []string{"lookahead-broker", "run", "--cycle", "30"}, `invalid argument "30" for "--cycle"`},
		{2, []string{"lookahead-broker", "run", "--config", brokerUnitless}, brokerUnitless + ":2: planning.cycle: 30 has no unit"},
		{2, []string{"lookahead-broker", "config", "--config", missing + ".yaml"}, "no such file"},
		{3, []string{"lookahead-broker", "run", "--nats-url", dead, "--config", file("b.yaml", "state_dir: "+dir+"\n")}, "no servers available"},
	} {
		out, code := run(t, bin, nil, tc.args...)
		if code != tc.want || !strings.Contains(out, tc.says) {
			t.Errorf("%s: exit %d, want %d; output must contain %q:\n%s", strings.Join(tc.args, " "), code, tc.want, tc.says, out)
		}
	}
}

// TestExitCodesWithAServer: refusals exit 4; daemons stopped by SIGTERM or
// SIGINT exit 0 (their normal end, which systemd counts as success); an
// interrupted command (the demo) exits 130.
func TestExitCodesWithAServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	bin := binaries(t)
	url := natsServer(t)
	env := []string{"LOOKAHEAD_NATS_URL=" + url, "LOOKAHEAD_STATE_DIR=" + t.TempDir()}
	broker := start(t, bin, env, "lookahead-broker", "run", "--metrics-listen", "off")
	broker.waitFor(t, "broker ready")
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"lookahead", "submit", "--procs", "1", "--walltime", "1h", "--max-price", "1", "--user", "alice", "--account", "p"}, "may not submit"},
		{[]string{"lookahead", "cancel", "g999"}, "g999"},
	} {
		out, code := run(t, bin, env, tc.args...)
		if code != cli.ExitRefused || !strings.Contains(out, tc.says) {
			t.Errorf("%s: exit %d, want %d, saying %q:\n%s", strings.Join(tc.args, " "), code, cli.ExitRefused, tc.says, out)
		}
	}
	broker.stop(t, syscall.SIGTERM, 0)
	broker = start(t, bin, env, "lookahead-broker", "run", "--metrics-listen", "off")
	broker.waitFor(t, "broker ready")
	broker.stop(t, syscall.SIGINT, 0)

	agentEnv := append(env, "LOOKAHEAD_SITE=alpha", "LOOKAHEAD_BACKEND=simulated")
	agent := start(t, bin, agentEnv, "lookahead-agent", "run")
	agent.waitFor(t, "agent starting")
	agent.stop(t, syscall.SIGTERM, 0)

	demo := start(t, bin, nil, "lookahead", "demo", "--duration", "60s", "--color", "never")
	demo.waitFor(t, "online")
	demo.stop(t, syscall.SIGINT, cli.ExitInterrupted)
	if !strings.Contains(demo.output(), "summary (interrupted)") {
		t.Errorf("interrupted demo:\n%s", demo.output())
	}
}

// run runs one binary to its end (at most a minute) and returns its
// output (stdout and stderr) and exit code.
func run(t *testing.T, bin string, env []string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, args[0]), args[1:]...)
	cmd.Env = append(cleanEnv(), env...)
	out, err := cmd.CombinedOutput()
	code := clitest.ExitCode(err)
	if code < 0 {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), code
}

// cleanEnv is the environment without LOOKAHEAD_* variables.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LOOKAHEAD_") {
			out = append(out, kv)
		}
	}
	return out
}

// proc is a running binary whose output is kept.
type proc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	buf  bytes.Buffer
	done chan error
}

func (p *proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.Write(b)
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.String()
}

func start(t *testing.T, bin string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(filepath.Join(bin, args[0]), args[1:]...), done: make(chan error, 1)}
	p.cmd.Env = append(cleanEnv(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() { // stop and waitFor put Wait's result back
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

func (p *proc) waitFor(t *testing.T, text string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(p.output(), text) {
		select {
		case err := <-p.done:
			p.done <- err
			t.Fatalf("%v ended (%v) before saying %q:\n%s", p.cmd.Args, err, text, p.output())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v did not say %q in a minute:\n%s", p.cmd.Args, text, p.output())
		}
	}
}

func (p *proc) stop(t *testing.T, sig syscall.Signal, want int) {
	t.Helper()
	p.cmd.Process.Signal(sig)
	select {
	case err := <-p.done:
		p.done <- err
		if code := clitest.ExitCode(err); code != want {
			t.Errorf("%v after %v: exit %d (%v), want %d:\n%s", p.cmd.Args, sig, code, err, want, p.output())
		}
	case <-time.After(time.Minute):
		t.Fatalf("%v did not stop on %v", p.cmd.Args, sig)
	}
}

// TestNobodyAnswersSaysWhoAndHow: with a NATS server up and no broker or
// agent on it, the CLIs say that no broker (agent) answers and how to
// start one, not "nats: no responders"; exit 3.
func TestNobodyAnswersSaysWhoAndHow(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	bin := binaries(t)
	env := []string{"LOOKAHEAD_NATS_URL=" + natsServer(t)}
	for _, tc := range []struct {
		args []string
		says []string
	}{
		{[]string{"lookahead", "status"}, []string{"no broker answers on the NATS server", "lookahead-broker run"}},
		{[]string{"lookahead", "submit", "--procs", "1", "--walltime", "1h", "--max-price", "1"}, []string{"no broker answers", "systemctl start lookahead-broker"}},
		{[]string{"lookahead-broker", "status", "--timeout", "200ms"}, []string{"no broker answers on the NATS server"}},
		{[]string{"lookahead-broker", "step-down"}, []string{"no broker answers on the NATS server"}},
		{[]string{"lookahead-agent", "status", "--site", "alpha"}, []string{"no agent of site alpha answers", "systemctl start lookahead-agent"}},
	} {
		out, code := run(t, bin, env, tc.args...)
		for _, s := range tc.says {
			if code != cli.ExitUnavailable || !strings.Contains(out, s) || strings.Contains(out, "no responders") {
				t.Errorf("%s: exit %d, want 3 saying %q (not \"no responders\"):\n%s", strings.Join(tc.args, " "), code, s, out)
			}
		}
	}
}

// natsServer starts an embedded NATS server with JetStream for the test
// and returns its URL.
func natsServer(t *testing.T) string {
	t.Helper()
	return natstest.Server(t).ClientURL()
}

// TestStrayNATSVariablesAreSaid: a LOOKAHEAD_NATS_* variable the CLI does
// not read (a daemon's nats.urls, a misspelt name) is said on stderr, not
// silently replaced by the default server; the ones it reads are not.
func TestStrayNATSVariablesAreSaid(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	bin := binaries(t)
	out, code := run(t, bin, []string{"LOOKAHEAD_NATS_URLS=nats://grid1:4222", "LOOKAHEAD_NATS_URL=nats://127.0.0.1:1"}, "lookahead", "sites")
	if code != cli.ExitUnavailable || !strings.Contains(out, "warning: LOOKAHEAD_NATS_URLS is set but this command reads no such variable") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	if strings.Contains(out, "LOOKAHEAD_NATS_URL is set") {
		t.Errorf("warned of a variable it reads:\n%s", out)
	}
}
