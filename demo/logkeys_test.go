package demo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"lookahead/internal/logtest"
)

// TestDemoLogHasOneKeyEach runs the demo with its component log on and
// decodes every line: each is one JSON object with no key twice, and the
// agents' and the broker's lines carry their "site" / "component" once
// (the demo used to add both again on top of the components' own).
func TestDemoLogHasOneKeyEach(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(4*time.Second, cancel)
	var logBuf bytes.Buffer
	_, err := Run(ctx, Options{Duration: time.Minute, Speed: 900, Out: io.Discard, Log: &logBuf})
	if err != context.Canceled {
		t.Fatalf("err %v", err)
	}
	components, other := map[string]int{}, map[string]int{}
	sc := bufio.NewScanner(&logBuf)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		n++
		dups, err := logtest.DuplicateKeys(sc.Bytes())
		if err != nil {
			t.Fatalf("line %d: not JSON: %v: %s", n, err, sc.Text())
		}
		for _, k := range dups {
			if k == "site" || k == "component" {
				t.Fatalf("line %d: %q twice: %s", n, k, sc.Text())
			}
			other[k]++
		}
		var m map[string]any
		json.Unmarshal(sc.Bytes(), &m)
		if c, _ := m["component"].(string); c != "" {
			components[c]++
		}
		if m["component"] == "agent" && m["site"] == nil {
			t.Fatalf("line %d: agent line without site: %s", n, sc.Text())
		}
	}
	if components["agent"] == 0 || components["broker"] == 0 {
		t.Fatalf("%d lines, components %v: want agent and broker lines", n, components)
	}
	if len(other) > 0 {
		// Not the demo's: the components' own fields (e.g. the agent's
		// "message" beside zerolog's), tracked in their packages.
		t.Logf("other keys twice on a line: %v", other)
	}
}
