//go:build !unix

package benchfed

import "time"

// CPUTime returns 0: the process's CPU time is not known here.
func CPUTime() time.Duration { return 0 }
