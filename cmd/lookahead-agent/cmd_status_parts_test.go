package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"lookahead/agent"
)

// lookahead-agent status says whether the agent runs grid jobs' parts.
func TestStatusSaysWhetherTheAgentRunsParts(t *testing.T) {
	for on, want := range map[bool]string{true: `(?m)^runs parts +yes \(dispatch on`, false: `(?m)^runs parts +no \(dispatch off`} {
		var out strings.Builder
		if err := printStatus(&out, agent.Status{Site: "vm", RunsParts: on}, time.Unix(1000, 0)); err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(want).MatchString(out.String()) {
			t.Errorf("runs_parts %v:\n%s\nwant a line %q", on, out.String(), want)
		}
	}
}
