package wire

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"lookahead/forecast"
)

// Bomb builds a gzip stream of prefix, then n bytes of fill, then suffix,
// without ever holding the decompressed stream in memory. Shared by the
// tests of this package and the broker's RSS test (see BombForecast).
func bomb(t testing.TB, prefix []byte, fill byte, n int, suffix []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(prefix)
	chunk := bytes.Repeat([]byte{fill}, 1<<20)
	for left := n; left > 0; left -= len(chunk) {
		zw.Write(chunk[:min(left, len(chunk))])
	}
	zw.Write(suffix)
	zw.Close()
	return buf.Bytes()
}

func uvarint(v uint64) []byte { return binary.AppendUvarint(nil, v) }

// bombs are the decompression attacks a site could send: each inflates to
// 100 MB or more from a few hundred KB.
func bombs(t testing.TB) map[string][]byte {
	const big = 100 << 20
	head := []byte(`{"version":1,"site":"alpha","generated":1,"horizon":2,"nodes":[]}`)
	compactSlots := append(append(append([]byte(compactMagic), uvarint(uint64(len(head)))...), head...), 0) // no prices
	return map[string][]byte{
		// v1 JSON: one endless node name the JSON decoder must buffer.
		"json string": bomb(t, []byte(`{"version":1,"site":"alpha","nodes":[{"name":"`), 'a', big, []byte(`"}]}`)),
		// v1 JSON: whitespace before the value.
		"json whitespace": bomb(t, nil, ' ', big, []byte(`{}`)),
		// compact: a header that claims and holds 200 MB.
		"compact header": bomb(t, append([]byte(compactMagic), uvarint(200<<20)...), ' ', big, nil),
		// compact: 50 million slots whose columns are all zero bytes.
		"compact slots": bomb(t, append(compactSlots, uvarint(50_000_000)...), 0, big, nil),
	}
}

func TestDecodeBombsStayBounded(t *testing.T) {
	for name, data := range bombs(t) {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			f, err := DecodeForecast(data)
			runtime.ReadMemStats(&after)
			if err == nil || f != nil {
				t.Fatalf("bomb of %d bytes decoded", len(data))
			}
			if !errors.Is(err, forecast.ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d bytes compressed: %v; %.1f MB allocated while decoding", len(data), clipErr(err), float64(alloc)/(1<<20))
			// Reading stops at MaxForecastBytes; the JSON decoder's buffer
			// doubles up to it (about 4× in all), so 5× covers every path.
			if alloc > 5*MaxForecastBytes {
				t.Errorf("decoding allocated %d bytes, want at most %d", alloc, 5*MaxForecastBytes)
			}
		})
	}
}

func clipErr(err error) string { return Clip(err.Error(), 200) }

func TestDecodeRefusesOverLimits(t *testing.T) {
	f := bigForecast(MaxForecastNodes+1, 0, 3)
	data, err := EncodeForecast(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeForecast(data); !errors.Is(err, ErrTooLarge) {
		t.Errorf("%d nodes: error %v, want ErrTooLarge", len(f.Nodes), err)
	}
	// The JSON form is checked after decoding.
	if _, err := DecodeForecast(gzipJSON(t, f)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("%d nodes as JSON: error %v, want ErrTooLarge", len(f.Nodes), err)
	}
	// At the limits a forecast still decodes: 5,000 nodes × 100 slots.
	ok := bigForecast(5000, 100, 4)
	data, err = EncodeForecast(ok)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeForecast(data); err != nil {
		t.Fatalf("5,000 nodes × 100 slots refused: %v", err)
	}
	t.Logf("5,000 nodes × 100 slots: %d bytes compressed, %d decompressed", len(data), len(gunzip(t, data)))
}

func TestBoundedReaderExactLimit(t *testing.T) {
	r := newBoundedReader(strings.NewReader("abcd"), 4)
	got, err := io.ReadAll(r)
	if err != nil || string(got) != "abcd" {
		t.Fatalf("exactly the limit: %q %v", got, err)
	}
	r = newBoundedReader(strings.NewReader("abcde"), 4)
	if _, err := io.ReadAll(r); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("one byte over: %v", err)
	}
}

func TestDecodeStrict(t *testing.T) {
	var v struct {
		A int `json:"a"`
	}
	if err := DecodeStrict([]byte(`{"a":1}`), &v); err != nil || v.A != 1 {
		t.Fatalf("plain: %v", err)
	}
	for _, bad := range []string{`{"a":1,"b":2}`, `{"a":1} {"a":2}`, `{"a":1}x`, ``} {
		if err := DecodeStrict([]byte(bad), &v); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestClip(t *testing.T) {
	long := strings.Repeat("é", 1000)
	c := Clip(long, 65)
	if len(c) > 100 || !strings.HasSuffix(c, "…(2000 bytes)") || !strings.HasPrefix(c, "éé") {
		t.Fatalf("clip %q", c)
	}
	if Clip("short", 10) != "short" {
		t.Fatal("short string changed")
	}
}
