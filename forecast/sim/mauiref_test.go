package sim

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// refRecord is one job of a reference simstat.out (Maui's record).
type refRecord struct {
	mauiJob
	user, group, account, class string
	tpn                         int
	qos                         string // asked for (Maui's field is asked:given)
	feats                       []string
}

func readRefRecords(t testing.TB, path string) []refRecord {
	t.Helper()
	var out []refRecord
	for _, f := range readTraceFields(t, path) {
		num := func(i int) int64 { return parseField(t, path, f, i) }
		r := refRecord{mauiJob: mauiJob{id: f[0], tasks: int(num(2)), wclimit: num(5), queue: num(8), start: num(10), end: num(11)},
			user: f[3], group: f[4], account: f[25], class: strings.Trim(f[7], "[]"), tpn: int(num(22))}
		r.class, _, _ = strings.Cut(r.class, ":")
		if q, _, _ := strings.Cut(f[23], ":"); q != "[NONE]" && q != "[DEFAULT]" {
			r.qos = q
		}
		r.feats = traceFeatures(f[19])
		if len(f) > 37 {
			r.hosts = f[37]
		}
		out = append(out, r)
	}
	return out
}

// refCase is a reference schedule ready to replay.
type refCase struct {
	name    string
	cluster Cluster
	jobs    []Job
	maui    map[string]refRecord
	cfg     string
	zone    *time.Location // Maui's TZ (the folder's TZ file; nil: UTC)
}

func loadRefCase(t testing.TB, dir string) refCase {
	t.Helper()
	cfg, err := os.ReadFile(filepath.Join(dir, "maui.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	c := refCase{name: filepath.Base(dir), cluster: readMauiNodes(t, filepath.Join(dir, "resource.trace")), maui: map[string]refRecord{}, cfg: string(cfg),
		zone: refZone(t, dir)}
	for _, r := range readRefRecords(t, filepath.Join(dir, "simstat.out.gz")) {
		c.maui[r.id] = r
		c.jobs = append(c.jobs, Job{ID: r.id, Procs: r.tasks, PPN: r.tpn, Walltime: r.wclimit, Runtime: r.end - r.start, Submit: r.queue,
			User: r.user, Group: r.group, Account: r.account, Queue: r.class, QOS: r.qos, Features: r.feats})
	}
	// trace order: by arrival, then name (the generator's order)
	sort.Slice(c.jobs, func(i, j int) bool {
		a, b := c.jobs[i], c.jobs[j]
		return a.Submit < b.Submit || (a.Submit == b.Submit && a.ID < b.ID)
	})
	return c
}

func refDirs(t testing.TB) []string {
	dirs, err := filepath.Glob("testdata/mauiref/*/simstat.out.gz")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no reference schedules in testdata/mauiref (%v)", err)
	}
	for i := range dirs {
		dirs[i] = filepath.Dir(dirs[i])
	}
	sort.Strings(dirs)
	return dirs
}

// compareRef replays c with p and compares every start (and host list)
// with Maui's.
func compareRef(t testing.TB, c refCase, p Policy) (exact, hosts int, report string) {
	res, err := Run(c.cluster, c.jobs, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(c.cluster, c.jobs, res); err != nil {
		t.Fatal(err)
	}
	ours := map[string]JobResult{}
	for _, r := range res.Jobs {
		ours[r.ID] = r
	}
	var diffs []string
	first, base := int64(never), c.jobs[0].Submit
	if len(c.jobs) > 1 && c.jobs[0].ID == "j0000" { // the starter job, see refRun.drive
		base = c.jobs[1].Submit
	}
	for _, j := range c.jobs {
		m := c.maui[j.ID]
		o, ok := ours[j.ID]
		if !ok {
			t.Fatalf("%s: job %s did not run here", c.name, j.ID)
		}
		if hostNames(o.Hosts) == m.hosts {
			hosts++
		}
		if d := o.Start - m.start; d != 0 {
			diffs = append(diffs, fmt.Sprintf("%s(%+d)", j.ID, d))
			first = min(first, o.Start-base, m.start-base)
			continue
		}
		exact++
	}
	if len(diffs) > 10 {
		diffs = append(diffs[:10], "…")
	}
	report = fmt.Sprintf("%d/%d starts exact (%.1f %%), %d on Maui's hosts", exact, len(c.jobs), 100*float64(exact)/float64(len(c.jobs)), hosts)
	if len(diffs) > 0 {
		report += fmt.Sprintf(", first difference at +%d s: %s", first, strings.Join(diffs, " "))
	}
	return exact, hosts, report
}

// refFloor is how many starts (and host lists) of each reference schedule
// the simulator must reproduce exactly; all of them unless listed.
var refFloor = map[string]int{
	// (Node policies, held out (docs/simulator.md, "Node policies"): as
	// it came, nodemaxheld was 131 starts and 149 host lists, first
	// difference +20736 s; with Maui's second call followed
	// (nodePolicyRedo) 187 and 197, +43358 s; exact since the node job
	// table and job slots are followed.)
	// Usage limits (docs/simulator.md, "Usage limits"): limits, maxproc,
	// maxps, maxwc, softhard and limitsheld are exact since the second
	// call's reservations and drops and the queue time counted from
	// SystemQueueTime were followed (held out: limitsheld as it came, 33
	// starts and 29 host lists, +0 s); maxjob (108 starts, 110 host lists,
	// +16623 s before) since the second call also runs after a refused
	// job's failed reservation ended the first; qoslimits (49 starts, 48
	// host lists, +2313 s before) since the backfill window's own limit
	// check (QOS DEFAULT at its MAXJOB: no backfill) is followed.
	// (Standing reservations, docs/simulator.md, "Standing reservations":
	// sracl was 117 starts and 53 host lists (+1125 s) before jobs inside
	// a window's ACL were placed as Maui places them: the affinity its
	// walk gives a node, the window's pieces cut at the jobs inside it.)
	// Standing reservations and QOS. Both first differences follow a job
	// started at a window's end: Maui leaves a phantom reservation on the
	// first node of the window's host list (a Maui defect, seen with
	// showres -n; docs/simulator.md), not modelled.
	"srqos": 153, // 199 starts, 153 host lists; +44696 s
	// held out: as it came, 192 starts and 175 host lists, +58496 s
	"srheld": 175,
	// (Issue 37's held-out folders, written with its code committed
	// (86cb868), generated and compared once, as they came
	// (docs/simulator.md): siteheld 285 starts, 283 host lists, first
	// difference +8995 s: j0089, class short, backfilled by Maui on n048
	// of the INFINITY CLASSLIST window, which admits the backfill probe;
	// exact since admitsAll counts a CLASSLIST. nodeheld2 37 starts, 25
	// host lists, +0 s: Maui starts a job of whole chunks per node under
	// LASTAVAILABLE with node policies short of its tasks (j0012, 60 tasks
	// of 2 per node, started on 54); exact since pickChunks follows it,
	// the first reservation of a pass counts a chunked job's nodes before
	// rounding (slotsFit) and a reservation used at once after
	// IdleJobFound counts against the depth.)
	// (Held out, as they came: fsheld 132 starts and 91 host lists,
	// fsheld2 259 and 228; their cause, how Maui books chunked jobs under
	// LASTAVAILABLE and FIRSTAVAILABLE, is followed now: docs/simulator.md,
	// "Fairshare".)
}

// TestMauiReference replays every reference schedule Maui 3.3.1 made
// (testdata/mauiref, see mauiref_gen_test.go) with the policy read from the
// maui.cfg it ran with, and compares every start time and host list.
func TestMauiReference(t *testing.T) {
	for _, dir := range refDirs(t) {
		c := loadRefCase(t, dir)
		p, err := c.policy()
		if err != nil {
			t.Fatal(err)
		}
		exact, hosts, report := compareRef(t, c, p)
		t.Logf("%s: %s", c.name, report)
		floor, ok := refFloor[c.name]
		if !ok {
			floor = len(c.jobs)
		}
		if exact < floor || hosts < floor {
			t.Errorf("%s: %d starts and %d host lists exact, want at least %d", c.name, exact, hosts, floor)
		}
	}
}

// policy is the policy read from the maui.cfg Maui ran with, on Maui's
// clock: the times in simstat are Unix times, in the zone it ran in.
func (c refCase) policy() (Policy, error) {
	mc, err := ReadMauiConfig(strings.NewReader(c.cfg))
	clock, _ := TraceClock(ClockSetting{Zone: c.zone}, ClockSetting{HasOrigin: true})
	return clock.Site(mc.Policy), err
}

// refZone is the zone a reference ran in: its folder's TZ file names it
// (the folders without one ran with TZ=UTC).
func refZone(t testing.TB, dir string) *time.Location {
	b, err := os.ReadFile(filepath.Join(dir, "TZ"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	must(t, err)
	loc, err := time.LoadLocation(strings.TrimSpace(string(b)))
	must(t, err)
	return loc
}
