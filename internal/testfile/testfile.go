// Package testfile finds a package's committed test data when its test
// binary runs outside the package directory (go test -c, then run from
// elsewhere). Test helpers only.
package testfile

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// Path returns the path of testdata/name for the calling package: under
// the working directory (go test runs in the package directory), else
// beside the caller's source file (the directory the binary was built
// from). The error names the file and the places looked in.
func Path(name string) (string, error) {
	rel := filepath.Join("testdata", name)
	tried := []string{rel}
	if _, err := os.Stat(rel); err == nil {
		return rel, nil
	}
	if _, src, _, ok := runtime.Caller(1); ok && filepath.IsAbs(src) {
		p := filepath.Join(filepath.Dir(src), rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		tried = append(tried, p)
	}
	return "", fmt.Errorf("test data %s not found (looked in %v): run from the package directory or build the test binary from its sources", rel, tried)
}
