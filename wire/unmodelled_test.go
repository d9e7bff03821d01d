package wire

import (
	"reflect"
	"testing"
)

// A forecast's optional Unmodelled lines survive both wire forms.
func TestForecastUnmodelledRoundTrip(t *testing.T) {
	f := bigForecast(3, 2, 5)
	f.Unmodelled = []string{"maui.cfg:7: FSPOLICY DEDICATEDPS: fairshare is not modelled"}
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
			t.Fatalf("%s: unmodelled %q, want %q", name, got.Unmodelled, f.Unmodelled)
		}
	}
}
