package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"lookahead/forecast"
)

// Limits of what a site may send. They are sized from what a real site
// can need, so that a hostile or broken message costs the broker a bounded
// amount of memory however well it compresses.
const (
	// MaxForecastNodes is the most nodes one forecast may list
	// (forecast.MaxForecastNodes: the model's limits are written there).
	MaxForecastNodes = forecast.MaxForecastNodes
	// MaxForecastSlots is the most slots one forecast may list: 5,000
	// nodes × 100 slots, or 10,000 nodes × 50. A 5,000-node site whose
	// built-in engine saw 20,000 queued jobs forecast 44 slots per node.
	MaxForecastSlots = forecast.MaxForecastSlots
	// maxHeaderBytes bounds the JSON part of a compact forecast (the
	// site and its nodes): about 400 bytes per node at the node limit (a
	// node with a few features takes about 80).
	maxHeaderBytes = 4 << 20
	// MaxForecastBytes bounds a forecast's decompressed size. A compact
	// forecast of 5,000 nodes × 100 slots with random times and prices
	// takes about 5 MB (TestDecodeRefusesOverLimits); v1 JSON takes about
	// 75 bytes per slot, so a v1 JSON forecast reaches this bound at
	// roughly 200,000 slots. The payload is decoded as a stream and never
	// read past this bound.
	MaxForecastBytes = 16 << 20
)

// ErrTooLarge is wrapped by decoding errors of messages over a limit.
var ErrTooLarge = errors.New("over the size limit")

// CheckLimits refuses a forecast with more nodes or slots than a site may
// publish.
func CheckLimits(f *forecast.Forecast) error {
	if len(f.Nodes) > MaxForecastNodes {
		return fmt.Errorf("%w: %w: %d nodes, at most %d", forecast.ErrInvalid, ErrTooLarge, len(f.Nodes), MaxForecastNodes)
	}
	if len(f.Slots) > MaxForecastSlots {
		return fmt.Errorf("%w: %w: %d slots, at most %d", forecast.ErrInvalid, ErrTooLarge, len(f.Slots), MaxForecastSlots)
	}
	return nil
}

// boundedReader reads at most n bytes from r and fails with ErrTooLarge,
// not a silent EOF, when r has more.
type boundedReader struct {
	r     io.Reader
	n     int64
	limit int64
}

func newBoundedReader(r io.Reader, limit int64) *boundedReader {
	return &boundedReader{r: r, n: limit, limit: limit}
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.n <= 0 {
		// One more byte tells a stream of exactly limit bytes from a longer one.
		var one [1]byte
		if k, _ := b.r.Read(one[:]); k > 0 {
			return 0, fmt.Errorf("%w: forecast decompresses to more than %d bytes", ErrTooLarge, b.limit)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.n {
		p = p[:b.n]
	}
	k, err := b.r.Read(p)
	b.n -= int64(k)
	return k, err
}

// DecodeStrict decodes one JSON value from data into v, refusing unknown
// fields and anything after the value: how the broker and the agents read
// requests, so a misspelt or smuggled field is an error, never ignored.
func DecodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// Clip shortens s for an error message or a log line (forecast.Clip).
func Clip(s string, n int) string { return forecast.Clip(s, n) }
