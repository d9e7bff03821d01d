package wire

import (
	"reflect"
	"testing"
)

// A forecast's optional free_price (its owner's price for free time)
// survives both wire forms.
func TestForecastFreePriceRoundTrip(t *testing.T) {
	f := bigForecast(3, 2, 5)
	f.FreePrice = 2.5
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
			t.Fatalf("%s: free_price %v, want %v", name, got.FreePrice, f.FreePrice)
		}
	}
}
