package agent_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"lookahead/wire"
)

// lockedBuffer collects log lines written from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// decodeStrict decodes one JSON value and refuses an object that names a
// key twice (encoding/json keeps the last one silently: jq shows only it).
func decodeStrict(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := strictValue(dec); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("trailing data after the value")
	}
	return nil
}

func strictValue(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			key := k.(string)
			if seen[key] {
				return fmt.Errorf("duplicate key %q", key)
			}
			seen[key] = true
			if err := strictValue(dec); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	case json.Delim('['):
		for dec.More() {
			if err := strictValue(dec); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	return nil
}

func TestDecodeStrictRefusesDuplicates(t *testing.T) {
	if err := decodeStrict([]byte(`{"message":"a","x":{"y":1,"y":2}}`)); err == nil {
		t.Fatal("nested duplicate accepted")
	}
	if err := decodeStrict([]byte(`{"message":"a","code":"ok","message":"b"}`)); err == nil {
		t.Fatal("duplicate message accepted")
	}
	if err := decodeStrict([]byte(`{"message":"a","l":[{"k":1},{"k":2}]}`)); err != nil {
		t.Fatal(err)
	}
}

// TestLogLinesHaveNoDuplicateKeys runs the agent's start, forecasts and
// the reserve path (granted and refused) and decodes every JSON log line
// strictly: a field named like zerolog's own ("message", "level", "time")
// or added twice ("site", "component") would hide the other in jq.
func TestLogLinesHaveNoDuplicateKeys(t *testing.T) {
	var buf lockedBuffer
	log := zerolog.New(&buf).With().Timestamp().Logger()
	fx := runSimAgentLog(t, testConfig("gamma"), &log)
	free, busy := freeAndBusyNodes(t, fx)
	ok := request[wire.ReserveReply](t, fx.nc, "gamma", wire.VerbReserve,
		reserveReq("g1", t0+60, 600, wire.NodeProcs{Node: free[0], Procs: 4}))
	stale := request[wire.ReserveReply](t, fx.nc, "gamma", wire.VerbReserve,
		reserveReq("g2", t0+60, 600, wire.NodeProcs{Node: busy[0], Procs: 4}))
	if ok.Code != wire.CodeOK || stale.Code != wire.CodeStale || stale.Message == "" {
		t.Fatalf("replies %+v / %+v", ok, stale)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var sawReply bool
	for _, line := range lines {
		if err := decodeStrict([]byte(line)); err != nil {
			t.Errorf("log line %s: %v", line, err)
		}
		sawReply = sawReply || strings.Contains(line, stale.Message)
	}
	if !sawReply {
		t.Errorf("no log line carries the refusal's text %q:\n%s", stale.Message, buf.String())
	}
}
