package natsembed

import (
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// readyWithin is how long a started server may take to accept connections.
const readyWithin = 10 * time.Second

// fatalLog is an embedded server's logger: it says nothing and keeps the
// first fatal error (a port it cannot listen on, a JetStream store it
// cannot open), after which the server gives up starting.
type fatalLog struct {
	mu    sync.Mutex
	fatal *fatalError
}

func (l *fatalLog) Fatalf(format string, v ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fatal == nil {
		l.fatal = &fatalError{msg: fmt.Sprintf(format, v...)}
		for _, a := range v {
			if err, ok := a.(error); ok && l.fatal.cause == nil {
				l.fatal.cause = err
			}
		}
	}
}

// fatalError is what the server said, wrapping the error it said it of
// (e.g. the listener's *net.OpError).
type fatalError struct {
	msg   string
	cause error
}

func (e *fatalError) Error() string { return e.msg }
func (e *fatalError) Unwrap() error { return e.cause }

func (l *fatalLog) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fatal == nil {
		return nil
	}
	return l.fatal
}

func (*fatalLog) Noticef(string, ...any) {}
func (*fatalLog) Warnf(string, ...any)   {}
func (*fatalLog) Errorf(string, ...any)  {}
func (*fatalLog) Debugf(string, ...any)  {}
func (*fatalLog) Tracef(string, ...any)  {}

// run starts ns and waits until it accepts connections; a fatal error it
// logs on the way (e.g. "Error listening on port: 127.0.0.1:4222, \"listen
// tcp 127.0.0.1:4222: bind: address already in use\"") ends the wait at
// once and is the error.
func run(ns *server.Server) error {
	log := &fatalLog{}
	ns.SetLoggerV2(log, false, false, false)
	ns.Start()
	for deadline := time.Now().Add(readyWithin); ; {
		if ns.ReadyForConnections(50 * time.Millisecond) {
			return nil
		}
		if err := log.err(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %v", readyWithin)
		}
	}
}
