package config

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with the configuration: where it was written
// (file:line, LOOKAHEAD_X=…, --flag or "default"), the key, and what is
// wrong.
type Problem struct {
	Where string `json:"where"`
	Key   string `json:"key"`
	Msg   string `json:"message"`
}

func (p Problem) String() string {
	switch {
	case p.Where == "":
		return p.Msg
	case p.Key == "":
		return fmt.Sprintf("%s: %s", p.Where, p.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", p.Where, p.Key, p.Msg)
}

// Error is every problem one load found.
type Error struct{ Problems []Problem }

func (e *Error) Error() string {
	if len(e.Problems) == 1 {
		return "config: " + e.Problems[0].String()
	}
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = "  " + p.String()
	}
	return fmt.Sprintf("config: %d problems:\n%s", len(e.Problems), strings.Join(lines, "\n"))
}

// problems collects Problems.
type problems []Problem

func (ps *problems) add(where, key, format string, args ...any) {
	*ps = append(*ps, Problem{Where: where, Key: key, Msg: fmt.Sprintf(format, args...)})
}

// addErrors adds err (each error of an errors.Join) as problems: the
// caller's own checks name their keys first ("budgets.default_budget:
// -5, must be >= 0", `log_level "x": must be …`), and where tells where
// that key, or the nearest key above it, was set ("" when unknown).
func (ps *problems) addErrors(err error, where func(key string) string) {
	if err == nil {
		return
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			ps.addErrors(e, where)
		}
		return
	}
	msg := err.Error()
	key := msg[:strings.IndexFunc(msg+" ", func(r rune) bool { return r == ' ' || r == ':' })]
	if at := where(key); key != "" && at != "" {
		*ps = append(*ps, Problem{Where: at, Key: key, Msg: strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(msg, key), ":"), " ")})
		return
	}
	*ps = append(*ps, Problem{Msg: msg})
}

// placeOf is where key, or the nearest key above it (budgets.users for
// budgets.users.alice, identities[0] for identities[0].users), was set
// other than by default; "" when nowhere.
func (l *Loaded) placeOf(key string) string {
	for key != "" {
		if o, ok := l.origins[key]; ok {
			return o
		}
		cut := max(strings.LastIndexByte(key, '.'), strings.LastIndexByte(key, '['))
		if cut <= 0 {
			return ""
		}
		key = key[:cut]
	}
	return ""
}

func (ps problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	return &Error{Problems: ps}
}
