package maui

import (
	"bytes"
	"time"

	"lookahead/forecast/sim"
)

// standingEdges are the window edges of the site's standing reservations
// (SRCFG in the maui.cfg copied into the simulation) in (now, horizon),
// relative to now. Maui's decisions change there with nothing arriving or
// ending, so the exact phase stops on them as on a hold's boundaries. The
// private Maui runs in the site's zone loc (zoneEnv), so its windows sit
// on loc's wall clock.
func standingEdges(site []byte, now, horizon int64, loc *time.Location) []int64 {
	if len(site) == 0 {
		return nil
	}
	mc, err := sim.ReadMauiConfig(bytes.NewReader(site))
	if err != nil || mc.Policy.Standing == nil {
		return nil // a maui.cfg the simulator cannot read: Maui reports it itself
	}
	var out []int64
	for _, s := range mc.Policy.Standing.Res {
		if len(s.Hosts) == 0 {
			continue
		}
		for _, w := range s.Windows(now, horizon, loc) {
			for _, t := range w {
				if t > now && t < horizon {
					out = append(out, t-now)
				}
			}
		}
	}
	return out
}
