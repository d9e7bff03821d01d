package maui

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"lookahead/internal/execx"
)

// Armed commands: a client started ahead of time whose connection its
// relay holds until it is released, so a batch reaches Maui's accept queue
// within a fraction of a millisecond of the moment it may (sim_free.go).

// heldRelay is a relay whose upstream connection is handed to it on
// release; at Maui's first answer byte it runs onAnswer, in its own
// goroutine, before passing the answer on.
type heldRelay struct {
	ln       net.Listener
	accepted chan error    // the client connected (nil) or failed
	upstream chan net.Conn // the connection to Maui, once released
	mu       sync.Mutex
	onAnswer func() // run once, at the first answer byte
	answered bool
}

func newHeldRelay(timeout time.Duration) (*heldRelay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	r := &heldRelay{ln: ln, accepted: make(chan error, 1), upstream: make(chan net.Conn, 1)}
	go r.serve(timeout)
	return r, nil
}

// then sets what runs at the first answer byte; it runs at once (and then
// reports false) when the answer came already.
func (r *heldRelay) then(f func()) bool {
	r.mu.Lock()
	if !r.answered {
		r.onAnswer = f
		r.mu.Unlock()
		return true
	}
	r.mu.Unlock()
	f()
	return false
}

func (r *heldRelay) answer() {
	r.mu.Lock()
	f := r.onAnswer
	r.answered, r.onAnswer = true, nil
	r.mu.Unlock()
	if f != nil {
		f()
	}
}

func (r *heldRelay) serve(timeout time.Duration) {
	c, err := r.ln.Accept()
	r.ln.Close()
	r.accepted <- err
	if err != nil {
		return
	}
	var u net.Conn
	select {
	case u = <-r.upstream:
	case <-time.After(timeout):
		c.Close()
		return
	}
	if u == nil {
		c.Close()
		return
	}
	go pipe(u, c)
	buf := make([]byte, 32<<10)
	first := true
	for {
		n, err := u.Read(buf)
		if n > 0 && first {
			first = false
			r.answer()
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
	if first {
		r.answer()
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
	in.mu.Lock()
	in.commands++
	in.mu.Unlock()
	rl, err := newHeldRelay(in.callTimeout)
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

// releaseAll connects the armed commands to Maui, in order, in the
// calling goroutine: each connection is in Maui's accept queue when its
// dial returns.
func releaseAll(upstream string, as []*armed, timeout time.Duration) error {
	for i, a := range as {
		u, err := net.DialTimeout("tcp", upstream, timeout)
		if err != nil {
			for _, b := range as[i:] {
				b.held.upstream <- nil
			}
			return fmt.Errorf("connect to maui at %s: %w", upstream, err)
		}
		a.held.upstream <- u
	}
	return nil
}

// abandon kills armed commands.
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
