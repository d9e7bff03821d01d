package sim

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"lookahead/forecast"
	"lookahead/internal/cputime"
)

func TestReadMauiConfigFairshare(t *testing.T) {
	mc := readCfg(t, `FSPOLICY DEDICATEDPES%
FSINTERVAL 02:00:00
FSDEPTH 30
FSDECAY 0.5
FSWEIGHT 2
FSCAP 150
FSUSERWEIGHT 10
FSGROUPCAP 7
USERCFG[DEFAULT] FSTARGET=12.5
USERCFG[u02] FSTARGET=25+ PRIORITY=3
GROUPCFG[g1] FSTARGET=40-
ACCOUNTCFG[a1] FSTARGET=1000000^
CLASSCFG[batch] FSTARGET=70
QOSCFG[hi] FSTARGET=20%
`)
	f := mc.Policy.Fairshare
	if f == nil {
		t.Fatal("no fairshare read")
	}
	if f.Policy != FSDedicatedPES || !f.Percent || f.Interval != 7200 || f.Depth != maxFSDepth || f.Decay != 0.5 {
		t.Errorf("fairshare %+v", f)
	}
	want := [fsCreds]map[string]FSTarget{
		FSUser:    {"DEFAULT": {12.5, FSTargetPlain}, "u02": {25, FSFloor}},
		FSGroup:   {"g1": {40, FSCeiling}},
		FSAccount: {"a1": {1000000, FSCapAbs}},
		FSQOS:     {"hi": {20, FSCapRel}},
		FSClass:   {"batch": {70, FSTargetPlain}},
	}
	if !reflect.DeepEqual(f.Targets, want) {
		t.Errorf("targets %v, want %v", f.Targets, want)
	}
	p := mc.Policy.Priority
	if p.FS != 2 || p.FSUser != 10 || p.Caps.FS != 150 || p.Caps.FSGroup != 7 || p.UserPrio["u02"] != 3 {
		t.Errorf("priority %+v", p)
	}
	if len(mc.Unmodelled) != 0 {
		t.Errorf("unmodelled %q", mc.Unmodelled)
	}
	// caps with HIGHEST: said once, at the cap's line
	if u := readCfg(t, "FSPOLICY ON\nRESERVATIONPOLICY HIGHEST\nUSERCFG[a] FSTARGET=5^\n").Unmodelled; len(u) != 1 || !strings.HasPrefix(u[0], "maui.cfg:3: fairshare caps with") {
		t.Errorf("caps with HIGHEST: %q", u)
	}
	// Maui's defaults; a true value is DEDICATEDPS; NONE switches it off
	if f := readCfg(t, "FSPOLICY TRUE\n").Policy.Fairshare; f == nil || f.Policy != FSDedicatedPS || f.Interval != 43200 || f.Depth != 8 || f.Decay != 1 {
		t.Errorf("defaults %+v", f)
	}
	if f := readCfg(t, "FSPOLICY NONE\nUSERCFG[u1] FSTARGET=10\n").Policy.Fairshare; f != nil {
		t.Errorf("FSPOLICY NONE: fairshare %+v", f)
	}
	for _, bad := range []string{"FSPOLICY SOME", "FSINTERVAL x", "FSINTERVAL 0", "FSDEPTH 0", "FSDECAY -1",
		"USERCFG[u1] FSTARGET=x", "USERCFG[u1] FSTARGET=10+-", "FSUSERWEIGHT 1.5", "FSDECAY NaN", "FSDECAY Inf",
		"USERCFG[u1] FSTARGET=NaN", "USERCFG[u1] FSTARGET=inf^"} {
		if _, err := ReadMauiConfig(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func fsCluster(procs int) Cluster {
	return Cluster{Nodes: []forecast.SnapshotNode{{Name: "n1", Procs: procs, State: []string{forecast.NodeFree}, Speed: 1}}}
}

// Usage accrues at every iteration by the time since the previous one ×
// the job's processors, the iteration where a job ends adds nothing, and
// the interval turns after the first iteration at or past its edge (an
// event of its own), the past intervals decayed.
func TestFairshareAccrual(t *testing.T) {
	mc := readCfg(t, "FSPOLICY DEDICATEDPS\nFSINTERVAL 100\nFSDEPTH 3\nFSDECAY 0.5\n")
	e := NewEngine(fsCluster(8), mc.Policy, 0)
	e.Submit(Job{ID: "a", Procs: 2, Walltime: 1000, Runtime: 240, Submit: 10, User: "alice", Group: "g"})
	e.Submit(Job{ID: "b", Procs: 1, Walltime: 1000, Runtime: 1000, Submit: 50, User: "bob", Group: "g"})
	e.AdvanceTo(99)
	s := e.Fairshare()
	if got := s.Cred[FSUser]["alice"].Usage[0]; got != 80 { // iterations at 10 (start) and 50
		t.Errorf("alice at 99: %v, want 80", got)
	}
	e.AdvanceTo(150)
	s = e.Fairshare()
	// the edge at 100 is an iteration: [50,100] added to the old
	// interval, which turned after it
	if u := s.Cred[FSUser]["alice"]; u.Usage[0] != 0 || u.Usage[1] != 180 || s.Interval != 100 {
		t.Errorf("alice at 150: %v (interval %d), want [0 180]", u.Usage[:3], s.Interval)
	}
	e.AdvanceTo(260)
	s = e.Fairshare()
	// 200 (edge): +100×2 into [100,200), turned; 250: alice ends, adds
	// nothing. bob (1 processor from 50) adds to the group and the total.
	u := s.Cred[FSUser]["alice"]
	if u.Usage[0] != 0 || u.Usage[1] != 200 || u.Usage[2] != 180 || u.factor != 200*0.5+180*0.25 {
		t.Errorf("alice at 260: %v factor %v, want [0 200 180] and 145", u.Usage[:3], u.factor)
	}
	if g, tot := s.Cred[FSGroup]["g"].Usage, s.Total.Usage; g[0] != 50 || g[1] != 300 || g[2] != 230 || tot != g {
		t.Errorf("group %v total %v", g[:3], tot[:3])
	}
}

// A user far over their target waits behind a user under theirs, though
// the latter submitted later and queue time alone would order them the
// other way; the decay and the interval turn bring the first user back.
func TestFairsharePriority(t *testing.T) {
	cfg := `FSPOLICY DEDICATEDPS
FSINTERVAL 1000
FSUSERWEIGHT 10
USERCFG[DEFAULT] FSTARGET=50
RESERVATIONDEPTH 0
QUEUETIMEWEIGHT 0
`
	mc := readCfg(t, cfg)
	jobs := []Job{
		{ID: "a0", Procs: 4, Walltime: 600, Runtime: 500, Submit: 0, User: "alice"},
		{ID: "a1", Procs: 4, Walltime: 600, Runtime: 500, Submit: 100, User: "alice"},
		{ID: "b1", Procs: 4, Walltime: 600, Runtime: 500, Submit: 200, User: "bob"},
	}
	res, err := Run(fsCluster(4), jobs, mc.Policy)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, r := range res.Jobs {
		got[r.ID] = r.Start
	}
	// at 500 alice has all the usage: a1 at 50-100 % = -500, b1 at +500
	if got["b1"] != 500 || got["a1"] != 1000 {
		t.Errorf("starts %v, want b1 500, a1 1000", got)
	}
	// without fairshare (every priority 1) arrival orders them: a1 first
	p := mc.Policy
	p.Fairshare = nil
	res, _ = Run(fsCluster(4), jobs, p)
	for _, r := range res.Jobs {
		if r.ID == "a1" && r.Start != 500 {
			t.Errorf("without fairshare a1 starts %d, want 500", r.Start)
		}
	}
}

func TestFSFactor(t *testing.T) {
	for _, c := range []struct {
		t       FSTarget
		pct     float64
		percent bool
		want    float64
	}{
		{FSTarget{30, FSTargetPlain}, 40, false, -10},
		{FSTarget{30, FSTargetPlain}, 20, false, 10},
		{FSTarget{30, FSFloor}, 40, false, 0},
		{FSTarget{30, FSFloor}, 20, false, 10},
		{FSTarget{30, FSCeiling}, 40, false, -10},
		{FSTarget{30, FSCeiling}, 20, false, 0},
		{FSTarget{30, FSCapAbs}, 20, false, 0},
		{FSTarget{30, FSCapRel}, 40, false, 0},
		{FSTarget{20, FSTargetPlain}, 30, true, -0.5},
		{FSTarget{20, FSTargetPlain}, 5, true, 0.75},
	} {
		if got := fsFactor(c.t, c.pct, c.percent); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("fsFactor(%v, %v, %v) = %v, want %v", c.t, c.pct, c.percent, got, c.want)
		}
	}
}

// The fairshare reference schedules exercise fairshare: replayed with it
// ignored (no usage, no interval edges), fewer starts match Maui's.
func TestMauiReferenceFairshareMatters(t *testing.T) {
	for _, dir := range refDirs(t) {
		c := loadRefCase(t, dir)
		p, err := c.policy()
		if err != nil || p.Fairshare == nil {
			continue
		}
		with, _, _ := compareRef(t, c, p)
		if noCaps, ok := withoutCaps(p); ok {
			n, _, report := compareRef(t, c, noCaps)
			t.Logf("%s: %d starts exact with its caps ignored (%s)", c.name, n, report)
			if n >= with {
				t.Errorf("%s: caps ignored match as well (%d) as followed (%d)", c.name, n, with)
			}
		}
		p.Fairshare = nil
		without, _, report := compareRef(t, c, p)
		t.Logf("%s: %d starts exact with fairshare, %d ignoring it (%s)", c.name, with, without, report)
		if without >= with {
			t.Errorf("%s: fairshare ignored matches as well (%d) as followed (%d)", c.name, without, with)
		}
	}
}

// A forecast from a snapshot keeps its jobs' groups and accounts: a group
// limit holds the second job of the group back (it was dropped before, so
// both started at once).
func TestBuildKeepsGroupAndAccount(t *testing.T) {
	mc := readCfg(t, "GROUPCFG[g1] MAXJOB=1\nACCOUNTCFG[p1] MAXJOB=1\n")
	snap := forecast.Snapshot{Site: "s", Nodes: []forecast.SnapshotNode{{Name: "n1", Procs: 8, State: []string{forecast.NodeFree}}},
		Jobs: []forecast.LocalJob{
			{ID: "1", User: "a", Group: "g1", State: "Q", Procs: 1, Walltime: 100, Submitted: 0},
			{ID: "2", User: "b", Group: "g1", State: "Q", Procs: 1, Walltime: 100, Submitted: 1},
			{ID: "3", User: "c", Group: "g2", Account: "p1", State: "Q", Procs: 1, Walltime: 100, Submitted: 2},
			{ID: "4", User: "d", Group: "g2", Account: "p1", State: "Q", Procs: 1, Walltime: 100, Submitted: 3},
		}}
	_, preds, err := Build(snap, 10, 1000, mc.Policy, forecast.DefaultPricing())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, p := range preds {
		got[p.Job] = p.Start
	}
	if got["1"] != 10 || got["2"] != 110 || got["3"] != 10 || got["4"] != 110 {
		t.Errorf("starts %v, want 1 and 3 at 10, 2 and 4 at 110", got)
	}
}

// A forecast starts from the site's usage (Fairshare.Seed): the heavy
// user's job waits behind the light user's, though it was submitted first.
func TestBuildFairshareSeed(t *testing.T) {
	mc := readCfg(t, "FSPOLICY DEDICATEDPS\nFSINTERVAL 1000\nFSUSERWEIGHT 10\nUSERCFG[DEFAULT] FSTARGET=50\n")
	snap := forecast.Snapshot{Site: "s", Nodes: []forecast.SnapshotNode{{Name: "n1", Procs: 4, State: []string{forecast.NodeFree}}},
		Jobs: []forecast.LocalJob{
			{ID: "r", User: "carol", State: "R", Procs: 4, Walltime: 100, Submitted: 0, Started: 5, Hosts: []forecast.HostProcs{{Node: "n1", Procs: 4}}},
			{ID: "a", User: "alice", State: "Q", Procs: 4, Walltime: 100, Submitted: 1},
			{ID: "b", User: "bob", State: "Q", Procs: 4, Walltime: 100, Submitted: 5},
		}}
	starts := func(p Policy) map[string]int64 {
		_, preds, err := Build(snap, 10, 1000, p, forecast.DefaultPricing())
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, p := range preds {
			got[p.Job] = p.Start
		}
		return got
	}
	if got := starts(mc.Policy); got["a"] != 105 || got["b"] != 205 {
		t.Errorf("no usage: starts %v, want a 105, b 205", got)
	}
	seeded := *mc.Policy.Fairshare
	seeded.Seed = &FSState{Interval: 0, Cred: [fsCreds]map[string]*FSUsage{FSUser: {"alice": {Usage: [maxFSDepth]float64{0, 9000}}}}}
	seeded.Seed.Total.Usage[1] = 10000
	p := mc.Policy
	p.Fairshare = &seeded
	if got := starts(p); got["b"] != 105 || got["a"] != 205 {
		t.Errorf("alice with 90 %% of the usage: starts %v, want b 105, a 205", got)
	}
}

// BenchmarkFairshare is what following fairshare costs: the fairshare
// reference schedules replayed with it (on) and with it ignored (off), in
// the same run.
func BenchmarkFairshare(b *testing.B) {
	var cases []refCase
	var pols []Policy
	for _, dir := range refDirs(b) {
		c := loadRefCase(b, dir)
		if p, err := c.policy(); err == nil && p.Fairshare != nil {
			cases, pols = append(cases, c), append(pols, p)
		}
	}
	for _, on := range []bool{true, false} {
		b.Run(map[bool]string{true: "on", false: "off"}[on], func(b *testing.B) {
			cpu0 := cputime.Used()
			for b.Loop() {
				for i, c := range cases {
					p := pols[i]
					if !on {
						p.Fairshare = nil
					}
					if _, err := RunWith(c.cluster, c.jobs, p, Options{KeepHosts: true}); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric((cputime.Used()-cpu0).Seconds()*1000/float64(b.N), "cpu-ms/op")
		})
	}
}

// A user over an absolute cap (usage + decayed usage + the job's
// processors × walltime) is not selected: the job neither starts nor
// holds processors for later jobs, and starts once the usage has decayed
// below the cap; another user's job is not held back.
func TestFairshareCap(t *testing.T) {
	cfg := `FSPOLICY DEDICATEDPS
FSINTERVAL 1000
FSDEPTH 2
FSDECAY 0.5
USERCFG[alice] FSTARGET=5000^
`
	mc := readCfg(t, cfg)
	jobs := []Job{
		{ID: "a0", Procs: 4, Walltime: 1000, Runtime: 990, Submit: 0, User: "alice"},
		{ID: "a1", Procs: 2, Walltime: 100, Runtime: 100, Submit: 500, User: "alice"},
		{ID: "b1", Procs: 2, Walltime: 100, Runtime: 100, Submit: 600, User: "bob"},
	}
	res, err := Run(fsCluster(8), jobs, mc.Policy)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, r := range res.Jobs {
		got[r.ID] = r.Start
	}
	// a0 starts (nothing used yet: 0 + 4000 <= 5000); at 500 alice has
	// used 2000: 2000 + 200 fits; b1 is bob's. No cap bites yet.
	if got["a0"] != 0 || got["a1"] != 500 || got["b1"] != 600 {
		t.Fatalf("starts %v", got)
	}
	jobs = append(jobs, Job{ID: "a2", Procs: 2, Walltime: 1000, Runtime: 100, Submit: 700, User: "alice"})
	res, _ = Run(fsCluster(8), jobs, mc.Policy)
	for _, r := range res.Jobs {
		got[r.ID] = r.Start
	}
	// at 700 alice has 4×700 = 2800 (a1 ended at the iteration after its
	// start and added nothing): 2800 + 2×1000 = 4800, not over: starts
	if got["a2"] != 700 {
		t.Errorf("a2 starts %d, want 700 (at the cap, not over it)", got["a2"])
	}
	jobs[3].Procs = 3 // 2800 + 3000 > 5000: refused until the usage decays
	res, _ = Run(fsCluster(8), jobs, mc.Policy)
	for _, r := range res.Jobs {
		got[r.ID] = r.Start
	}
	// a0 ends at 990, charged up to its last iteration (700): 2800 in
	// [0,1000); the interval turns after the 1000 edge iteration (still
	// refused there), 0.5 × 2800 + 3000 fits at the next edge, 2000 (an
	// event because a capped job waits for its usage to decay)
	if got["a2"] != 2000 {
		t.Errorf("a2 (3 processors) starts %d, want 2000", got["a2"])
	}
	p := mc.Policy
	p.Fairshare = nil
	res, _ = Run(fsCluster(8), jobs, p)
	for _, r := range res.Jobs {
		if r.ID == "a2" && r.Start != 700 {
			t.Errorf("without fairshare a2 starts %d, want 700", r.Start)
		}
	}
}

// withoutCaps is p with its fairshare cap targets dropped; false when it
// has none.
func withoutCaps(p Policy) (Policy, bool) {
	f := *p.Fairshare
	found := false
	for k, m := range f.Targets {
		kept := map[string]FSTarget{}
		for n, t := range m {
			if t.Mode == FSCapAbs || t.Mode == FSCapRel {
				found = true
				continue
			}
			kept[n] = t
		}
		f.Targets[k] = kept
	}
	p.Fairshare = &f
	return p, found
}
