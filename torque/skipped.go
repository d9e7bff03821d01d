package torque

import (
	"errors"
	"fmt"
	"strings"
)

// ItemError is one item of a tool's output that did not parse and was
// replaced conservatively: a pbsnodes jobs item (its node is reported in
// state forecast.NodeUnknown, so nothing is offered on it) or a job's
// exec_host (the job keeps its processors, placed where the forecast finds
// room). The rest of the output is still used.
type ItemError struct {
	// Where names the node or job and the attribute ("node vm jobs").
	Where string
	// Item is the text that did not parse.
	Item string
	Err  error
}

func (e *ItemError) Error() string {
	return fmt.Sprintf("%s: item %q: %v", e.Where, e.Item, e.Err)
}

func (e *ItemError) Unwrap() error { return e.Err }

// SkippedError is returned with a usable result by ParsePbsnodesXML and
// ParseQstatXML when some items did not parse: each is listed, and each
// node or job it belongs to was treated conservatively (see ItemError).
// Callers that can go on test for it with errors.As.
type SkippedError struct {
	Tool  string
	Items []*ItemError
}

func (e *SkippedError) Error() string {
	parts := make([]string, len(e.Items))
	for i, it := range e.Items {
		parts[i] = it.Error()
	}
	return fmt.Sprintf("%s xml: %d item(s) skipped: %s", e.Tool, len(e.Items), strings.Join(parts, "; "))
}

// asItemError reports whether err is (or wraps) an *ItemError.
func asItemError(err error) (*ItemError, bool) {
	var it *ItemError
	ok := errors.As(err, &it)
	return it, ok
}
