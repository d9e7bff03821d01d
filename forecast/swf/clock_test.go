package swf

import (
	"errors"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the archive's zones load without the host's database
)

// The real archive headers give the trace's wall clock: KTH's first job
// was submitted on Mon Sep 23 14:00:31 CEST 1996, as its StartTime says.
func TestHeaderClockOfRealTraces(t *testing.T) {
	for _, c := range []struct {
		file, zone, start string
	}{
		{"KTH-SP2-1996-2.1-cln.head800.swf", "Europe/Stockholm", "Mon Sep 23 14:00:31 CEST 1996"},
		{"CTC-SP2-1996-3.1-cln.head800.swf", "US/Eastern", "Wed Jun 26 17:06:00 EDT 1996"},
	} {
		h := readFile(t, c.file).Header
		cs, err := h.Clock(time.LoadLocation)
		if err != nil {
			t.Fatal(err)
		}
		if !cs.HasOrigin || cs.Zone == nil || cs.Zone.String() != c.zone {
			t.Fatalf("%s: clock %+v, want an origin and zone %s", c.file, cs, c.zone)
		}
		if got := time.Unix(cs.Origin, 0).In(cs.Zone).Format(time.UnixDate); got != strings.Replace(c.start, "  ", " ", 1) {
			t.Errorf("%s: time 0 is %s, the header's StartTime says %s", c.file, got, c.start)
		}
	}
}

func TestHeaderClockFields(t *testing.T) {
	read := func(hdr string) Header {
		t.Helper()
		tr, err := Read(strings.NewReader(hdr+"1 0 1 10 1 -1 -1 1 60 -1 1 1 1 -1 1 -1 -1 -1\n"), 0)
		if err != nil {
			t.Fatal(err)
		}
		return tr.Header
	}
	h := read("; UnixStartTime: 0\n; TimeZone: -12600\n")
	cs, err := h.Clock(time.LoadLocation)
	if err != nil || !cs.HasOrigin || cs.Origin != 0 {
		t.Fatalf("an origin of 0 is said: %+v %v", cs, err)
	}
	if _, off := time.Unix(0, 0).In(cs.Zone).Zone(); off != -12600 || cs.Zone.String() != "UTC-03:30" {
		t.Errorf("TimeZone -12600 without a name: zone %v offset %d, want UTC-03:30", cs.Zone, off)
	}
	if cs, _ := read("; MaxProcs: 4\n").Clock(time.LoadLocation); cs.HasOrigin || cs.Zone != nil {
		t.Errorf("no header: nothing said, got %+v", cs)
	}
	_, err = read("; TimeZoneString: Mars/Olympus\n").Clock(time.LoadLocation)
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "TimeZoneString \"Mars/Olympus\"") {
		t.Errorf("an unknown zone: %v, want an error naming the field", err)
	}
	_, err = read("; UnixStartTime: 99999999999999\n").Clock(time.LoadLocation)
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "UnixStartTime") {
		t.Errorf("a start past the model's limit: %v", err)
	}
}
