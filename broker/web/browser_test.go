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

// click clicks the element selector names, found and clicked in one
// step: the page redraws its tables at every poll, so a node found first
// and clicked later may be gone.
func (br *browser) click(t *testing.T, selector string) {
	t.Helper()
	br.waitTrue(t, "click "+selector, fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (e) e.click(); return e !== null; })()`, selector))
}

// pick chooses an option of a select as a person would (a change event).
func (br *browser) pick(t *testing.T, id, value string) {
	t.Helper()
	eval[bool](t, br, fmt.Sprintf(`(() => { const s = document.getElementById(%q); s.value = %q; s.dispatchEvent(new Event("change")); return true; })()`, id, value))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
