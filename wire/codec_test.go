package wire

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"lookahead/forecast"
)

// natsMaxPayload is nats-server's default max_payload (1 MiB).
const natsMaxPayload = 1 << 20

// bigForecast is a site of nodes nodes with per slots each, random
// boundaries (gaps and overlaps between a node's slots) and four price
// levels: harder to compress than a real forecast, whose slots abut.
func bigForecast(nodes, per int, seed uint64) *forecast.Forecast {
	r := rand.New(rand.NewPCG(seed, 1))
	f := &forecast.Forecast{Version: 1, Site: "big", Seq: 7, Generated: 1763780000,
		Horizon: 1763780000 + 7*86400, Nodes: []forecast.Node{}, Slots: []forecast.Slot{}}
	for i := range nodes {
		name := fmt.Sprintf("n%05d", i)
		f.Nodes = append(f.Nodes, forecast.Node{Name: name, Procs: 8, Speed: 1, MemMB: 32000, Features: []string{"ib"}})
		t := f.Generated + r.Int64N(36000)
		for range per {
			d := 600 + r.Int64N(30000)
			p := []float64{1, 1, 2, 3.5}[r.IntN(4)]
			f.Slots = append(f.Slots, forecast.Slot{Node: name, Procs: 1 + r.IntN(8), Start: t, End: t + d, Price: p})
			t += d + int64(r.IntN(3))*600 // a node's slots never overlap beyond its processors (Validate)
		}
	}
	return f
}

func gzipJSON(t testing.TB, f *forecast.Forecast) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(f); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return buf.Bytes()
}

func TestForecastRoundTrip(t *testing.T) {
	for _, c := range []struct{ nodes, per int }{{0, 0}, {1, 1}, {3, 5}, {200, 20}} {
		f := bigForecast(c.nodes, c.per, uint64(c.nodes))
		data, err := EncodeForecast(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeForecast(data)
		if err != nil {
			t.Fatalf("%d nodes: %v", c.nodes, err)
		}
		if !reflect.DeepEqual(got, f) {
			t.Fatalf("%d nodes: round trip changed the forecast", c.nodes)
		}
	}
}

// TestDecodeAcceptsLAC2: forecasts of agents before issue 39 (the LAC2
// form) still decode, to the same forecast.
func TestDecodeAcceptsLAC2(t *testing.T) {
	for _, f := range []*forecast.Forecast{bigForecast(40, 12, 3), bigForecast(3, 4, 2)} {
		old, err := encodeLAC2(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeForecast(old)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, f) {
			t.Fatal("an LAC2 payload decoded differently")
		}
	}
}

func TestDecodeAcceptsGzipJSON(t *testing.T) {
	f := bigForecast(4, 3, 9)
	got, err := DecodeForecast(gzipJSON(t, f))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, f) {
		t.Fatal("v1 JSON payload decoded differently")
	}
}

func TestEncodedSizeFitsNATS(t *testing.T) {
	f := bigForecast(5000, 20, 1)
	data, err := EncodeForecast(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) >= natsMaxPayload {
		t.Fatalf("5,000 nodes x 20 slots encode to %d bytes, over NATS' default %d", len(data), natsMaxPayload)
	}
	t.Logf("compact %d bytes, gzip JSON %d bytes", len(data), len(gzipJSON(t, f)))
}

func TestDecodeRejectsDamage(t *testing.T) {
	one := &forecast.Forecast{Version: 1, Site: "s", Generated: 100, Horizon: 200,
		Nodes: []forecast.Node{{Name: "n", Procs: 2, Speed: 1}},
		Slots: []forecast.Slot{{Node: "n", Procs: 1, Start: 100, End: 110, Price: 1}}}
	good, _ := EncodeForecast(one)
	// The body ends with the seven one-byte columns of the one slot
	// (LAC3): node 0, procs 1, start code 0 (literal), end code 0
	// (literal), price code 1 (index 0), the literal start − generated =
	// 0 and the literal length zigzag(10)=20.
	raw := gunzip(t, good)
	if !bytes.HasSuffix(raw, []byte{0, 1, 0, 0, 1, 0, 20}) {
		t.Fatalf("unexpected layout: % x", raw[len(raw)-7:])
	}
	noLast := func(b []byte) []byte { return b[:len(b)-1] }
	cases := map[string][]byte{
		"truncated":                   raw[:len(raw)-3],
		"trailing":                    append(append([]byte{}, raw...), 0),
		"bad node index":              setLastColumnsByte(raw, 7, 2),
		"over capacity":               setLastColumnsByte(raw, 6, 3),
		"bad start ref":               noLast(setLastColumnsByte(raw, 5, 1)),
		"bad end ref":                 noLast(setLastColumnsByte(raw, 4, 1)),
		"price code 0 without an end": setLastColumnsByte(raw, 3, 0),
		"bad price index":             setLastColumnsByte(raw, 3, 2),
		"empty slot":                  setLastColumnsByte(raw, 1, 0),
	}
	for name, body := range cases {
		_, err := DecodeForecast(gz(body))
		if err == nil || !errors.Is(err, forecast.ErrInvalid) {
			t.Errorf("%s: error %v, want ErrInvalid", name, err)
		}
	}
	if _, err := DecodeForecast([]byte("not gzip")); err == nil {
		t.Error("plain bytes accepted")
	}
}

// setLastColumnsByte overwrites the byte back bytes from the end.
func setLastColumnsByte(raw []byte, back int, v byte) []byte {
	out := append([]byte{}, raw...)
	out[len(out)-back] = v
	return out
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func gunzip(t testing.TB, b []byte) []byte {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	out.ReadFrom(zr)
	return out.Bytes()
}

func BenchmarkEncodeForecast(b *testing.B) {
	f := bigForecast(5000, 20, 1)
	b.Run("compact", func(b *testing.B) {
		var n int
		for b.Loop() {
			data, err := EncodeForecast(f)
			if err != nil {
				b.Fatal(err)
			}
			n = len(data)
		}
		b.ReportMetric(float64(n), "bytes")
	})
	b.Run("lac2", func(b *testing.B) { // the form before issue 39
		var n int
		for b.Loop() {
			data, err := encodeLAC2(f)
			if err != nil {
				b.Fatal(err)
			}
			n = len(data)
		}
		b.ReportMetric(float64(n), "bytes")
	})
	b.Run("gzip-json", func(b *testing.B) {
		var n int
		for b.Loop() {
			n = len(gzipJSON(b, f))
		}
		b.ReportMetric(float64(n), "bytes")
	})
}

func BenchmarkDecodeForecast(b *testing.B) {
	f := bigForecast(5000, 20, 1)
	lac3, _ := EncodeForecast(f)
	lac2, _ := encodeLAC2(f)
	for name, data := range map[string][]byte{"compact": lac3, "lac2": lac2} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := DecodeForecast(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func FuzzDecodeForecast(f *testing.F) {
	good, _ := EncodeForecast(bigForecast(3, 4, 2))
	f.Add(gunzip(f, good))
	f.Add(gunzip(f, gzipJSON(f, bigForecast(2, 2, 3))))
	f.Add([]byte(compactMagic))
	f.Add([]byte(compactMagic3))
	if old, err := encodeLAC2(bigForecast(3, 4, 2)); err == nil {
		f.Add(gunzip(f, old))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fc, err := DecodeForecast(gz(body))
		if err != nil {
			if !errors.Is(err, forecast.ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if err := fc.Validate(); err != nil || CheckLimits(fc) != nil {
			t.Fatalf("decoded an invalid forecast: %v", err)
		}
		again, err := EncodeForecast(fc)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeForecast(again); err != nil {
			t.Fatalf("re-encoded forecast does not decode: %v", err)
		}
	})
}
