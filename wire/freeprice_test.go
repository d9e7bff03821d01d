package wire

import (
	"testing"

	"lookahead/forecast"
)

// A forecast's optional free_price (its owner's price for free time)
// survives both wire forms.
func TestForecastFreePriceRoundTrip(t *testing.T) {
	f := bigForecast(3, 2, 5)
	f.FreePrice = 2.5
	roundTrip(t, f, func(f *forecast.Forecast) any { return f.FreePrice })
}
