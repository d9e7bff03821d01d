package wire

import (
	"reflect"
	"testing"

	"lookahead/forecast"
)

// roundTrip encodes f in the compact form and as gzip-compressed v1 JSON
// and fails unless both decode to f again; field shows what the test
// looks at in the message.
func roundTrip(t *testing.T, f *forecast.Forecast, field func(*forecast.Forecast) any) {
	t.Helper()
	data, err := EncodeForecast(f)
	if err != nil {
		t.Fatal(err)
	}
	for name, payload := range map[string][]byte{"compact": data, "json": gzipJSON(t, f)} {
		got, err := DecodeForecast(payload)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, f) {
			t.Fatalf("%s: %v, want %v", name, field(got), field(f))
		}
	}
}
