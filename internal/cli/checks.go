package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/nats-io/nats.go"

	"lookahead/internal/natsconn"
)

// Check is one line of a daemon's `check` command: what was checked,
// whether it passed, what was found, and how to fix a failure.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
	// Warn marks a check that passed with a caveat: printed "warn" with
	// its fix; not a failure.
	Warn bool `json:"warn,omitempty"`
	// Unreachable marks a failure to reach a service (NATS): when every
	// failed check is one, the command exits 3, not 1.
	Unreachable bool `json:"unreachable,omitempty"`
}

// PrintChecks writes checks as a table ("ok"/"warn"/"FAIL", name, detail,
// and a "fix:" line under each that has one) or, with format json, as
// a JSON array.
func PrintChecks(w io.Writer, format string, checks []Check) error {
	if format == FormatJSON {
		return WriteJSON(w, checks)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range checks {
		mark := "ok"
		switch {
		case !r.OK:
			mark = "FAIL"
		case r.Warn:
			mark = "warn"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", mark, r.Name, oneLine(r.Detail))
		if r.Fix != "" {
			fmt.Fprintf(tw, "\t\tfix: %s\n", r.Fix)
		}
	}
	return tw.Flush()
}

// ChecksError is the error a `check` command returns: nil when every
// check passed; exit 3 (ExitUnavailable) when every failed check is a
// service that could not be reached, else exit 1.
func ChecksError(checks []Check) error {
	failed, unreachable := 0, 0
	for _, r := range checks {
		if !r.OK {
			failed++
			if r.Unreachable {
				unreachable++
			}
		}
	}
	switch {
	case failed == 0:
		return nil
	case unreachable == failed:
		return CodedError{Code: ExitUnavailable, Err: fmt.Errorf("%d of %d checks failed: a service could not be reached", failed, len(checks))}
	}
	return fmt.Errorf("%d of %d checks failed", failed, len(checks))
}

// oneLine keeps a table row on one line: commands' stderr spans several.
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(strings.TrimSpace(s), func(r rune) bool { return r == '\n' || r == '\r' }), " | ")
}

// CheckNATS connects as cfg says and asks for the grid's JetStream (in
// nats.js_domain when set): the "nats" check of the daemons' `check`
// commands. A failure tells apart a leaf node whose link to the grid is
// down, a missing or wrong nats.js_domain and a leaf node's own JetStream
// (natsconn.Reach.Judge). The connection comes back open when the check
// passed (the caller closes it), nil otherwise.
func CheckNATS(ctx context.Context, cfg natsconn.Config) (Check, *nats.Conn) {
	nc, err := natsconn.Connect(ctx, cfg)
	if natsconn.IsConfigError(err) {
		key, _ := natsconn.Key(err)
		return Check{Name: "nats", Detail: err.Error(), Fix: "fix " + keyOrNATS(key) + " in the configuration (no server was tried)"}, nil
	}
	if err != nil {
		return Check{Name: "nats", Detail: err.Error(), Fix: "check nats.url, the credentials and that the server is reachable",
			Unreachable: true}, nil // as run, which exits 3 when it cannot connect
	}
	v := natsconn.Probe(ctx, nc, cfg.JSDomain).Judge()
	if !v.OK {
		nc.Close()
		return Check{Name: "nats", Detail: "connected, but " + v.Detail, Fix: v.Fix, Unreachable: v.Unreachable}, nil
	}
	return Check{Name: "nats", OK: true, Detail: "connected to " + nc.ConnectedUrlRedacted() + ", " + v.Detail}, nc
}

func keyOrNATS(key string) string {
	if key == "" {
		return "the nats: section"
	}
	return key
}
