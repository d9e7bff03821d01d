package faultnet

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

// echo is a server that writes back every line it reads.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

func dial(t *testing.T, p *Proxy) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

func roundTrip(t *testing.T, c net.Conn, r *bufio.Reader, line string) (string, error) {
	t.Helper()
	if _, err := c.Write([]byte(line + "\n")); err != nil {
		return "", err
	}
	got, err := r.ReadString('\n')
	return got, err
}

func TestForwardsAddsLatencyAndStalls(t *testing.T) {
	p, err := Start(echo(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, r := dial(t, p)
	if got, err := roundTrip(t, c, r, "one"); err != nil || got != "one\n" {
		t.Fatalf("through the proxy: %q %v", got, err)
	}
	p.SetLatency(50 * time.Millisecond)
	began := time.Now()
	if got, err := roundTrip(t, c, r, "two"); err != nil || got != "two\n" {
		t.Fatalf("with latency: %q %v", got, err)
	}
	if took := time.Since(began); took < 100*time.Millisecond { // a lower bound: each way waits at least the delay
		t.Errorf("a round trip with 50 ms each way took %v", took)
	}
	p.SetLatency(0)
	p.Stall()
	c.Write([]byte("three\n"))
	c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if got, err := r.ReadString('\n'); err == nil {
		t.Fatalf("a stalled link forwarded %q", got)
	}
	c.SetReadDeadline(time.Time{})
	p.Resume()
	if got, err := r.ReadString('\n'); err != nil || got != "three\n" {
		t.Fatalf("after the stall: %q %v", got, err)
	}
}

func TestCutClosesAndRefusesUntilHealed(t *testing.T) {
	p, err := Start(echo(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, r := dial(t, p)
	if _, err := roundTrip(t, c, r, "one"); err != nil {
		t.Fatal(err)
	}
	p.Cut()
	if _, err := r.ReadString('\n'); err == nil {
		t.Fatal("a connection survived the cut")
	}
	c2, r2 := dial(t, p)
	if got, err := roundTrip(t, c2, r2, "two"); err == nil {
		t.Fatalf("a new connection went through a cut link: %q", got)
	}
	p.Heal()
	c3, r3 := dial(t, p)
	if got, err := roundTrip(t, c3, r3, "three"); err != nil || got != "three\n" {
		t.Fatalf("after healing: %q %v", got, err)
	}
}
