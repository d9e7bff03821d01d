package faultnet

import (
	"fmt"
	"net"
	"sync"
	"time"
)

// Proxy forwards every connection made to its address to the target.
// SetLatency delays every chunk by a one-way delay in each direction
// (order kept, bandwidth not limited); Stall stops forwarding while the
// connections stay open (a link that black-holes traffic) until Resume;
// Cut closes every connection and refuses new ones until Heal. Safe for
// concurrent use.
type Proxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	delay   time.Duration
	stalled chan struct{} // closed when not stalled
	cut     bool
	conns   map[net.Conn]struct{}
	closed  bool
	wg      sync.WaitGroup
}

// Start listens on a free loopback port and forwards to target.
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy to %s: %w", target, err)
	}
	p := &Proxy{ln: ln, target: target, stalled: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	close(p.stalled)
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetLatency sets the one-way delay added to each direction (0: none).
func (p *Proxy) SetLatency(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// Stall stops forwarding; the connections stay open.
func (p *Proxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.stalled:
		p.stalled = make(chan struct{})
	default:
	}
}

// Resume forwards again what a stall held back, in order.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.stalled:
	default:
		close(p.stalled)
	}
}

// Cut closes every connection and refuses new ones until Heal.
func (p *Proxy) Cut() {
	p.mu.Lock()
	p.cut = true
	conns := p.conns
	p.conns = map[net.Conn]struct{}{}
	p.mu.Unlock()
	for c := range conns {
		c.Close()
	}
}

// Heal accepts connections again after a Cut.
func (p *Proxy) Heal() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

// Close stops the proxy and closes its connections.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.ln.Close()
	p.Cut()
	p.Resume()
	p.wg.Wait()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refuse := p.cut || p.closed
		p.mu.Unlock()
		if refuse {
			in.Close()
			continue
		}
		out, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			in.Close()
			continue
		}
		if !p.track(in, out) {
			in.Close()
			out.Close()
			continue
		}
		p.wg.Add(2)
		go p.pipe(in, out)
		go p.pipe(out, in)
	}
}

// track adds a connection pair unless the link was cut meanwhile.
func (p *Proxy) track(a, b net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut || p.closed {
		return false
	}
	p.conns[a], p.conns[b] = struct{}{}, struct{}{}
	return true
}

// chunk is bytes read at one instant, due for writing after the delay.
type chunk struct {
	data []byte
	due  time.Time
}

// pipe copies src to dst through a delay line: a reader stamps each chunk
// with its due time, a writer writes it then (and not while stalled).
func (p *Proxy) pipe(src, dst net.Conn) {
	defer p.wg.Done()
	line := make(chan chunk, 4096)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range line {
			if !p.wait(c.due) {
				break
			}
			if _, err := dst.Write(c.data); err != nil {
				break
			}
		}
		src.Close()
		dst.Close()
		for range line {
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			d := p.delay
			p.mu.Unlock()
			line <- chunk{data: append([]byte(nil), buf[:n]...), due: time.Now().Add(d)}
		}
		if err != nil { // EOF, a reset or a Cut: the other direction goes too
			break
		}
	}
	close(line)
	<-done
}

// wait blocks until due and while the proxy is stalled; false when the
// proxy closed.
func (p *Proxy) wait(due time.Time) bool {
	for {
		p.mu.Lock()
		stalled, closed := p.stalled, p.closed
		p.mu.Unlock()
		if closed {
			return false
		}
		<-stalled
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		p.mu.Lock()
		still := p.stalled
		p.mu.Unlock()
		select {
		case <-still:
			return true
		default: // stalled again while sleeping
		}
	}
}
