package main

import (
	"fmt"
	"strconv"
	"time"
	// a trace's TimeZoneString ("US/Eastern") loads on a host without a
	// zone database too: the same replay everywhere
	_ "time/tzdata"

	"github.com/spf13/pflag"

	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/internal/cli"
)

// clockFlags are --start and --timezone: the override of a trace's wall
// clock (docs/simulator.md, "The wall clock").
type clockFlags struct {
	start    string
	timezone string
}

func (c *clockFlags) add(f *pflag.FlagSet, what string) {
	f.StringVar(&c.start, "start", "", "the wall-clock time of "+what+" (Unix seconds or RFC 3339; default: the trace header's UnixStartTime)")
	f.StringVar(&c.timezone, "timezone", "", "the site's time zone, where standing reservations' windows fall (default: the trace header's TimeZoneString, else UTC)")
}

// setting is what the flags say of the clock; a bad value is a usage
// error naming its flag.
func (c clockFlags) setting() (sim.ClockSetting, error) {
	var s sim.ClockSetting
	if c.start != "" {
		t, err := parseStart(c.start)
		if err != nil {
			return s, cli.Usagef("--start %q: %v", c.start, err)
		}
		s.Origin, s.HasOrigin = t, true
	}
	if c.timezone != "" {
		loc, err := time.LoadLocation(c.timezone)
		if err != nil {
			return s, cli.Usagef("--timezone %q: %v", c.timezone, err)
		}
		s.Zone = loc
	}
	return s, nil
}

// parseStart reads Unix seconds or an RFC 3339 time.
func parseStart(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t, terr := time.Parse(time.RFC3339, v)
		if terr != nil {
			return 0, fmt.Errorf("want Unix seconds or an RFC 3339 time (2006-01-02T15:04:05Z)")
		}
		n = t.Unix()
	}
	if n < 0 || n > forecast.MaxInstant {
		return 0, fmt.Errorf("must lie in [0, %d] (1970 on)", forecast.MaxInstant)
	}
	return n, nil
}
