package wire

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"

	"lookahead/forecast"
)

// ForecastEncoding is the value of the Content-Encoding header on forecast
// messages and KV entries: gzip-compressed v1 JSON.
const ForecastEncoding = "gzip"

// MaxForecastBytes bounds a decoded forecast, so a hostile or broken message
// cannot exhaust memory.
const MaxForecastBytes = 256 << 20

// EncodeForecast renders a forecast for NATS: v1 JSON, gzip-compressed.
func EncodeForecast(f *forecast.Forecast) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(f); err != nil {
		return nil, fmt.Errorf("encode forecast of %s: %w", f.Site, err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compress forecast of %s: %w", f.Site, err)
	}
	return buf.Bytes(), nil
}

// DecodeForecast reads what EncodeForecast wrote and validates it.
func DecodeForecast(data []byte) (*forecast.Forecast, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decompress forecast: %w", err)
	}
	defer zr.Close()
	return forecast.DecodeForecast(io.LimitReader(zr, MaxForecastBytes))
}
