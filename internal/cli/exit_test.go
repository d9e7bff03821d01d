package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// badInput is an error of a package above this one that says it is bad
// input, as forecast.ErrInvalid does.
type badInput struct{ bad bool }

func (badInput) Error() string    { return "invalid input" }
func (b badInput) BadInput() bool { return b.bad }

func TestExitCode(t *testing.T) {
	_, notExist := os.Open("/nonexistent/file")
	_, isDir := os.ReadFile(os.TempDir())
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{errors.New("boom"), ExitFailure},
		{Usagef("bad"), ExitUsage},
		{fmt.Errorf("x: %w", badInput{true}), ExitUsage},
		{errors.Join(errors.New("a"), fmt.Errorf("x: %w", badInput{true})), ExitUsage},
		{fmt.Errorf("x: %w", badInput{false}), ExitFailure},
		{fmt.Errorf("open trace: %w", notExist), ExitUsage},
		{fmt.Errorf("--script /tmp: %w", isDir), ExitUsage},
		{CodedError{Code: ExitUnavailable, Err: fmt.Errorf("tail: %w", notExist)}, ExitUsage}, // a missing directory is input
		{CodedError{Code: ExitRefused, Err: errors.New("forbidden")}, ExitRefused},
		{CodedError{Code: ExitUnavailable, Err: context.Canceled}, ExitInterrupted},
		{fmt.Errorf("demo: %w", context.Canceled), ExitInterrupted},
		{Unreachable(errors.New("connect to nats: no servers available")), ExitUnavailable},
		{Unreachable(fmt.Errorf("nats: choose one: %w", badInput{true})), ExitUsage}, // settings that cannot work, not a server
		{Unreachable(fmt.Errorf("nats.creds: %w", os.ErrPermission)), ExitUnavailable},
		{Unreachable(fmt.Errorf("nats.creds: %w", notExist)), ExitUsage},
		{Unreachable(nil), ExitOK},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestReportAfterASignal(t *testing.T) {
	var w bytes.Buffer
	if code := report(&w, "x", CodedError{Code: ExitUnavailable, Err: errors.New("nats: connection closed")}, true); code != ExitInterrupted || w.Len() != 0 {
		t.Fatalf("a command stopped by a signal: exit %d, printed %q", code, w.String())
	}
	if code := report(&w, "x", nil, true); code != ExitOK {
		t.Fatalf("a daemon that stopped cleanly on a signal: exit %d", code)
	}
	if code := report(&w, "x", errors.New("boom"), false); code != ExitFailure || w.String() != "x: boom\n" {
		t.Fatalf("exit %d, printed %q", code, w.String())
	}
}

func TestExecuteMarksErrorsBeforeRunAsUsage(t *testing.T) {
	ran := false
	newRoot := func() *cobra.Command {
		root := &cobra.Command{Use: "x", SilenceErrors: true, SilenceUsage: true}
		root.AddCommand(&cobra.Command{Use: "sub", Args: cobra.NoArgs, RunE: func(*cobra.Command, []string) error {
			ran = true
			return errors.New("failed while running")
		}})
		return root
	}
	for _, args := range [][]string{{"--bogus"}, {"sub", "extra"}, {"nosuch"}, {"sub", "--bogus"}, {"completion", "bsh"}} {
		err := ExecuteArgs(context.Background(), newRoot(), args)
		if ExitCode(err) != ExitUsage {
			t.Errorf("%v: %v (exit %d), want a usage error", args, err, ExitCode(err))
		}
	}
	root := newRoot()
	root.AddCommand(&cobra.Command{Use: "cancel ID", Args: cobra.ExactArgs(1), RunE: func(*cobra.Command, []string) error { return nil }})
	if err := ExecuteArgs(context.Background(), root, []string{"cancel"}); ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "usage: x cancel ID [flags]; see 'x cancel --help'") {
		t.Errorf("no argument: %v, want the usage line", err)
	}
	for _, args := range [][]string{{"completion"}, {"completion", "bash"}} {
		root := newRoot()
		root.SetOut(io.Discard)
		if err := ExecuteArgs(context.Background(), root, args); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
	if err := ExecuteArgs(context.Background(), newRoot(), []string{"sub"}); !ran || ExitCode(err) != ExitFailure {
		t.Fatalf("an error from RunE: %v (exit %d), want 1", err, ExitCode(err))
	}
}

// Issue 23.6: errors were plain text even with -o json; they are one JSON
// object on stderr. Issue 38: also when -o json follows a bad flag; and a
// command whose output is JSON by default (the daemons' config) reports
// its errors as text unless -o json was asked for.
func TestErrorsUnderJSONOutputAreJSON(t *testing.T) {
	newRoot := func() *cobra.Command {
		var format, def string
		root := &cobra.Command{Use: "x", SilenceErrors: true, SilenceUsage: true}
		sub := &cobra.Command{Use: "sub", RunE: func(*cobra.Command, []string) error { return Usagef("--procs 0: must be > 0") }}
		AddOutputFlag(sub, &format)
		cfg := &cobra.Command{Use: "config", RunE: func(*cobra.Command, []string) error { return Usagef("budgets: -5") }}
		AddOutputFlagDefault(cfg, &def, FormatJSON)
		root.AddCommand(sub, cfg)
		return root
	}
	for _, tc := range []struct {
		args []string
		kind string
		json bool
	}{
		{[]string{"sub", "-o", "json"}, "usage", true},
		{[]string{"sub", "-o", "json", "--bogus"}, "usage", true},
		{[]string{"sub", "--bogus", "-o", "json"}, "usage", true},
		{[]string{"sub", "--bogus", "--output=json"}, "usage", true},
		{[]string{"sub"}, "", false},
		{[]string{"config"}, "", false},
		{[]string{"config", "-o", "json"}, "usage", true},
		{[]string{"config", "-o", "table"}, "", false},
	} {
		err := ExecuteArgs(context.Background(), newRoot(), tc.args)
		var w bytes.Buffer
		code := report(&w, "x", err, false)
		var rep ErrorReport
		isJSON := json.Unmarshal(w.Bytes(), &rep) == nil
		if code != ExitUsage || isJSON != tc.json {
			t.Errorf("%v: exit %d, printed %q", tc.args, code, w.String())
			continue
		}
		if tc.json && (rep.Kind != tc.kind || rep.ExitCode != ExitUsage || rep.Command != "x "+tc.args[0] || rep.Error == "") {
			t.Errorf("%v: report %+v", tc.args, rep)
		}
	}
}
