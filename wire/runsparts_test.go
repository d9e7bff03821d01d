package wire

import (
	"strconv"
	"testing"

	"lookahead/forecast"
)

// A forecast's optional runs_parts survives both wire forms in its three
// states: said yes, said no, not said (an older agent).
func TestForecastRunsPartsRoundTrip(t *testing.T) {
	yes, no := true, false
	for _, said := range []*bool{&yes, &no, nil} {
		f := bigForecast(3, 2, 5)
		f.RunsParts = said
		roundTrip(t, f, func(f *forecast.Forecast) any {
			if f.RunsParts == nil {
				return "runs_parts absent"
			}
			return "runs_parts " + strconv.FormatBool(*f.RunsParts)
		})
		if f.TakesParts() != (said == nil || *said) {
			t.Fatalf("TakesParts %v with runs_parts %v", f.TakesParts(), said)
		}
	}
}
