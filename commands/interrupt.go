package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
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
	if stopped, ok := stopInterruptible(stderr, again); ok {
		return stopped
	}
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
