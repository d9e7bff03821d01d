package testfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPathBesideTheSource: from another working directory the file is
// found beside the caller's source; a missing one is an error naming it.
func TestPathBesideTheSource(t *testing.T) {
	t.Chdir(t.TempDir())
	p, err := Path("probe.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(p) {
		t.Errorf("Path = %q, want the absolute path beside the source", p)
	}
	if b, err := os.ReadFile(p); err != nil || strings.TrimSpace(string(b)) != "probe" {
		t.Errorf("read %s: %q, %v", p, b, err)
	}
	if _, err := Path("absent.txt"); err == nil || !strings.Contains(err.Error(), "testdata/absent.txt") {
		t.Errorf("missing file: err = %v, want one naming testdata/absent.txt", err)
	}
}

// TestPathInTheWorkingDirectory: under go test the package directory's
// relative path is kept.
func TestPathInTheWorkingDirectory(t *testing.T) {
	p, err := Path("probe.txt")
	if err != nil || p != filepath.Join("testdata", "probe.txt") {
		t.Errorf("Path = %q, %v, want testdata/probe.txt", p, err)
	}
}
