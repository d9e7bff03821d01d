package slurmtest

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// shared holds the clusters Shared started in this test binary.
var shared struct {
	mu       sync.Mutex
	main     bool // Main runs the tests: it stops the clusters at the end
	clusters map[string]*Cluster
	failed   map[string]error
}

// Main runs a package's tests and then stops every cluster Shared
// started. A package whose tests call Shared has
//
//	func TestMain(m *testing.M) { os.Exit(slurmtest.Main(m)) }
func Main(m *testing.M) int {
	shared.mu.Lock()
	shared.main = true
	shared.mu.Unlock()
	code := m.Run()
	StopShared()
	return code
}

// StopShared stops the clusters Shared started (Main calls it).
func StopShared() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	for key, c := range shared.clusters {
		c.t = stderrTB{}
		c.Stop()
		delete(shared.clusters, key)
	}
}

// Shared is a private Slurm shared by the tests of one test binary that
// ask for the same Options: the first call starts it (or skips, as Start
// does), every call resets it for the calling test — slurmctld running,
// every job cancelled, every reservation deleted, every node idle — and
// Main stops it after the last test. Tests that use it must not run in
// parallel with each other. Starting a cluster costs about 2 s and
// stopping one more: a test binary with several live tests starts one.
func Shared(t testing.TB, opt Options) *Cluster {
	t.Helper()
	opt = opt.withDefaults()
	key := fmt.Sprintf("%d/%d/%q", opt.CPUs, opt.Nodes, opt.ExtraConf)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.main {
		t.Fatal("slurmtest.Shared: the package's TestMain must run its tests with slurmtest.Main, which stops the shared clusters")
	}
	if err := shared.failed[key]; err != nil {
		skipOrFail(t, "%v", err)
	}
	c := shared.clusters[key]
	if c == nil {
		var err error
		if c, err = start(t, opt); err != nil {
			if c != nil {
				c.Stop()
			}
			if shared.failed == nil {
				shared.failed = map[string]error{}
			}
			shared.failed[key] = err
			skipOrFail(t, "%v", err)
		}
		if shared.clusters == nil {
			shared.clusters = map[string]*Cluster{}
		}
		shared.clusters[key] = c
	}
	c.t = t
	t.Cleanup(func() { c.t = stderrTB{} })
	if err := c.reset(); err != nil {
		c.dumpLogs()
		t.Fatalf("slurmtest: reset of the shared cluster: %v", err)
	}
	return c
}

var resvNameRE = regexp.MustCompile(`(?m)^ReservationName=(\S+)`)

// reset brings a shared cluster back to its state after Start: slurmctld
// running, no job, no reservation, every node idle.
func (c *Cluster) reset() error {
	if !c.ControllerUp() {
		if err := c.startController(); err != nil {
			return err
		}
	}
	c.cancelAllJobs()
	for _, m := range resvNameRE.FindAllStringSubmatch(c.Run("scontrol", "show", "reservation").Stdout, -1) {
		err := c.waitFor("reservation "+m[1]+" to be deleted", 10*time.Second, func() bool {
			r := c.Run("scontrol", "delete", "reservationname="+m[1])
			return r.ExitCode == 0 || strings.Contains(r.Stderr+r.Stdout, "invalid")
		})
		if err != nil {
			return err
		}
	}
	return c.waitIdle()
}

// stderrTB serves a shared cluster between tests (and at StopShared):
// its lines go to standard error.
type stderrTB struct{}

func (stderrTB) Helper() {}

func (stderrTB) Logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}

func (s stderrTB) Fatalf(format string, args ...any) {
	s.Logf(format, args...)
	panic(fmt.Sprintf(format, args...))
}
