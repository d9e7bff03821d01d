package wire

import (
	"testing"

	"lookahead/forecast"
)

// A forecast's optional Unmodelled lines survive both wire forms.
func TestForecastUnmodelledRoundTrip(t *testing.T) {
	f := bigForecast(3, 2, 5)
	f.Unmodelled = []string{"maui.cfg:7: FSPOLICY DEDICATEDPS: fairshare is not modelled"}
	roundTrip(t, f, func(f *forecast.Forecast) any { return f.Unmodelled })
}
