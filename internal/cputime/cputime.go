// Package cputime reads the CPU time this process has used, user and
// system, for benchmarks on a shared machine, where CPU time is steadier
// than wall time. Test helpers only.
package cputime

import (
	"syscall"
	"time"
)

// Used is the process's user and system CPU time so far; 0 when it cannot
// be read.
func Used() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
