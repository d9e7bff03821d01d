package wire

import (
	"reflect"
	"testing"
)

// A forecast's optional runs_parts survives both wire forms in its three
// states: said yes, said no, not said (an older agent).
func TestForecastRunsPartsRoundTrip(t *testing.T) {
	yes, no := true, false
	for _, said := range []*bool{&yes, &no, nil} {
		f := bigForecast(3, 2, 5)
		f.RunsParts = said
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
				t.Fatalf("%s: runs_parts %v, want %v", name, got.RunsParts, f.RunsParts)
			}
			if got.TakesParts() != (said == nil || *said) {
				t.Fatalf("%s: TakesParts %v with runs_parts %v", name, got.TakesParts(), said)
			}
		}
	}
}
