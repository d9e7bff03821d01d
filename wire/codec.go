package wire

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"

	"lookahead/forecast"
)

// ForecastEncoding is the value of the Content-Encoding header on forecast
// messages: the payload is a gzip stream. KV entries carry no headers; the
// gzip magic bytes identify them.
const ForecastEncoding = "gzip"

// HeaderType is the NATS header naming the message type (TypeForecast or
// TypeHeartbeat) on a site's forecast subject, so a subscriber can tell the
// two apart without decoding.
const HeaderType = "Lookahead-Type"

// Forecast payloads on the wire (message body and KV value) are a gzip
// stream whose content is one of:
//
//   - compact (what EncodeForecast writes): the magic "LAC2", then the
//     forecast header and nodes as JSON, then the slots as columns of
//     varints (see compact.go). A 5,000-node × 20-slot forecast with
//     random times and prices encodes to 0.37 MB in 90 ms, against 1.09 MB
//     for gzip-compressed v1 JSON, which does not fit NATS' default 1 MiB
//     max_payload (BenchmarkEncodeForecast). A forecast the built-in
//     engine made for 5,000 8-processor nodes with 20,000 queued jobs
//     (220,825 slots, 44 per node, 802 distinct prices) encodes to 0.83 MB
//     (agent's BenchmarkEncodedSize5000Nodes); gzip of v1 JSON would be
//     several MB. Beyond that, shorten the horizon or raise max_payload:
//     the agent refuses to publish what the server would reject.
//   - v1 JSON (the document of DESIGN.md), accepted by DecodeForecast so
//     hand-written or older payloads still read.
//
// EncodeForecast renders a forecast for NATS in the compact form.
func EncodeForecast(f *forecast.Forecast) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	if err != nil {
		return nil, fmt.Errorf("compress forecast of %s: %w", f.Site, err)
	}
	if err := writeCompact(zw, f); err != nil {
		return nil, fmt.Errorf("encode forecast of %s: %w", f.Site, err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compress forecast of %s: %w", f.Site, err)
	}
	return buf.Bytes(), nil
}

// DecodeForecast reads what EncodeForecast wrote (or gzip-compressed v1
// JSON) and validates it. The payload is decompressed as a stream and
// never past MaxForecastBytes; a forecast over MaxForecastNodes or
// MaxForecastSlots is refused (errors wrap forecast.ErrInvalid, and
// ErrTooLarge for a limit).
func DecodeForecast(data []byte) (*forecast.Forecast, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decompress forecast: %w", err)
	}
	defer zr.Close()
	br := bufio.NewReader(newBoundedReader(zr, MaxForecastBytes))
	head, err := br.Peek(len(compactMagic))
	var f *forecast.Forecast
	if err == nil && (string(head) == compactMagic || string(head) == compactMagic3) {
		f, err = readCompact(br)
	} else {
		f, err = forecast.DecodeForecast(br)
	}
	if err != nil {
		return nil, err
	}
	if err := CheckLimits(f); err != nil {
		return nil, err
	}
	if err := f.CheckCapacity(); err != nil { // the JSON path checked it already; the compact one not
		return nil, err
	}
	return f, nil
}
