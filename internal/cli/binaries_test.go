package cli_test

import (
	"os"
	"sync"
	"testing"

	"lookahead/internal/cli/clitest"
)

// The binaries are built once for every test of the package that runs
// them, into a directory TestMain removes.
var built struct {
	once sync.Once
	dir  string
	err  error
}

func binaries(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "lookahead-bin-"); built.err == nil {
			built.err = clitest.BuildTo(built.dir, clitest.AllPackages()...)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}
