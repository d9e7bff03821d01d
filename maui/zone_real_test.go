package maui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// siteZoneFor is a fixed-offset zone (Etc/GMT-N is UTC+N) at least 6 h
// from UTC in which the 4 hours after wall do not cross midnight, so a
// daily window placed there in that zone and the same hours on UTC are
// far apart.
func siteZoneFor(t *testing.T, wall time.Time) *time.Location {
	for _, o := range []int{6, 7, 8, 9, 10, 11, 12, -6, -7, -8, -9, -10, -11} {
		name := fmt.Sprintf("Etc/GMT-%d", o)
		if o < 0 {
			name = fmt.Sprintf("Etc/GMT+%d", -o)
		}
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Skipf("no tzdata: %v", err)
		}
		if wall.In(loc).Hour() < 19 {
			return loc
		}
	}
	t.Skip("no zone fits")
	return nil
}

// The real Maui, run by the engine in the site's zone, places a daily
// standing reservation on that zone's wall clock: with every node held
// from 20 minutes from now for 3 hours (site time), no predicted job runs
// inside that window, and the longer jobs wait until it ends. (With
// TZ=UTC the window sat hours away and the jobs ran through it.)
func TestRealMauiStandingInSiteZone(t *testing.T) {
	bin := mauiBin(t)
	wall := time.Now().Truncate(time.Minute)
	loc := siteZoneFor(t, wall)
	ws, we := wall.Add(20*time.Minute), wall.Add(200*time.Minute)
	site := filepath.Join(t.TempDir(), "maui.cfg")
	body := fmt.Sprintf("BACKFILLPOLICY FIRSTFIT\nRESERVATIONPOLICY CURRENTHIGHEST\nNODEALLOCATIONPOLICY MINRESOURCE\n"+
		"SRCFG[maint] PERIOD=DAY STARTTIME=%s ENDTIME=%s TASKCOUNT=16 HOSTLIST=n01,n02,n03,n04,n05,n06,n07,n08\n",
		ws.In(loc).Format("15:04:05"), we.In(loc).Format("15:04:05"))
	if err := os.WriteFile(site, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, _ := sim1Snapshot(t)
	now := time.Now().Unix() // Maui's simulated clock starts at the wall clock
	snap.Taken = now
	for i := range snap.Jobs {
		snap.Jobs[i].Submitted = now
	}
	work := t.TempDir()
	s := NewSimulator(SimulatorConfig{BinDir: bin, WorkDir: work, SiteConfig: site, Zone: loc})
	preds, st, err := s.ForecastOrdered(context.Background(), snap, nil, now, now+8*3600)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("zone %s, window %s-%s site time, stats %+v", loc, ws.In(loc).Format("15:04"), we.In(loc).Format("15:04"), st)
	after := 0
	for _, p := range preds {
		t.Logf("%s %+ds..%+ds", p.Job, p.Start-now, p.End-now)
		if p.Start < we.Unix() && p.End > ws.Unix() {
			t.Errorf("%s runs %+ds..%+ds, inside the standing window %+ds..%+ds", p.Job, p.Start-now, p.End-now, ws.Unix()-now, we.Unix()-now)
		}
		if p.Start >= we.Unix() {
			after++
		}
	}
	if len(preds) != len(snap.Jobs) || after == 0 {
		t.Errorf("%d predictions, %d after the window: want %d, some after", len(preds), after, len(snap.Jobs))
	}
	if left := mauiProcesses(t, work); len(left) > 0 {
		t.Fatalf("maui left running: %v", left)
	}
}
