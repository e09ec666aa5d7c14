package commands

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cpactl/cpactl/directory"
)

// Interrupted is what main does on Ctrl-C or SIGTERM outside a prompt, and
// returns the exit code. LDAP writes are single operations or
// transactions, so stopping between them leaves nothing half-written; but
// exiting while the server commits a transaction closes the connection
// under slapd 2.5's commit, which crashes it. So while a commit is in
// flight it waits for its answer (at most the commit deadline), unless a
// second signal comes on again.
func Interrupted(stderr io.Writer, again <-chan os.Signal) int {
	if !directory.CommitInFlight() {
		fmt.Fprintln(stderr, "cpactl: interrupted")
		return ExitInterrupted
	}
	fmt.Fprintln(stderr, "cpactl: interrupted while the server commits a transaction: waiting for its answer (interrupt again to quit now, which can crash slapd 2.5)")
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(directory.MinCommitTimeout)
	for directory.CommitInFlight() {
		select {
		case <-again:
			fmt.Fprintln(stderr, "cpactl: interrupted again; the transaction's outcome is unknown (check with `cpactl diff`)")
			return ExitUnknown
		case <-deadline:
			fmt.Fprintln(stderr, "cpactl: no answer; the transaction's outcome is unknown (check with `cpactl diff`)")
			return ExitUnknown
		case <-tick.C:
		}
	}
	fmt.Fprintln(stderr, "cpactl: interrupted after the commit ended (its result is above, or check with `cpactl diff`)")
	return ExitInterrupted
}
