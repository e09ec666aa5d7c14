package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/cpactl/cpactl/directory/ldapconn"
)

// Interrupted is what main does on Ctrl-C or SIGTERM outside a prompt, and
// returns the exit code to exit with now. With no change in progress that
// is at once 130. Otherwise exiting now would close a connection under
// slapd 2.5 with a transaction's writes queued, or while it commits,
// which crashes it: the change is asked to stop where the directory is
// consistent (ldapconn.StopChanges: an open transaction is aborted and
// its answer awaited, a commit in flight is awaited), and the command
// returns by itself, saying what happened, with its own exit code (main
// exits with it while this waits). Interrupted returns only when a second
// signal comes, or the change did not stop within directory.StopWait.
func Interrupted(stderr io.Writer, again <-chan os.Signal) int {
	// A read command's pager: the output stops, and cpactl exits once the
	// reader has quit the pager (as git does), never leaving it running
	// on the terminal behind the shell.
	if w := paging.Load(); w != nil && w.Interrupt(func() { fmt.Fprintln(stderr, "cpactl: interrupted") }) {
		return ExitInterrupted
	}
	if stopped, ok := stopInterruptible(stderr, again); ok {
		return stopped
	}
	const quit = "interrupt again to quit now, which can crash slapd 2.5"
	switch ldapconn.StopChanges() {
	case ldapconn.NoChange:
		fmt.Fprintln(stderr, "cpactl: interrupted")
		return ExitInterrupted
	case ldapconn.ChangeComplete:
		// The command is finishing; main prints the note.
	case ldapconn.ChangeInProgress:
		fmt.Fprintf(stderr, "cpactl: interrupted: the change stops before its next step (%s)\n", quit)
	case ldapconn.TransactionOpen:
		fmt.Fprintf(stderr, "cpactl: interrupted: aborting the transaction in progress and waiting for the server to confirm (%s)\n", quit)
	case ldapconn.CommitInProgress:
		fmt.Fprintf(stderr, "cpactl: interrupted while the server commits a transaction: waiting for its answer (%s)\n", quit)
	}
	why := "interrupted again"
	select {
	case <-again:
	case <-time.After(ldapconn.StopWait()):
		why = "the change did not stop in time"
	}
	if ldapconn.StopChanges() == ldapconn.ChangeComplete {
		fmt.Fprintln(stderr, noteInterrupted)
		return ExitOK
	}
	fmt.Fprintf(stderr, "cpactl: %s; what the change wrote is unknown (check with `cpactl diff`)\n", why)
	return ExitUnknown
}

// running is the command in progress that must be stopped, not killed, on
// Ctrl-C: a Horizon pull logs out of every server and removes its
// temporary directory when its context is cancelled.
var running struct {
	sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// stopWait bounds how long Ctrl-C waits for a stopped command's cleanup
// (a logout per server, each bounded by --timeout).
var stopWait = 30 * time.Second

// interruptible runs fn with a context that Ctrl-C cancels (Interrupted),
// and waits for fn to return before the process exits. A cancelled fn's
// error is reported as an interruption (exit 130).
func (g *Globals) interruptible(fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	running.Lock()
	running.cancel, running.done = cancel, done
	running.Unlock()
	defer func() {
		running.Lock()
		running.cancel, running.done = nil, nil
		running.Unlock()
		cancel()
		close(done)
	}()
	err := fn(ctx)
	if err != nil && errors.Is(err, context.Canceled) {
		return silentExit(ExitInterrupted) // Interrupted says so
	}
	return err
}

// stopInterruptible cancels the interruptible command in progress, if
// any, and waits for it to clean up (at most stopWait, or until a second
// signal).
func stopInterruptible(stderr io.Writer, again <-chan os.Signal) (int, bool) {
	running.Lock()
	cancel, done := running.cancel, running.done
	running.Unlock()
	if cancel == nil {
		return 0, false
	}
	fmt.Fprintln(stderr, "cpactl: interrupted: logging out and removing what was half written (interrupt again to quit now)")
	cancel()
	select {
	case <-done:
		fmt.Fprintln(stderr, "cpactl: interrupted: nothing written, every session logged out")
	case <-again:
		fmt.Fprintln(stderr, "cpactl: interrupted again: sessions may stay open until they time out, and a .cpactl-* directory may be left beside the pull")
	case <-time.After(stopWait):
		fmt.Fprintln(stderr, "cpactl: the cleanup did not end in time: sessions may stay open until they time out")
	}
	return ExitInterrupted, true
}

// noteInterrupted is what a command that completed its change says when
// it was interrupted meanwhile.
const noteInterrupted = "note: interrupted after the change was complete: all of it is written"
