package commands

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cpactl/cpactl/directory"
)

// Interrupted is what main does on Ctrl-C or SIGTERM outside a prompt, and
// returns the exit code to exit with now. With no change in progress that
// is at once 130. Otherwise exiting now would close a connection under
// slapd 2.5 with a transaction's writes queued, or while it commits,
// which crashes it: the change is asked to stop where the directory is
// consistent (directory.StopChanges: an open transaction is aborted and
// its answer awaited, a commit in flight is awaited), and the command
// returns by itself, saying what happened, with its own exit code (main
// exits with it while this waits). Interrupted returns only when a second
// signal comes, or the change did not stop within directory.StopWait.
func Interrupted(stderr io.Writer, again <-chan os.Signal) int {
	const quit = "interrupt again to quit now, which can crash slapd 2.5"
	switch directory.StopChanges() {
	case directory.NoChange:
		fmt.Fprintln(stderr, "cpactl: interrupted")
		return ExitInterrupted
	case directory.ChangeComplete:
		// The command is finishing; main prints the note.
	case directory.ChangeInProgress:
		fmt.Fprintf(stderr, "cpactl: interrupted: the change stops before its next step (%s)\n", quit)
	case directory.TransactionOpen:
		fmt.Fprintf(stderr, "cpactl: interrupted: aborting the transaction in progress and waiting for the server to confirm (%s)\n", quit)
	case directory.CommitInProgress:
		fmt.Fprintf(stderr, "cpactl: interrupted while the server commits a transaction: waiting for its answer (%s)\n", quit)
	}
	why := "interrupted again"
	select {
	case <-again:
	case <-time.After(directory.StopWait()):
		why = "the change did not stop in time"
	}
	if directory.StopChanges() == directory.ChangeComplete {
		fmt.Fprintln(stderr, noteInterrupted)
		return ExitOK
	}
	fmt.Fprintf(stderr, "cpactl: %s; what the change wrote is unknown (check with `cpactl diff`)\n", why)
	return ExitUnknown
}

// noteInterrupted is what a command that completed its change says when
// it was interrupted meanwhile.
const noteInterrupted = "note: interrupted after the change was complete: all of it is written"
