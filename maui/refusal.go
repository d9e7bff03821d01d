package maui

import (
	"errors"
	"fmt"
)

// Code is a stable reason a request was refused. Codes are part of the
// agent's wire answers: never rename one.
type Code string

// Refusal codes.
const (
	CodeBadIdentity  Code = "bad_identity"  // user/group/account/job/node is not a plain name, or no ACL identity
	CodeBadTime      Code = "bad_time"      // start in the past, end not after start, Maui refused the time
	CodeBadCount     Code = "bad_count"     // no hosts, procs <= 0, a node twice, procs above capacity
	CodeUnknownNode  Code = "unknown_node"  // Maui knows no such node
	CodeNoResources  Code = "no_resources"  // Maui could not select the processors
	CodeOverlap      Code = "overlap"       // processors already held by another reservation or running job
	CodeConflict     Code = "conflict"      // reservations for this job exist with a different shape
	CodeVerifyFailed Code = "verify_failed" // setres answered but showres/diagnose -r disagree; rolled back
	CodeRefused      Code = "refused"       // Maui refused for another reason (its words in Detail)
)

// Refusal is a request refused by lookahead's own checks or by Maui: an
// answer, not a failure of the machinery. Nothing is left behind when a
// Refusal is returned (partial work is rolled back).
type Refusal struct {
	Code   Code
	Detail string
}

func (r *Refusal) Error() string { return fmt.Sprintf("refused (%s): %s", r.Code, r.Detail) }

func refuse(code Code, format string, args ...any) *Refusal {
	return &Refusal{Code: code, Detail: fmt.Sprintf(format, args...)}
}

// AsRefusal reports whether err is (or wraps) a Refusal and returns it.
func AsRefusal(err error) (*Refusal, bool) {
	var r *Refusal
	ok := errors.As(err, &r)
	return r, ok
}
