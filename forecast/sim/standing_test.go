package sim

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"lookahead/forecast"
)

// wed is Wednesday 2026-11-25 16:30 UTC.
var wed = time.Date(2026, 11, 25, 16, 30, 0, 0, time.UTC).Unix()

func nov(day, hour int) int64 {
	return time.Date(2026, 11, day, hour, 0, 0, 0, time.UTC).Unix()
}

// The windows follow MSRGetAttributes: the current period's from now, a
// DAY period on its DAYS only, a WEEK period from WSTARTTIME to WENDTIME,
// INFINITY from now for ever.
func TestStandingWindows(t *testing.T) {
	day := newStanding("d")
	day.Start, day.End = 2*3600, 6*3600
	thuFri := day
	thuFri.Days = 1<<4 | 1<<5
	week := newStanding("w")
	week.Period, week.WStart, week.WEnd = PeriodWeek, 4*dayLen+8*3600, 4*dayLen+20*3600
	inf := newStanding("i")
	inf.Period = PeriodInfinity
	late := newStanding("l") // in progress at 16:30: from now
	late.Start, late.End = 16*3600, 18*3600
	for _, c := range []struct {
		name string
		s    StandingRes
		to   int64
		want [][2]int64
	}{
		{"day", day, nov(28, 0), [][2]int64{{nov(26, 2), nov(26, 6)}, {nov(27, 2), nov(27, 6)}}},
		{"days", thuFri, nov(30, 0), [][2]int64{{nov(26, 2), nov(26, 6)}, {nov(27, 2), nov(27, 6)}}},
		{"week", week, nov(30, 0) + 7*dayLen, [][2]int64{{nov(26, 8), nov(26, 20)}, {nov(26, 8) + weekLen, nov(26, 20) + weekLen}}},
		{"infinity", inf, nov(30, 0), [][2]int64{{wed, never}}},
		{"in progress", late, nov(27, 0), [][2]int64{{wed, nov(25, 18)}, {nov(26, 16), nov(26, 18)}}},
	} {
		if got := c.s.Windows(wed, c.to, nil); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: windows %v, want %v", c.name, got, c.want)
		}
	}
}

// A window holds its nodes against jobs outside its ACL: a job that would
// run into it waits for its end, a job that fits elsewhere runs there.
func TestStandingHoldsJobs(t *testing.T) {
	s := newStanding("maint")
	s.Start, s.End, s.Hosts = 2*3600, 6*3600, []string{"n0002"}
	p := Policy{Depth: 1, Standing: &Standing{Res: []StandingRes{s}}}
	c := UniformCluster(2, 4)
	jobs := []Job{
		{ID: "wide", Procs: 8, Walltime: 2 * 3600, Runtime: 3600, Submit: nov(26, 1)},
		{ID: "narrow", Procs: 4, Walltime: 2 * 3600, Runtime: 3600, Submit: nov(26, 1) + 60},
	}
	got := runVerified(t, c, jobs, p)
	if got["wide"].Start != nov(26, 6) {
		t.Errorf("wide starts at %+d s from 06:00, want at the window's end", got["wide"].Start-nov(26, 6))
	}
	if n := got["narrow"]; n.Start != nov(26, 1)+60 || n.Hosts[0].Node != "n0001" {
		t.Errorf("narrow: start %+d s on %v, want at once on n0001", n.Start-nov(26, 1), n.Hosts)
	}
}

// The engine keeps Depth windows made, the next made at the first pass of
// a new day once the oldest has ended (MSRUpdate).
func TestStandingDepth(t *testing.T) {
	s := newStanding("d")
	s.Start, s.End, s.Hosts, s.Depth = 2*3600, 6*3600, []string{"n0001"}, 3
	e := NewEngine(UniformCluster(2, 4), Policy{Depth: 1, Standing: &Standing{Res: []StandingRes{s}}}, wed)
	e.Submit(Job{ID: "a", Procs: 1, Walltime: 60, Runtime: 60, Submit: wed})
	e.AdvanceTo(wed)
	// Wednesday's window has ended: periods 1 and 2 hold
	if got := standingStarts(e); !reflect.DeepEqual(got, []int64{nov(26, 2), nov(27, 2)}) {
		t.Errorf("at Wednesday 16:30: windows from %v", got)
	}
	e.Submit(Job{ID: "b", Procs: 1, Walltime: 60, Runtime: 60, Submit: nov(26, 1)})
	e.AdvanceTo(nov(26, 1))
	if got := standingStarts(e); !reflect.DeepEqual(got, []int64{nov(26, 2), nov(27, 2), nov(28, 2)}) {
		t.Errorf("Thursday 01:00, the first window not ended: windows from %v", got)
	}
	e.Submit(Job{ID: "c", Procs: 1, Walltime: 60, Runtime: 60, Submit: nov(27, 1)})
	e.AdvanceTo(nov(27, 1))
	if got := standingStarts(e); !reflect.DeepEqual(got, []int64{nov(27, 2), nov(28, 2), nov(29, 2)}) {
		t.Errorf("Friday 01:00: windows from %v", got)
	}
}

func standingStarts(e *Engine) []int64 {
	var out []int64
	for _, r := range e.Snapshot().Reservations {
		if r.Standing {
			out = append(out, r.Start)
		}
	}
	return out
}

func TestReadMauiConfigStanding(t *testing.T) {
	mc := readCfg(t, `SRCFG[night] PERIOD=DAY STARTTIME=22:00:00
SRCFG[night] ENDTIME=23:30:00 DAYS=MON,Fri HOSTLIST=n1,n2 DEPTH=4 RESOURCES=PROCS:2
SRCFG[night] USERLIST=alice,bob QOSLIST=hi ACCESS=SHARED
SRCFG[pool] TASKCOUNT=8
`)
	want := StandingRes{Name: "night", Period: PeriodDay, Start: 22 * 3600, End: 23*3600 + 1800, Days: 1<<1 | 1<<5,
		Depth: 4, Hosts: []string{"n1", "n2"}, Procs: 2, Users: []string{"alice", "bob"}, QOS: []string{"hi"}, line: 1}
	if mc.Policy.Standing == nil || len(mc.Policy.Standing.Res) != 2 || !reflect.DeepEqual(mc.Policy.Standing.Res[0], want) {
		t.Fatalf("standing %+v", mc.Policy.Standing)
	}
	notes := strings.Join(mc.Unmodelled, "\n")
	for _, w := range []string{"maui.cfg:3: SRCFG[night] ACCESS=SHARED: not modelled",
		"maui.cfg:4: SRCFG[pool] TASKCOUNT=8: followed in part"} {
		if !strings.Contains(notes, w) {
			t.Errorf("unmodelled lacks %q:\n%s", w, notes)
		}
	}
	if strings.Contains(notes, "ACL") {
		t.Errorf("jobs inside a window's ACL are followed, yet listed:\n%s", notes)
	}
	for _, bad := range []string{"SRCFG[x] PERIOD=MONTH", "SRCFG[x] DEPTH=0", "SRCFG[x] RESOURCES=MEM:100", "SRCFG[x] DAYS=never", "SRCFG[x] STARTTIME=2:x"} {
		if _, err := ReadMauiConfig(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

// A forecast holds every window of a standing reservation to the horizon,
// not only those Maui has made, and takes the policy's windows instead of
// the snapshot's copies.
func TestBuildHoldsStandingWindows(t *testing.T) {
	s := newStanding("maint")
	s.Start, s.End, s.Hosts, s.Depth = 2*3600, 6*3600, []string{"n0002"}, 1
	p := Policy{Depth: 1, Standing: &Standing{Res: []StandingRes{s}}}
	snap := forecast.Snapshot{Site: "s", Taken: wed, Nodes: UniformCluster(2, 4).Nodes,
		Reservations: []forecast.Reservation{{ID: "maint.0", Start: nov(26, 2), End: nov(26, 6), Standing: true,
			Hosts: []forecast.HostProcs{{Node: "n0002", Procs: 4}}}}}
	f, _, err := Build(snap, wed, nov(28, 0), p, forecast.Pricing{Base: 1, Default: forecast.Displace{Multiplier: 3}})
	if err != nil {
		t.Fatal(err)
	}
	var free int64
	for _, sl := range f.Slots {
		if sl.Node == "n0002" {
			free += (sl.End - sl.Start) * int64(sl.Procs)
		}
	}
	if want := (nov(28, 0) - wed - 2*4*3600) * 4; free != want {
		t.Errorf("n0002 offers %d processor-seconds, want %d (both windows held once)", free, want)
	}
}

// Any SRCFG line that reads gives windows in time order that do not
// overlap, and a replay with it ends, every job run or stuck.
func FuzzStandingWindows(f *testing.F) {
	f.Add("PERIOD=DAY STARTTIME=02:00:00 ENDTIME=06:00:00 HOSTLIST=n0001", int64(0))
	f.Add("PERIOD=WEEK WSTARTTIME=4:08:00:00 WENDTIME=4:20:00:00 HOSTLIST=n0001,n0002", int64(86399))
	f.Add("PERIOD=DAY DAYS=Wed,Fri STARTTIME=18:00:00 ENDTIME=23:00:00 HOSTLIST=n0002 DEPTH=3", int64(5000))
	f.Add("PERIOD=INFINITY HOSTLIST=n0001 RESOURCES=PROCS:3", int64(1))
	f.Add("PERIOD=DAY STARTTIME=23:00:00 ENDTIME=01:00:00 WENDTIME=3:00:00:00 HOSTLIST=n0001", int64(99))
	f.Fuzz(func(t *testing.T, attrs string, off int64) {
		mc, err := ReadMauiConfig(strings.NewReader("SRCFG[x] " + strings.ReplaceAll(attrs, "\n", " ") + "\n"))
		if err != nil || mc.Policy.Standing == nil {
			return
		}
		from := wed + off%weekLen
		for _, s := range mc.Policy.Standing.Res {
			last := int64(0)
			for _, w := range s.Windows(from, from+2*weekLen, nil) {
				if w[1] <= w[0] || w[0] < last || w[0] < from {
					t.Fatalf("%q: windows %v", attrs, s.Windows(from, from+2*weekLen, nil))
				}
				last = w[1]
			}
		}
		jobs := []Job{
			{ID: "a", Procs: 8, Walltime: 7200, Runtime: 3600, Submit: from},
			{ID: "b", Procs: 2, Walltime: 20 * 3600, Runtime: -1, Submit: from + 60},
		}
		res, err := Run(UniformCluster(2, 4), jobs, mc.Policy)
		if err != nil || len(res.Jobs)+len(res.Stuck) != len(jobs) {
			t.Fatalf("%q: %v, %d run, %v stuck", attrs, err, len(res.Jobs), res.Stuck)
		}
	})
}

// A job inside a window's ACL may use its nodes, and takes them first
// (positive affinity); a job outside waits for the window's end. The
// others do not count the ACL job's processors twice.
func TestStandingACL(t *testing.T) {
	s := newStanding("day")
	s.Start, s.End, s.Hosts, s.Users = 8*3600, 18*3600, []string{"n0002"}, []string{"alice"}
	p := Policy{Depth: 1, Standing: &Standing{Res: []StandingRes{s}}}
	c := UniformCluster(3, 4)
	jobs := []Job{
		{ID: "alice", User: "alice", Procs: 4, Walltime: 3600, Runtime: 3600, Submit: nov(26, 9)},
		{ID: "bob", User: "bob", Procs: 8, Walltime: 3600, Runtime: 3600, Submit: nov(26, 9) + 10},
		{ID: "carol", User: "carol", Procs: 4, Walltime: 3600, Runtime: 3600, Submit: nov(26, 9) + 20},
	}
	got := runVerified(t, c, jobs, p)
	if a := got["alice"]; a.Start != nov(26, 9) || a.Hosts[0].Node != "n0002" {
		t.Errorf("alice: start %+d s on %v, want at once on the window's node", a.Start-nov(26, 9), a.Hosts)
	}
	if b := got["bob"]; b.Start != nov(26, 9)+10 {
		t.Errorf("bob: start %+d s, want at once on the two other nodes", b.Start-nov(26, 9))
	}
	if c := got["carol"]; c.Start != nov(26, 10)+10 { // bob's end, not alice's (10:00:00, in the window)
		t.Errorf("carol: start %+d s from 10:00, want when a job outside the window ends", c.Start-nov(26, 10))
	}
}

// TestStandingACLReserveAffinity: a reservation for a job inside a
// window's ACL takes the window's nodes first (Maui's MJobAllocMNL walks
// the positive-affinity nodes before the others), leaving the other nodes
// to backfill: here dave starts at once beside bob, where a reservation
// on the nodes in plain LASTAVAILABLE order (n0002 before n0001) would
// hold him back.
func TestStandingACLReserveAffinity(t *testing.T) {
	s := newStanding("day")
	s.Start, s.End, s.Hosts, s.Users = 8*3600, 18*3600, []string{"n0001"}, []string{"alice"}
	p := Policy{Depth: 1, Standing: &Standing{Res: []StandingRes{s}}}
	at := nov(26, 9)
	jobs := []Job{
		{ID: "b1", User: "bob", Procs: 4, Walltime: 7200, Runtime: 7200, Submit: at},
		{ID: "a1", User: "alice", Procs: 4, Walltime: 3600, Runtime: 3600, Submit: at + 10},
		{ID: "b2", User: "bob", Procs: 2, Walltime: 3600, Runtime: 3600, Submit: at + 20},
		{ID: "a2", User: "alice", Procs: 4, Walltime: 3600, Runtime: 3600, Submit: at + 30},
		{ID: "dave", User: "dave", Procs: 2, Walltime: 7200, Runtime: 7200, Submit: at + 40},
	}
	got := runVerified(t, UniformCluster(3, 4), jobs, p)
	if a := got["a1"]; a.Start != at+10 || hostNames(a.Hosts) != "n0001" {
		t.Fatalf("a1: start %+d s on %v, want at once on the window's node", a.Start-at, a.Hosts)
	}
	if a := got["a2"]; a.Start != nov(26, 10)+10 || hostNames(a.Hosts) != "n0001" {
		t.Errorf("a2: start %+d s on %v, want at a1's end on the window's node", a.Start-at, a.Hosts)
	}
	if d := got["dave"]; d.Start != at+40 || hostNames(d.Hosts) != "n0002" {
		t.Errorf("dave: start %+d s on %v, want at once beside b2 (a2 reserved on the window's node)", d.Start-at, d.Hosts)
	}
}

// TestStandingACLBackfill: Maui's backfill probe (MBFGetWindow's
// pseudo-job, user, group and account [ALL], class [ALL]: Maui's class
// table always holds "[ALL]", MClassAdd(ALL) at start) passes a window
// with a USERLIST or a CLASSLIST, so a job inside the ACL backfills onto
// the window's free node while the priority pass is idle: here a1 starts
// at once, where backfill windows measured without the window's nodes
// would leave it waiting until big starts. Its QOS (DEFAULT, left out of
// its credentials) passes no QOSLIST.
func TestStandingACLBackfill(t *testing.T) {
	for _, c := range []struct {
		acl  string
		set  func(*StandingRes)
		once bool
	}{
		{"USERLIST", func(s *StandingRes) { s.Users = []string{"alice"} }, true},
		{"CLASSLIST", func(s *StandingRes) { s.Classes = []string{"short"} }, true},
		{"QOSLIST", func(s *StandingRes) { s.QOS = []string{"fast"} }, false},
	} {
		t.Run(c.acl, func(t *testing.T) {
			s := newStanding("day")
			s.Start, s.End, s.Hosts = 8*3600, 18*3600, []string{"n0001"}
			c.set(&s)
			p := Policy{Depth: 1, Backfill: FirstFit, Standing: &Standing{Res: []StandingRes{s}}}
			at := nov(26, 9)
			jobs := []Job{
				{ID: "b1", User: "bob", Queue: "batch", Procs: 4, Walltime: 7200, Runtime: 7200, Submit: at},
				{ID: "b2", User: "bob", Queue: "batch", Procs: 4, Walltime: 7200, Runtime: 7200, Submit: at},
				{ID: "big", User: "bob", Queue: "batch", Procs: 8, Walltime: 3600, Runtime: 3600, Submit: at + 10},
				{ID: "carl", User: "carl", Queue: "batch", Procs: 4, Walltime: 3600, Runtime: 3600, Submit: at + 20},
				{ID: "a1", User: "alice", Queue: "short", QOS: "fast", Procs: 4, Walltime: 3600, Runtime: 3600, Submit: at + 30},
			}
			got := runVerified(t, UniformCluster(3, 4), jobs, p)
			if b := got["big"]; b.Start != nov(26, 11) {
				t.Fatalf("big: start %+d s, want at b1's and b2's end", b.Start-at)
			}
			a := got["a1"]
			if once := a.Start == at+30 && hostNames(a.Hosts) == "n0001"; once != c.once {
				t.Errorf("a1: start %+d s on %v; at once on the window's node (backfill): %v, want %v", a.Start-at, a.Hosts, once, c.once)
			}
		})
	}
}
