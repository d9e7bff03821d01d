package maui

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"lookahead/internal/execx"
)

// Armed commands: a client started ahead of time whose connection the
// relay holds until release, so a batch reaches Maui's accept queue within
// a fraction of a millisecond of the moment it may (see batchPhase).

// heldRelay is a relay that connects upstream only once released, and
// reports when Maui's answer starts.
type heldRelay struct {
	ln       net.Listener
	accepted chan error    // the client connected (nil) or failed
	release  chan struct{} // closed: connect upstream
	queued   chan error    // upstream connected (nil) or failed
	answered chan struct{} // closed at Maui's first answer byte
}

func newHeldRelay(upstream string, timeout time.Duration) (*heldRelay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	r := &heldRelay{ln: ln, accepted: make(chan error, 1), release: make(chan struct{}), queued: make(chan error, 1), answered: make(chan struct{})}
	go r.serve(upstream, timeout)
	return r, nil
}

func (r *heldRelay) serve(upstream string, timeout time.Duration) {
	c, err := r.ln.Accept()
	r.ln.Close()
	r.accepted <- err
	if err != nil {
		return
	}
	select {
	case <-r.release:
	case <-time.After(timeout):
		c.Close()
		r.queued <- fmt.Errorf("relay: never released")
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
	first := true
	buf := make([]byte, 32<<10)
	for {
		n, err := u.Read(buf)
		if n > 0 && first {
			first = false
			close(r.answered)
		}
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	u.Close()
}

// armed is a client command started and connected to its held relay.
type armed struct {
	pending
	held *heldRelay
}

// arm starts a Maui client whose connection waits in a held relay.
func (in *instance) arm(ctx context.Context, name string, args ...string) (*armed, error) {
	in.commands++
	rl, err := newHeldRelay("127.0.0.1:"+strconv.Itoa(in.port), in.callTimeout)
	if err != nil {
		return nil, err
	}
	full := append([]string{"--port=" + strconv.Itoa(rl.ln.Addr().(*net.TCPAddr).Port)}, args...)
	cmd := exec.CommandContext(ctx, filepath.Join(in.binDir, name), full...)
	cmd.Env = in.env
	a := &armed{pending: pending{name: name, cmd: cmd, stdout: execx.NewBoundedBuffer(16 << 20), stderr: execx.NewBoundedBuffer(64 << 10), done: make(chan struct{})}, held: rl}
	cmd.Stdout, cmd.Stderr = a.stdout, a.stderr
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		rl.ln.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	go func() { _ = cmd.Wait(); close(a.done) }()
	select {
	case err := <-rl.accepted:
		if err != nil {
			return a, fmt.Errorf("%s %v: %w", name, args, err)
		}
		return a, nil
	case <-a.done:
		rl.ln.Close()
		return a, fmt.Errorf("%s %v: ended before connecting", name, args)
	case <-time.After(in.callTimeout):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		rl.ln.Close()
		return a, fmt.Errorf("%s %v: not connected within %v", name, args, in.callTimeout)
	}
}

// releaseAll queues the armed commands at Maui, in order: each connects
// once the one before is connected.
func releaseAll(as []*armed) error {
	for _, a := range as {
		close(a.held.release)
		if err := <-a.held.queued; err != nil {
			return err
		}
	}
	return nil
}

// abandon kills armed commands never released.
func abandon(as []*armed) {
	for _, a := range as {
		if a == nil {
			continue
		}
		select {
		case <-a.done:
		default:
			_ = syscall.Kill(-a.cmd.Process.Pid, syscall.SIGKILL)
			<-a.done
		}
	}
}
