package web_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"lookahead/wire"
)

// chromium finds the browser scripts/ensure-chromium.sh installs. Where it
// is missing the test skips with the reason, unless
// LOOKAHEADTEST_REQUIRE_CHROMIUM=1 (scripts/test.sh sets it once the script
// installed the browser): then a missing browser fails.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("LOOKAHEADTEST_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("LOOKAHEADTEST_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("chromium not found, though scripts/ensure-chromium.sh reported it installed")
	}
	t.Skip("chromium is not installed (scripts/ensure-chromium.sh installs Debian's chromium; it needs root or sudo and apt-get)")
	return ""
}

// browser is a headless Chromium tab that records console errors,
// uncaught exceptions and browser log errors (failed loads, CSP refusals).
type browser struct {
	ctx    context.Context
	mu     sync.Mutex
	errors []string
}

func newBrowser(t *testing.T, path string) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.WindowSize(1400, 1000), chromedp.DisableGPU, chromedp.Flag("disable-dev-shm-usage", true))
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	br := &browser{}
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(br.record))
	t.Cleanup(func() { cancel(); acancel() })
	br.ctx = ctx
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return br
}

// record keeps what the page reports as an error or a warning.
func (br *browser) record(ev any) {
	br.mu.Lock()
	defer br.mu.Unlock()
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning {
			var args []string
			for _, a := range e.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			br.errors = append(br.errors, "console."+string(e.Type)+": "+strings.Join(args, " "))
		}
	case *runtime.EventExceptionThrown:
		br.errors = append(br.errors, "exception: "+e.ExceptionDetails.Text)
	case *cdplog.EventEntryAdded:
		if e.Entry.Level == cdplog.EntryLevelError || e.Entry.Level == cdplog.EntryLevelWarning {
			br.errors = append(br.errors, "log: "+e.Entry.Text+" "+e.Entry.URL)
		}
	}
}

func (br *browser) consoleErrors() []string {
	br.mu.Lock()
	defer br.mu.Unlock()
	return append([]string(nil), br.errors...)
}

// do runs steps with a bound; the page polls every 2 s.
func (br *browser) do(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(br.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression.
func eval[T any](t *testing.T, br *browser, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(br.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitTrue polls a JavaScript condition until it holds.
func (br *browser) waitTrue(t *testing.T, what, cond string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if ok, err := chromedp.Run(br.ctx, chromedp.Evaluate[bool]("!!("+cond+")")); err == nil && ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: %s never held", what, cond)
}

// pick chooses an option of a select as a person would (a change event).
func (br *browser) pick(t *testing.T, id, value string) {
	t.Helper()
	eval[bool](t, br, fmt.Sprintf(`(() => { const s = document.getElementById(%q); s.value = %q; s.dispatchEvent(new Event("change")); return true; })()`, id, value))
}

// TestBrowserShowsTheGrid runs the page in headless Chromium against a
// broker with two simulated sites under real agents and a published
// 5,000-node site: no console errors; every site and job the broker has
// is shown; a job reserved by a cycle turns reserved without a reload;
// the 5,000-node site's Gantt is aggregated into the rows that fit.
func TestBrowserShowsTheGrid(t *testing.T) {
	path := chromium(t)
	g := newGrid(t)
	g.startAgent("alpha", 4)
	g.startAgent("beta", 4)
	g.publishBig("huge", 5000)
	g.startBroker()
	g.waitSites(3)
	small := g.submit("r-small", 16, 3600, 5)
	wide := g.submit("r-wide", 48, 3600, 5)   // wider than one site: co-allocated
	never := g.submit("r-never", 8, 60, 0.01) // no slot is that cheap: fits nowhere
	br := newBrowser(t, path)

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
	active := eval[string](t, br, `document.getElementById("broker").dataset.active`)
	if active != "true" {
		t.Errorf("active broker flag %q", active)
	}

	// The queue: every job, waiting (no cycle ran yet).
	br.do(t, "queue tab", chromedp.Click(chromedp.CSS(`button[data-tab="queue"]`)))
	br.waitTrue(t, "every job", `document.querySelectorAll("#jobs tbody tr").length === 3`)
	for _, id := range []string{small, wide, never} {
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
	why := eval[string](t, br, fmt.Sprintf(`document.querySelector('#jobs tr[data-job="%s"] td.why').textContent`, never))
	if !strings.Contains(why, "no-fit") {
		t.Errorf("why %s is not placed: %q", never, why)
	}
	wideSites := eval[string](t, br, fmt.Sprintf(`document.querySelector('#jobs tr[data-job="%s"]').children[5].textContent`, wide))
	if !strings.Contains(wideSites, "alpha") || !strings.Contains(wideSites, "beta") {
		t.Errorf("%s sites %q, want alpha and beta", wide, wideSites)
	}

	// A job's history, read from the job stream.
	br.do(t, "select a job", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#jobs tr[data-job="%s"]`, wide))))
	br.waitTrue(t, "history", `[...document.querySelectorAll("#job-events li")].map(l => l.dataset.kind).join() === "submitted,intent,outcome"`)

	// The Gantt of alpha shows the reservations; the "now" line is there.
	br.do(t, "gantt tab", chromedp.Click(chromedp.CSS(`button[data-tab="gantt"]`)))
	br.pick(t, "gantt-site", "alpha")
	br.waitTrue(t, "alpha rows", `document.getElementById("gantt").dataset.site === "alpha" && document.querySelectorAll("#gantt g.row").length === 4`)
	br.waitTrue(t, "alpha bars", fmt.Sprintf(`document.querySelectorAll('#gantt rect.bar.reserved[data-job="%s"]').length > 0 && document.querySelectorAll('#gantt rect.bar.reserved[data-job="%s"]').length > 0`, small, wide))
	br.waitTrue(t, "now line", `document.querySelector("#gantt line.now") !== null && document.querySelectorAll("#gantt rect.free").length > 0`)

	// Dragging across the plot zooms to that time window; "now" zooms out.
	span := eval[int](t, br, `+document.getElementById("gantt").dataset.to - +document.getElementById("gantt").dataset.from`)
	eval[bool](t, br, `(() => { const s = document.getElementById("gantt"), r = s.getBoundingClientRect();
		s.dispatchEvent(new MouseEvent("mousedown", {bubbles: true, button: 0, clientX: r.left + 190 + 100, clientY: r.top + 40}));
		window.dispatchEvent(new MouseEvent("mouseup", {bubbles: true, button: 0, clientX: r.left + 190 + 300, clientY: r.top + 40}));
		return true; })()`)
	br.waitTrue(t, "zoomed", fmt.Sprintf(`(() => { const d = document.getElementById("gantt").dataset; const w = d.to - d.from;
		return w > 0 && w < %d / 3 && document.querySelectorAll("#gantt g.row").length === 4; })()`, span))
	br.do(t, "zoom out", chromedp.Click(chromedp.ID("gantt-now")))
	br.waitTrue(t, "zoomed out", fmt.Sprintf(`+document.getElementById("gantt").dataset.to - +document.getElementById("gantt").dataset.from === %d`, span))

	// 5,000 nodes: aggregated into the rows that fit.
	start := time.Now()
	br.pick(t, "gantt-site", "huge")
	br.waitTrue(t, "huge drawn", `document.getElementById("gantt").dataset.site === "huge"`)
	took := time.Since(start)
	type drawn struct {
		Rows, MaxRows, PerRow, Nodes, Drawn, Summed int
		RenderMs                                    string
	}
	d := eval[drawn](t, br, `(() => { const s = document.getElementById("gantt"); const rows = [...s.querySelectorAll("g.row")];
		return {Rows: +s.dataset.rows, MaxRows: +s.dataset.maxRows, PerRow: +s.dataset.perRow, Nodes: +s.dataset.nodes,
		Drawn: rows.length, Summed: rows.reduce((a, r) => a + +r.dataset.nodes, 0), RenderMs: s.dataset.renderMs}; })()`)
	per := (5000 + d.MaxRows - 1) / d.MaxRows
	if want := (5000 + per - 1) / per; d.Drawn != want || d.Summed != 5000 || d.Nodes != 5000 || d.PerRow != per || d.Drawn > d.MaxRows {
		t.Errorf("5,000-node Gantt: %+v, want %d rows of %d nodes covering 5000", d, want, per)
	}
	t.Logf("5,000-node site: %d rows of up to %d nodes (max rows %d); fetch+draw %s ms in the page, %v from the change to the drawn rows",
		d.Drawn, d.PerRow, d.MaxRows, d.RenderMs, took.Round(time.Millisecond))

	// The audit view lists the broker's records (commits, reserves).
	br.do(t, "audit tab", chromedp.Click(chromedp.CSS(`button[data-tab="audit"]`)))
	br.waitTrue(t, "audit origins", `[...document.querySelectorAll("#audit h3")].map(h => h.dataset.origin).includes("broker")`)
	br.waitTrue(t, "site audit", `[...document.querySelectorAll("#audit h3")].map(h => h.dataset.origin).includes("alpha")`)

	// The tab is in the address: a link to #sites opens the Sites tab.
	if h := eval[string](t, br, `location.hash`); h != "#audit" {
		t.Errorf("address fragment %q after opening the audit tab", h)
	}
	eval[bool](t, br, `(() => { location.hash = "#sites"; return true; })()`)
	br.waitTrue(t, "sites tab from the address", `!document.getElementById("tab-sites").hidden && document.getElementById("tab-audit").hidden`)

	if errs := br.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
