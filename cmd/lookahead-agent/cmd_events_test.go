package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lookahead/torque"
)

// events reads a spool laid out from the captured Torque 4.2.10 logs.
func TestRunEventsOnCapturedLogs(t *testing.T) {
	home := t.TempDir()
	for _, k := range []torque.LogKind{torque.ServerLog, torque.AccountingLog} {
		sub := "server_logs"
		if k == torque.AccountingLog {
			sub = "accounting"
		}
		data, err := os.ReadFile(filepath.Join("..", "..", "torque", "testdata", "torque-4.2.10", sub, "20261122"))
		if err != nil {
			t.Fatal(err)
		}
		dir := torque.LogDir(home, k)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "20261122"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := Config{Torque: TorqueConfig{PBSHome: home, Timezone: "UTC"}}
	var out, errs bytes.Buffer
	opts := &eventsOptions{output: "json", start: "beginning", sources: []string{"accounting"}}
	if err := runEvents(context.Background(), c, opts, &out, &errs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 15 || errs.Len() != 0 {
		t.Fatalf("%d accounting events (want the 15 records), stderr %q", len(lines), errs.String())
	}
	var first torque.Event
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if first.Kind != torque.JobQueued || first.Job != "0.vm" || first.Time.Format("15:04:05") != "04:17:43" {
		t.Fatalf("first event %+v", first)
	}
	out.Reset()
	opts = &eventsOptions{output: "table", start: "beginning", sources: []string{"server_logs"}}
	if err := runEvents(context.Background(), c, opts, &out, &errs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "node_state       node node03 down -> down,offline") {
		t.Fatalf("no node03 offline transition in\n%s", out.String())
	}
}
