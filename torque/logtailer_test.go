package torque

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"lookahead/torque/tail"
)

// The captured logs of every version, written into a spool directory in
// pieces (with a size roll to .1 half-way and a restart of the tailer after
// every piece), come out as the same events as parsing the files whole.
func TestTailerOnCapturedLogs(t *testing.T) {
	for _, v := range versions {
		for _, kind := range []LogKind{ServerLog, AccountingLog} {
			t.Run(v.dir+"/"+kind.String(), func(t *testing.T) {
				src := filepath.Join("testdata", v.dir, "server_logs", "20261122")
				want := serverLogEvents(t, v.dir)
				if kind == AccountingLog {
					src = filepath.Join("testdata", v.dir, "accounting", "20261122")
					want = acctEvents(t, v.dir)
				}
				got := tailInPieces(t, src, kind)
				if len(got) != len(want) {
					t.Fatalf("%d events, want %d", len(got), len(want))
				}
				seen := map[RecordID]bool{}
				for i := range got {
					if seen[got[i].Record] || got[i].Record.File == "" {
						t.Fatalf("event %d: record %v repeated or empty", i, got[i].Record)
					}
					seen[got[i].Record] = true
					got[i].Record, got[i].Text = RecordID{}, ""
					if !reflect.DeepEqual(got[i], want[i]) {
						t.Fatalf("event %d:\n got %+v\nwant %+v", i, got[i], want[i])
					}
				}
			})
		}
	}
}

func tailInPieces(t *testing.T, src string, kind LogKind) []Event {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	dir := LogDir(home, kind)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(dir, "20261122")
	var got []Event
	const pieces = 7
	lo := 0
	for i := 1; i <= pieces; i++ {
		hi := len(data) * i / pieces // cuts fall mid-line
		if i == pieces/2 {
			hi += bytes.IndexByte(data[hi:], '\n') + 1 // Torque rolls between lines
		}
		f, err := os.OpenFile(live, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(data[lo:hi])
		f.Close()
		lo = hi
		if i == pieces/2 {
			if err := os.Rename(live, live+".1"); err != nil {
				t.Fatal(err)
			}
		}
		tl, err := NewTailer(TailerConfig{Kind: kind, PBSHome: home, Positions: filepath.Join(home, "pos"),
			Start: tail.StartBeginning, Location: time.UTC}, func(_ context.Context, ev Event) error {
			got = append(got, ev)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := tl.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		if tl.Rejected() != 0 {
			t.Fatalf("rejected %d lines", tl.Rejected())
		}
	}
	return got
}
