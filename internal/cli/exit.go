package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"syscall"
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

// ExitCodesHelp is the exit codes as every binary's --help states them
// (the README's table in short).
const ExitCodesHelp = `Exit codes: 0 success; 1 the machinery failed (I/O, a tool, a server);
2 bad flags, config or input (the message names the flag, key or file);
3 a service (NATS, broker, agent) could not be reached; 4 refused
(over budget, forbidden, not found); 130 interrupted (SIGINT/SIGTERM).
Commands that print data take -o json (an error is then a JSON object
on stderr).`

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
// A file or directory that does not exist (fs.ErrNotExist anywhere in the
// chain: a named input, a config file, a log directory, a tool's path),
// and a directory named where a file goes (EISDIR), are bad input, 2,
// whatever else wraps them.
func ExitCode(err error) int {
	var coded CodedError
	var usage UsageError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.EISDIR):
		return ExitUsage
	case errors.As(err, &coded):
		return coded.Code
	case errors.As(err, &usage), isBadInput(err):
		return ExitUsage
	default:
		return ExitFailure
	}
}

// Unreachable marks err, a failure to connect to a service (NATS, the
// broker, an agent), with ExitUnavailable — unless err is bad input
// (settings that cannot work: a NATS URL that is not one, two identities
// at once, a credentials file that is not there): that is the user's to
// fix, ExitUsage, and retrying would not help.
func Unreachable(err error) error {
	if err == nil {
		return nil
	}
	if isBadInput(err) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.EISDIR) {
		return UsageError{Err: err}
	}
	return CodedError{Code: ExitUnavailable, Err: err}
}

// isBadInput reports whether an error in err's chain says it is bad
// input (a BadInput method returning true, as forecast.ErrInvalid has):
// packages above this one mark their input errors so without this package
// importing them.
func isBadInput(err error) bool {
	var b interface{ BadInput() bool }
	return errors.As(err, &b) && b.BadInput()
}

// Main runs a command under a context cancelled by SIGINT/SIGTERM, prints
// the error (if any) on stderr as "<name>: <error>" and exits with
// ExitCode. A command that a signal stopped before it finished (it
// returned an error) exits 130; one that finished its work on the signal
// (a daemon's run: stopping is how it ends) returned nil and exits 0.
func Main(name string, run func(ctx context.Context) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	interrupted := ctx.Err() != nil
	stop()
	os.Exit(report(os.Stderr, name, err, interrupted))
}

func report(w io.Writer, name string, err error, interrupted bool) int {
	code := ExitCode(err)
	if err != nil && interrupted {
		code = ExitInterrupted
	}
	if err == nil || code == ExitInterrupted {
		return code
	}
	var j JSONError
	if errors.As(err, &j) {
		if WriteJSON(w, ErrorReport{Error: err.Error(), ExitCode: code, Kind: kinds[code], Command: j.Command}) == nil {
			return code
		}
	}
	fmt.Fprintf(w, "%s: %v\n", name, err)
	return code
}

// JSONError marks the error of a command run with -o json: it is
// reported on stderr as one ErrorReport, not as text.
type JSONError struct {
	Err     error
	Command string // e.g. "lookahead plan"
}

func (e JSONError) Error() string { return e.Err.Error() }
func (e JSONError) Unwrap() error { return e.Err }

// ErrorReport is the one JSON shape of every error under -o json.
type ErrorReport struct {
	Error    string `json:"error"`
	ExitCode int    `json:"exit_code"`
	Kind     string `json:"kind"` // failure, usage, unavailable, refused
	Command  string `json:"command"`
}

var kinds = map[int]string{ExitFailure: "failure", ExitUsage: "usage", ExitUnavailable: "unavailable", ExitRefused: "refused"}
