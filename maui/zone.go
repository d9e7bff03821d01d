package maui

import (
	"os"
	"time"
)

// zoneEnv is what puts a Maui process in the site's time zone loc, added
// after the inherited environment (the last TZ wins). Maui places its
// standing reservations (SRCFG STARTTIME, DAYS, PERIOD=DAY) on the local
// wall clock of the process, so the private Maui must run in the zone the
// site's own Maui runs in. The host's local zone (time.Local, or nil) adds
// nothing: the process then reads its zone as the site's Maui beside it
// does (TZ if set, else /etc/localtime), which is also where Go's
// time.Local came from. Any other zone is named by TZ=<name>.
func zoneEnv(loc *time.Location) []string {
	if loc == nil || loc == time.Local {
		return nil
	}
	return []string{"TZ=" + loc.String()}
}

// Zone is the site's time zone, the one the private Maui runs in (the
// host's local zone by default).
func (s *Simulator) Zone() *time.Location {
	if s.cfg.Zone == nil {
		return time.Local
	}
	return s.cfg.Zone
}

// env is the environment of the private Maui and of its clients: this
// process's, with the private home and the site's zone.
func (s *Simulator) env(home string) []string {
	return append(append(os.Environ(), "MAUIHOMEDIR="+home), zoneEnv(s.Zone())...)
}
