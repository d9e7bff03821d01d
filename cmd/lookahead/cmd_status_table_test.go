package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"lookahead/broker/brokertest"
	"lookahead/broker/coalloc"
	"lookahead/forecast"
	"lookahead/wire"
)

// TestJobTableSaysWhyNotPlaced: a row of a job the planner did not place
// carries the first reason the planner's why gives (the whole why is
// `status ID`'s), the broker's message wins when there is one, and a note
// clipped in the middle of a multi-byte character stays valid UTF-8.
func TestJobTableSaysWhyNotPlaced(t *testing.T) {
	fcs := brokertest.SplitGrid(0) // 32 processors: 16 + 8 + 8
	job := forecast.JobRequest{ID: "g1", User: "ann", Procs: 12, Walltime: 1000, MaxPrice: 0.5}
	why := coalloc.Explain(fcs, job, coalloc.Options{})
	first, rest, ok := strings.Cut(why, "; ")
	if !ok || first == "" || rest == "" {
		t.Fatalf("the planner's why has no second clause to leave out: %q", why)
	}
	plan := &forecast.Allocation{Error: coalloc.NoFitCapacity, Why: why}
	rows := []wire.JobStatus{
		{Job: job, State: "waiting", Plan: plan},
		{Job: forecast.JobRequest{ID: "g2", User: "bob", Procs: 2, Walltime: 60, MaxPrice: 1}, State: "waiting",
			Plan: &forecast.Allocation{Error: coalloc.NoFitCapacity}, Message: "refused: over the account's budget"},
	}
	var out bytes.Buffer
	if err := writeJobTable(&out, rows, 0); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	g1, g2 := lines[1], lines[2]
	if !strings.Contains(g1, "not placed") || !strings.Contains(g1, clip(first, 60)) || strings.Contains(g1, clip(rest, 20)) {
		t.Errorf("g1's row %q\nwant 'not placed' and the first reason %q only", g1, first)
	}
	if !strings.Contains(g2, "refused: over the account's budget") {
		t.Errorf("g2's row %q: want the broker's message", g2)
	}
	for _, s := range []string{strings.Repeat("a", 58) + "×××", strings.Repeat("×", 80)} {
		if c := clip(s, 60); !utf8.ValidString(c) || utf8.RuneCountInString(c) != 60 {
			t.Errorf("clip(%q) = %q: %d runes, valid %v", s, c, utf8.RuneCountInString(c), utf8.ValidString(c))
		}
	}
}
