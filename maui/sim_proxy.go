package maui

import (
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"lookahead/internal/execx"
)

// Maui serves, in one pass of its client loop, every connection waiting in
// its accept queue, in queue order, and each pass costs 50–150 ms of its
// own sleeps. Commands sent together (a state read, changeparam, schedctl
// -S 1) thus cost one pass instead of one each — if they are queued in the
// right order. A client binary connects whenever it gets to it, so each
// command is given its own one-shot relay: the client connects to the
// relay, the relay connects to Maui and reports once that connection is
// established (queued at Maui); only then is the next command started.

// relay accepts one client connection on a loopback port and pipes it to
// Maui; queued reports when the upstream connection is established.
type relay struct {
	ln     net.Listener
	queued chan error
}

func newRelay(upstream string, timeout time.Duration) (*relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	r := &relay{ln: ln, queued: make(chan error, 1)}
	go r.serve(upstream, timeout)
	return r, nil
}

func (r *relay) port() int { return r.ln.Addr().(*net.TCPAddr).Port }

func (r *relay) serve(upstream string, timeout time.Duration) {
	c, err := r.ln.Accept()
	r.ln.Close()
	if err != nil {
		r.queued <- err
		return
	}
	u, err := net.DialTimeout("tcp", upstream, timeout)
	if err != nil {
		c.Close()
		r.queued <- fmt.Errorf("connect to maui at %s: %w", upstream, err)
		return
	}
	r.queued <- nil
	go pipe(u, c)
	pipe(c, u)
}

func pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	if tc, ok := dst.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	src.Close()
}

// pending is a client command started through a relay.
type pending struct {
	name   string
	cmd    *exec.Cmd
	stdout *execx.BoundedBuffer
	stderr *execx.BoundedBuffer
	done   chan struct{}
	relay  *relay
}

// startQueued starts a Maui client command and returns once its connection
// is queued at Maui (or the command ended without connecting).
func (in *instance) startQueued(ctx context.Context, name string, args ...string) (*pending, error) {
	in.commands++
	rl, err := newRelay("127.0.0.1:"+strconv.Itoa(in.port), in.callTimeout)
	if err != nil {
		return nil, err
	}
	full := append([]string{"--port=" + strconv.Itoa(rl.port())}, args...)
	cmd := exec.CommandContext(ctx, filepath.Join(in.binDir, name), full...)
	cmd.Env = in.env
	p := &pending{name: name, cmd: cmd, stdout: execx.NewBoundedBuffer(16 << 20), stderr: execx.NewBoundedBuffer(64 << 10), done: make(chan struct{}), relay: rl}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		rl.ln.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	select {
	case err := <-rl.queued:
		return p, err
	case <-p.done:
		rl.ln.Close()
		return p, nil
	case <-time.After(in.callTimeout):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		rl.ln.Close()
		return p, fmt.Errorf("%s %v: not connected within %v", name, args, in.callTimeout)
	}
}

// wait waits for a started command and returns what it printed.
func (p *pending) wait(timeout time.Duration) (Result, error) {
	select {
	case <-p.done:
	case <-time.After(timeout):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
		return Result{ExitCode: -1}, fmt.Errorf("%s: timed out after %v", p.name, timeout)
	}
	res := Result{Stdout: p.stdout.Bytes(), Stderr: p.stderr.Bytes(), ExitCode: -1}
	if p.cmd.ProcessState != nil {
		res.ExitCode = p.cmd.ProcessState.ExitCode()
	}
	return res, nil
}

// runQueued runs one command through a relay and waits for it.
func (in *instance) runQueued(ctx context.Context, name string, args ...string) (Result, error) {
	p, err := in.startQueued(ctx, name, args...)
	if err != nil {
		if p != nil {
			_, _ = p.wait(in.callTimeout)
		}
		return Result{ExitCode: -1}, err
	}
	return p.wait(in.callTimeout)
}
