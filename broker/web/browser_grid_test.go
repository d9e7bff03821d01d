package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go/jetstream"

	"lookahead/broker/client"
	"lookahead/broker/web"
	"lookahead/forecast/sim"
	"lookahead/wire"
)

// TestBrowserShowsTheGrid runs the page in headless Chromium against a
// broker with two simulated sites under real agents and a published
// 5,000-node site: no console errors; every site and job the broker has
// is shown; sites sort and filter, and a site's name opens its Gantt; a
// job reserved by a cycle turns reserved without a reload, one that
// finished shows when it started; the Gantt opens on the grid's work
// with labelled bars, and a 5,000-node site is aggregated into the rows
// that fit; the audit tab colours a finished job as a success; the legend
// colours are told apart. It takes a screenshot of each tab (written to
// docs/images with -update-screenshots, else checked against the docs).
func TestBrowserShowsTheGrid(t *testing.T) {
	path := chromium(t)
	g := newGrid(t)
	g.order = "price" // the order the queue tab's checks and screenshot show
	g.startAgent("alpha", 4)
	g.startAgent("beta", 4)
	g.publishBig("huge", 5000)
	g.startBroker()
	g.waitSites(3)
	small := g.submit("r-small", 16, 3600, 5)
	wide := g.submit("r-wide", 48, 3600, 5)   // wider than one site: co-allocated
	never := g.submit("r-never", 8, 60, 0.01) // no slot is that cheap: fits nowhere
	later := g.submit("r-later", 64, 3600, 5) // both sites whole: after the others, beyond the commit lead
	br := newBrowser(t, path)
	shots := newShots(t, br)

	br.do(t, "open the page", chromedp.Navigate(g.url), chromedp.WaitVisible(chromedp.CSS("#sites tbody tr")))
	br.waitTrue(t, "every site", `document.querySelectorAll("#sites tbody tr").length === 3`)
	shown := eval[[]string](t, br, `[...document.querySelectorAll("#sites tbody tr")].map(r => r.dataset.site + ":" + r.dataset.state)`)
	for _, s := range g.b.Sites().Sites {
		if !contains(shown, s.Site+":fresh") {
			t.Errorf("site %s not shown fresh: %v", s.Site, shown)
		}
	}
	unmodelled := eval[string](t, br, `document.querySelector('#sites tr[data-site="alpha"]').textContent`)
	if !strings.Contains(unmodelled, "FSPOLICY DEDICATEDPS") {
		t.Errorf("alpha's row does not show its unmodelled setting: %q", unmodelled)
	}
	if b := eval[map[string]string](t, br, `({...document.getElementById("broker").dataset})`); b["active"] != "true" || b["role"] != wire.RoleActive {
		t.Errorf("active broker's header %v", b)
	}
	checkSitesSortAndFilter(t, br)

	// The queue: every job, waiting (no cycle ran yet).
	br.do(t, "queue tab", chromedp.Click(chromedp.CSS(`button[data-tab="queue"]`)))
	br.waitTrue(t, "every job", `document.querySelectorAll("#jobs tbody tr").length === 4`)
	for _, id := range []string{small, wide, never, later} {
		br.waitTrue(t, "job "+id+" waiting", fmt.Sprintf(`document.querySelector('#jobs tr[data-job="%s"]')?.dataset.state === "waiting"`, id))
	}

	// A cycle reserves the two that fit; the page follows without a reload.
	if err := g.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{small, wide} {
		if st := g.b.Status(wire.StatusRequest{Job: id}).Jobs[0]; st.State != wire.JobReserved {
			t.Fatalf("broker: %s is %s: %s", id, st.State, st.Message)
		}
		br.waitTrue(t, id+" reserved on the page", fmt.Sprintf(`document.querySelector('#jobs tr[data-job="%s"]')?.dataset.state === "reserved"`, id))
	}
	// A waiting job's why is the one `lookahead status JOB` gives: what
	// was short and what would help, or why it is planned later.
	for _, id := range []string{never, later} {
		want := g.b.Status(wire.StatusRequest{Job: id}).Jobs[0].Plan.Why
		q, _ := json.Marshal(want)
		br.waitTrue(t, id+"'s why as status says it", fmt.Sprintf(`document.querySelector('#jobs tr[data-job="%s"] td.why')?.textContent === %s`, id, q))
	}
	wideSites := eval[string](t, br, fmt.Sprintf(`document.querySelector('#jobs tr[data-job="%s"] td.sites').textContent`, wide))
	if !strings.Contains(wideSites, "alpha") || !strings.Contains(wideSites, "beta") {
		t.Errorf("%s sites %q, want alpha and beta", wide, wideSites)
	}
	if st := g.b.Status(wire.StatusRequest{Job: later}).Jobs[0]; st.State != wire.JobWaiting || st.Plan == nil || !st.Plan.Placed() {
		t.Fatalf("broker: %s is %s, plan %+v", later, st.State, st.Plan)
	}
	checkHeaderCycle(t, br)
	checkQueueOrder(t, g, br, []string{later, never}, []string{small, wide})

	// A job whose parts ran by hand: its sites report it started, then
	// finished; the queue shows when it started, not a plan.
	g.clock.advance(time.Minute)
	started := g.clock.Now().Unix()
	g.jobEvents(small, "started", wire.JobRunning)
	g.clock.advance(time.Minute)
	g.jobEvents(small, "finished", wire.JobFinished)
	br.waitTrue(t, small+" finished", fmt.Sprintf(`document.querySelector('#jobs tr[data-job="%s"]')?.dataset.state === "finished"`, small))
	if got := eval[string](t, br, fmt.Sprintf(`document.querySelector('#jobs tr[data-job="%s"] td.start').textContent`, small)); got != jsWhen(started)+" (started)" {
		t.Errorf("finished %s's start %q, want %q", small, got, jsWhen(started)+" (started)")
	}
	if got := eval[string](t, br, fmt.Sprintf(`document.querySelector('#jobs tr[data-job="%s"] td.start').textContent`, wide)); !strings.HasSuffix(got, "(reserved)") {
		t.Errorf("reserved %s's start %q", wide, got)
	}
	if got := eval[string](t, br, fmt.Sprintf(`document.querySelector('#jobs tr[data-job="%s"] td.start').textContent`, later)); !strings.HasSuffix(got, "(planned)") {
		t.Errorf("waiting %s's start %q", later, got)
	}

	// A job's history, read from the job stream.
	br.click(t, fmt.Sprintf(`#jobs tr[data-job="%s"]`, wide))
	br.waitTrue(t, "history", `[...document.querySelectorAll("#job-events li")].map(l => l.dataset.kind).join() === "submitted,intent,outcome"`)
	shots.take("queue")

	checkGantt(t, br, wide, later)
	shots.take("gantt")
	checkHugeGantt(t, br)
	checkLegend(t, br)

	// The audit view lists the broker's records (commits, reserves); a
	// job that finished is a success.
	g.publishAudit(wire.AuditRecord{Type: wire.TypeAudit, Time: started, Origin: "broker", Action: "conclude", Job: small, Code: wire.JobFinished,
		Message: "every part finished"})
	br.do(t, "audit tab", chromedp.Click(chromedp.CSS(`button[data-tab="audit"]`)))
	br.waitTrue(t, "audit origins", `[...document.querySelectorAll("#audit h3")].map(h => h.dataset.origin).includes("broker")`)
	br.waitTrue(t, "site audit", `[...document.querySelectorAll("#audit h3")].map(h => h.dataset.origin).includes("alpha")`)
	br.waitTrue(t, "finished record", `document.querySelector('#audit li[data-action="conclude"] .code') !== null`)
	tones := eval[map[string]string](t, br, `(() => { const c = s => getComputedStyle(s).color, q = s => document.querySelector(s);
		return {finished: c(q('#audit li[data-action="conclude"] .code')), ok: c(q('#audit li[data-action="commit"] .code')),
		bad: getComputedStyle(document.documentElement).getPropertyValue("--bad").trim()}; })()`)
	if tones["finished"] != tones["ok"] {
		t.Errorf("a finished job's record is %s, a commit's %s: want the same (success) colour", tones["finished"], tones["ok"])
	}
	shots.take("audit")

	// The tab is in the address: a link to #sites opens the Sites tab.
	if h := eval[string](t, br, `location.hash`); h != "#audit" {
		t.Errorf("address fragment %q after opening the audit tab", h)
	}
	eval[bool](t, br, `(() => { location.hash = "#sites"; return true; })()`)
	br.waitTrue(t, "sites tab from the address", `!document.getElementById("tab-sites").hidden && document.getElementById("tab-audit").hidden`)
	br.waitTrue(t, "sites drawn", `document.querySelectorAll("#sites tbody tr").length === 3`)
	shots.take("sites")
	shots.check()

	if errs := br.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
	checkLocalQueue(t, g, br)
	checkStandbyAndToken(t, g, br)
}

// checkLocalQueue: a site with local work (submitted as it starts: one
// job on both nodes for 2 h, then two waiting) shows its local queue
// under its Gantt, each waiting job with the start its agent's last
// forecast predicts.
func checkLocalQueue(t *testing.T, g *grid, br *browser) {
	t.Helper()
	now := g.clock.Now().Unix()
	g.startAgent("gamma", 2, sim.Job{ID: "1.gamma", Procs: 16, PPN: 8, Walltime: 7200, Runtime: 7200, User: "carol"},
		sim.Job{ID: "2.gamma", Procs: 8, PPN: 8, Walltime: 3600, Runtime: 3600, User: "dave"},
		sim.Job{ID: "3.gamma", Procs: 16, PPN: 8, Walltime: 1800, Runtime: 1800, User: "erin"})
	g.waitSites(4)
	eval[bool](t, br, `(() => { location.hash = "#gantt/gamma"; return true; })()`)
	br.waitTrue(t, "gamma's local queue", `document.getElementById("local").dataset.site === "gamma" &&
		document.querySelectorAll("#local-jobs tbody tr").length === 2`)
	got := eval[[]string](t, br, `[...document.querySelectorAll("#local-jobs tbody tr")].map(r => r.dataset.job + " " + r.querySelector("td.start").textContent)`)
	want := []string{"2.gamma " + jsWhen(now+7200), "3.gamma " + jsWhen(now+3*3600)}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("gamma's local queue %q, want %q", got, want)
	}
	if info := eval[string](t, br, `document.getElementById("local-info").textContent`); !strings.Contains(info, "2 jobs waiting") {
		t.Errorf("gamma's local queue says %q", info)
	}
}

// checkSitesSortAndFilter: a name filter, a state filter, and a sort by a
// column; then back to every site by name.
func checkSitesSortAndFilter(t *testing.T, br *browser) {
	t.Helper()
	rows := `[...document.querySelectorAll("#sites tbody tr")].map(r => r.dataset.site).join()`
	eval[bool](t, br, `(() => { const i = document.getElementById("site-match"); i.value = "ALP"; i.dispatchEvent(new Event("input")); return true; })()`)
	br.waitTrue(t, "name filter", rows+` === "alpha" && document.getElementById("site-counts").textContent.startsWith("showing 1 of 3 sites")`)
	eval[bool](t, br, `(() => { const i = document.getElementById("site-match"); i.value = ""; i.dispatchEvent(new Event("input")); return true; })()`)
	br.pick(t, "site-state", "silent,excluded,offline,stale")
	br.waitTrue(t, "state filter", rows+` === ""`)
	br.pick(t, "site-state", "")
	br.do(t, "sort by free CPU-h", chromedp.Click(chromedp.CSS(`#sites th[data-sort="free"]`)))
	br.waitTrue(t, "sorted by free", rows+` === "huge,alpha,beta" && document.querySelector("#sites th.sorted").dataset.sort === "free"`)
	br.do(t, "sort by name", chromedp.Click(chromedp.CSS(`#sites th[data-sort="name"]`)))
	br.waitTrue(t, "sorted by name", rows+` === "alpha,beta,huge"`)
	if href := eval[string](t, br, `document.querySelector('#sites tr[data-site="beta"] a').getAttribute("href")`); href != "#gantt/beta" {
		t.Errorf("beta's link %q", href)
	}
}

// checkHeaderCycle: the header says how many jobs the cycle planned and
// how long it took, never "0 µs".
func checkHeaderCycle(t *testing.T, br *browser) {
	t.Helper()
	br.waitTrue(t, "cycle shown", `document.getElementById("cycle").textContent.includes("4 jobs planned in")`)
	if got := eval[[]string](t, br, `[micros(0), micros(999), micros(1500), micros(2500000)]`); strings.Join(got, "|") != "under 1 µs|999 µs|1.5 ms|2.50 s" {
		t.Errorf("cycle durations %q", got)
	}
}

// checkQueueOrder: the queue tab says the order the broker plans in and
// what it means, and each waiting job's place in it is the one `lookahead
// status` gives; a reserved job has none.
func checkQueueOrder(t *testing.T, g *grid, br *browser, waiting, reserved []string) {
	t.Helper()
	br.waitTrue(t, "the queue order", `document.getElementById("job-order").dataset.order === "price"`)
	line := eval[string](t, br, `document.getElementById("job-order").textContent`)
	if !strings.Contains(line, "price order: "+client.OrderMeaning("price")) {
		t.Errorf("the queue tab's order line %q", line)
	}
	place := func(id string) string {
		return eval[string](t, br, fmt.Sprintf(`document.querySelector('#jobs tr[data-job="%s"] td.queue').textContent`, id))
	}
	for _, id := range waiting {
		q := g.b.Status(wire.StatusRequest{Job: id}).Jobs[0].Queue
		if q == nil {
			t.Fatalf("broker: waiting %s has no queue place", id)
		}
		if got, want := place(id), fmt.Sprintf("%d of %d", q.Position, q.Of); got != want {
			t.Errorf("waiting %s's queue place %q, want %q as status says", id, got, want)
		}
	}
	for _, id := range reserved {
		if got := place(id); got != "" {
			t.Errorf("reserved %s's queue place %q, want none", id, got)
		}
	}
}

// checkGantt: a site's name opens its Gantt on the grid's work (not the
// whole horizon), rows tall enough to read, bars labelled with their job
// and a tooltip saying who, how big and at what price; the zoom.
func checkGantt(t *testing.T, br *browser, wide, later string) {
	t.Helper()
	br.do(t, "sites tab", chromedp.Click(chromedp.CSS(`button[data-tab="sites"]`)))
	br.click(t, `#sites tr[data-site="alpha"] a`)
	br.waitTrue(t, "alpha rows", `!document.getElementById("tab-gantt").hidden && document.getElementById("gantt").dataset.site === "alpha" &&
		document.querySelectorAll("#gantt g.row").length === 4`)
	if h := eval[string](t, br, `location.hash`); h != "#gantt/alpha" {
		t.Errorf("address of alpha's Gantt %q", h)
	}
	br.waitTrue(t, "alpha bars", fmt.Sprintf(`document.querySelectorAll('#gantt rect.bar.reserved[data-job="%s"]').length > 0 &&
		document.querySelectorAll('#gantt rect.bar.planned[data-job="%s"]').length > 0`, wide, later))
	br.waitTrue(t, "now line", `document.querySelector("#gantt line.now") !== null && document.querySelectorAll("#gantt rect.free").length > 0`)
	type drawn struct {
		Span, RowPx int
		Labels      []string
		Tip         string
	}
	d := eval[drawn](t, br, fmt.Sprintf(`(() => { const s = document.getElementById("gantt");
		return {Span: s.dataset.to - s.dataset.from, RowPx: +s.querySelector("rect.rowbg").getAttribute("height"),
		Labels: [...s.querySelectorAll("text.barlabel")].map(t => t.textContent),
		Tip: s.querySelector('rect.bar[data-job="%s"] title').textContent}; })()`, wide))
	if d.Span < 3600 || d.Span > 4*3600 {
		t.Errorf("alpha's Gantt opens on %ds, want the next hours where its grid work sits", d.Span)
	}
	if d.RowPx < 14 {
		t.Errorf("alpha's rows are %d px high", d.RowPx)
	}
	if !contains(d.Labels, wide) || !contains(d.Labels, later) {
		t.Errorf("bar labels %q lack %s or %s", d.Labels, wide, later)
	}
	for _, want := range []string{wide + " — reserved", "alice (proj1), 48 procs", "max price 5.00 credits/CPU-h", "charge "} {
		if !strings.Contains(d.Tip, want) {
			t.Errorf("tooltip of %s lacks %q:\n%s", wide, want, d.Tip)
		}
	}
	// Dragging across the plot zooms to that time window; "now" zooms out.
	eval[bool](t, br, `(() => { const s = document.getElementById("gantt"), r = s.getBoundingClientRect();
		s.dispatchEvent(new MouseEvent("mousedown", {bubbles: true, button: 0, clientX: r.left + 190 + 100, clientY: r.top + 40}));
		window.dispatchEvent(new MouseEvent("mouseup", {bubbles: true, button: 0, clientX: r.left + 190 + 300, clientY: r.top + 40}));
		return true; })()`)
	br.waitTrue(t, "zoomed", fmt.Sprintf(`(() => { const d = document.getElementById("gantt").dataset; const w = d.to - d.from;
		return w > 0 && w < %d / 3 && document.querySelectorAll("#gantt g.row").length === 4; })()`, d.Span))
	br.do(t, "zoom out", chromedp.Click(chromedp.ID("gantt-now")))
	br.waitTrue(t, "zoomed out", fmt.Sprintf(`+document.getElementById("gantt").dataset.to - +document.getElementById("gantt").dataset.from === %d`, d.Span))
}

// checkHugeGantt: 5,000 nodes aggregated into the rows that fit.
func checkHugeGantt(t *testing.T, br *browser) {
	t.Helper()
	start := time.Now()
	br.pick(t, "gantt-site", "huge")
	br.waitTrue(t, "huge drawn", `document.getElementById("gantt").dataset.site === "huge"`)
	took := time.Since(start)
	type drawn struct {
		Rows, MaxRows, PerRow, Nodes, Drawn, Summed, RowPx int
		RenderMs                                           string
	}
	d := eval[drawn](t, br, `(() => { const s = document.getElementById("gantt"); const rows = [...s.querySelectorAll("g.row")];
		return {Rows: +s.dataset.rows, MaxRows: +s.dataset.maxRows, PerRow: +s.dataset.perRow, Nodes: +s.dataset.nodes, RowPx: +s.dataset.rowPx,
		Drawn: rows.length, Summed: rows.reduce((a, r) => a + +r.dataset.nodes, 0), RenderMs: s.dataset.renderMs}; })()`)
	per := (5000 + d.MaxRows - 1) / d.MaxRows
	if want := (5000 + per - 1) / per; d.Drawn != want || d.Summed != 5000 || d.Nodes != 5000 || d.PerRow != per || d.Drawn > d.MaxRows || d.RowPx < 14 {
		t.Errorf("5,000-node Gantt: %+v, want %d rows of %d nodes covering 5000, at least 14 px high", d, want, per)
	}
	t.Logf("5,000-node site: %d rows of up to %d nodes (max rows %d, %d px each); fetch+draw %s ms in the page, %v from the change to the drawn rows",
		d.Drawn, d.PerRow, d.MaxRows, d.RowPx, d.RenderMs, took.Round(time.Millisecond))
}

// checkLegend: the legend's colours (the free scale's ends and the bars'
// states) are far enough apart to be told apart at a glance.
func checkLegend(t *testing.T, br *browser) {
	t.Helper()
	cols := eval[map[string][]int](t, br, `(() => { const out = {};
		for (const k of ["free-lo", "free-hi", "committing", "reserved", "running"]) {
			out[k] = getComputedStyle(document.querySelector(".legend .sw." + k)).backgroundColor.match(/\d+/g).slice(0, 3).map(Number); }
		return out; })()`)
	keys := []string{"free-lo", "free-hi", "committing", "reserved", "running"}
	for i, a := range keys {
		for _, b := range keys[i+1:] {
			x, y := cols[a], cols[b]
			if len(x) != 3 || len(y) != 3 {
				t.Fatalf("legend colours %v", cols)
			}
			d2 := (x[0]-y[0])*(x[0]-y[0]) + (x[1]-y[1])*(x[1]-y[1]) + (x[2]-y[2])*(x[2]-y[2])
			if d2 < 60*60 {
				t.Errorf("legend: %s %v and %s %v are too alike", a, x, b, y)
			}
		}
	}
}

// checkStandbyAndToken: a standby broker's page says it is a standby and
// which broker is active; a page behind a plain base64 token opens with
// the token pasted into the address as it is.
func checkStandbyAndToken(t *testing.T, g *grid, br *browser) {
	t.Helper()
	standby, _ := g.runBroker("b2")
	_, url := g.serveWeb(standby, web.Config{})
	br.do(t, "open the standby's page", chromedp.Navigate(url))
	br.waitTrue(t, "standby header", `document.getElementById("broker").dataset.role === "standby" && document.getElementById("broker").dataset.leader === "b1"`)
	banner := eval[string](t, br, `(() => { const b = document.getElementById("standby"); return b.hidden ? "" : b.textContent; })()`)
	if !strings.Contains(banner, "b1") || !strings.Contains(banner, "standby") {
		t.Errorf("standby's banner %q", banner)
	}
	const tok = "q+3/Zx+Lm0/w7Q+aB9c/kP2e="
	_, url = g.serveWeb(g.b, web.Config{Token: tok})
	br.do(t, "open with the token", chromedp.Navigate(url+"?token="+tok))
	br.waitTrue(t, "token page", `document.querySelectorAll("#sites tbody tr").length === 4 && location.search === ""`)
}

// jsWhen is the page's when(t).
func jsWhen(t int64) string { return time.Unix(t, 0).UTC().Format("2006-01-02 15:04") + "Z" }

// jobEvents reports, as each of job's sites would, that its part there
// is in state, and waits until the broker has the job in jobState.
func (g *grid) jobEvents(job, state, jobState string) {
	g.t.Helper()
	nc := g.connect()
	for _, site := range g.b.Status(wire.StatusRequest{Job: job}).Jobs[0].Plan.Sites() {
		data, _ := json.Marshal(wire.JobEvent{Type: wire.TypeJobEvent, Site: site, Job: job, State: state})
		if err := nc.Publish(wire.JobEventSubject(site, job), data); err != nil {
			g.t.Fatal(err)
		}
	}
	nc.Flush()
	deadline := time.Now().Add(20 * time.Second)
	for g.b.Status(wire.StatusRequest{Job: job}).Jobs[0].State != jobState {
		if time.Now().After(deadline) {
			g.t.Fatalf("%s not %s after its sites said %s", job, jobState, state)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// publishAudit appends r to the audit stream as its origin would.
func (g *grid) publishAudit(r wire.AuditRecord) {
	g.t.Helper()
	js, _ := jetstream.New(g.connect())
	data, _ := json.Marshal(r)
	if _, err := js.Publish(context.Background(), wire.AuditSubject(r.Origin, r.Action), data); err != nil {
		g.t.Fatal(err)
	}
}
