package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"lookahead/forecast"
)

// Exit codes of every lookahead binary. Documented in the README; keep them
// stable.
const (
	ExitOK          = 0   // success (also: valid input, some jobs did not fit)
	ExitFailure     = 1   // the machinery failed (I/O, a tool, a server)
	ExitUsage       = 2   // bad flags, bad config or invalid input
	ExitUnavailable = 3   // a service (NATS, broker, agent) could not be reached
	ExitRefused     = 4   // the request was understood and refused (over budget, forbidden, not found)
	ExitInterrupted = 130 // stopped by SIGINT/SIGTERM
)

// UsageError marks an error the user can fix by changing flags or input.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef builds a UsageError.
func Usagef(format string, args ...any) error {
	return UsageError{Err: fmt.Errorf(format, args...)}
}

// CodedError carries an explicit exit code (refusals, unavailable services).
type CodedError struct {
	Code int
	Err  error
}

func (e CodedError) Error() string { return e.Err.Error() }
func (e CodedError) Unwrap() error { return e.Err }

// ExitCode is the one place that maps an error to the process exit code.
func ExitCode(err error) int {
	var coded CodedError
	var usage UsageError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &coded):
		return coded.Code
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.As(err, &usage), errors.Is(err, forecast.ErrInvalid):
		return ExitUsage
	default:
		return ExitFailure
	}
}

// Main runs a command under a context cancelled by SIGINT/SIGTERM, prints
// the error (if any) on stderr as "<name>: <error>" and exits with
// ExitCode.
func Main(name string, run func(ctx context.Context) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	os.Exit(report(os.Stderr, name, err))
}

func report(w io.Writer, name string, err error) int {
	code := ExitCode(err)
	if err != nil && code != ExitInterrupted {
		fmt.Fprintf(w, "%s: %v\n", name, err)
	}
	return code
}
