//go:build unix

package benchfed

import (
	"syscall"
	"time"
)

// CPUTime returns the CPU time the process has used (user and system, all
// threads, the garbage collector's included), or 0 where it is not known.
// On a shared machine it measures a benchmark's work better than the time
// on the clock.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
