package web_test

import (
	"bytes"
	"context"
	"flag"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// updateShots makes the browser test write its screenshots of the tabs
// into docs/images (go test ./broker/web -run Browser -update-screenshots);
// without it the test only checks that docs/operations.md shows one of
// each tab and that each file is there.
var updateShots = flag.Bool("update-screenshots", false, "write the web view's screenshots to docs/images")

// shotsDir is where docs/operations.md finds the screenshots.
const shotsDir = "../../docs/images"

// shots takes a screenshot of each tab.
type shots struct {
	t    *testing.T
	br   *browser
	took []string
}

func newShots(t *testing.T, br *browser) *shots { return &shots{t: t, br: br} }

// take captures the page as it is now as web-<tab>.png; each capture
// must decode as a PNG of the browser's window.
func (s *shots) take(tab string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.br.ctx, 30*time.Second)
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		s.t.Fatalf("screenshot of %s: %v", tab, err)
	}
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		s.t.Fatalf("screenshot of %s: %v", tab, err)
	}
	if img.Bounds().Dx() < 800 || img.Bounds().Dy() < 500 {
		s.t.Fatalf("screenshot of %s: %v", tab, img.Bounds())
	}
	s.took = append(s.took, tab)
	if *updateShots {
		if err := os.WriteFile(filepath.Join(shotsDir, "web-"+tab+".png"), buf, 0o644); err != nil {
			s.t.Fatal(err)
		}
	}
}

// check: every tab was taken, docs/operations.md shows each picture, and
// each is there.
func (s *shots) check() {
	s.t.Helper()
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		s.t.Fatal(err)
	}
	for _, tab := range []string{"sites", "gantt", "queue", "audit"} {
		name := "web-" + tab + ".png"
		if !contains(s.took, tab) {
			s.t.Errorf("no screenshot of the %s tab", tab)
		}
		if !strings.Contains(string(doc), "](images/"+name+")") {
			s.t.Errorf("docs/operations.md does not show images/%s", name)
		}
		if _, err := os.Stat(filepath.Join(shotsDir, name)); err != nil {
			s.t.Errorf("%v (go test ./broker/web -run Browser -update-screenshots writes it)", err)
		}
	}
}
