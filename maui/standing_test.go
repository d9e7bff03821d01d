package maui

import (
	"reflect"
	"testing"
	"time"
)

// The exact phase stops on every standing-reservation window edge inside
// the forecast (Maui's decisions change there with nothing ending).
func TestStandingEdges(t *testing.T) {
	now := time.Date(2026, 11, 25, 16, 30, 0, 0, time.UTC).Unix()
	site := []byte("SRCFG[maint] PERIOD=DAY STARTTIME=02:00:00 ENDTIME=06:00:00 HOSTLIST=n01\nSRCFG[none] PERIOD=DAY\n")
	got := standingEdges(site, now, now+36*3600, time.UTC)
	h := func(hours float64) int64 { return int64(hours * 3600) }
	if want := []int64{h(9.5), h(13.5), h(33.5)}; !reflect.DeepEqual(got, want) {
		t.Errorf("edges %v, want %v", got, want)
	}
	if got := standingEdges(nil, now, now+3600, time.UTC); got != nil {
		t.Errorf("no site config: edges %v", got)
	}
}
