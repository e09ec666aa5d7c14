package ldapconn

// Stopping a change on an interrupt (Ctrl-C, SIGTERM). Exiting with a
// transaction open closes its connection with writes queued, which
// crashes slapd 2.5.13 (issue 22: 6 of 42 interrupts of an apply); exiting
// while it commits does too (MinCommitTimeout). So an interrupt does not
// end a change in progress: it asks it to stop (StopChanges) where the
// directory is consistent, and the command returns what happened:
//
//   - a transaction being sent is aborted (End Transaction with commit
//     FALSE, its answer awaited): nothing of it is written
//     (*InterruptedError);
//   - a commit in flight is awaited: the transaction is written, or not,
//     as the server answers;
//   - no further transaction or step starts; when one was written before,
//     the change is partly written, consistent (*PartialError);
//   - a change that completed anyway is complete: the command succeeds.
//
// The state is the process's, as a signal is.

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/cpactl/cpactl/directory/ldapclient"
)

var (
	stopAsked     atomic.Bool  // StopChanges was called
	changes       atomic.Int64 // Store.ApplyPlan calls in progress
	openTxns      atomic.Int64 // transactions started and not ended
	changesDone   atomic.Bool  // an ApplyPlan of this process completed a change
	stopWaitNanos atomic.Int64 // the longest a change in progress takes to stop
)

// Progress of the changes of this process, as an interrupt finds them.
type ChangeState int

const (
	// NoChange: no change in progress and none made; exiting writes
	// nothing and leaves nothing half-written.
	NoChange ChangeState = iota
	// ChangeComplete: no change in progress, and one was completed; the
	// command is finishing.
	ChangeComplete
	// ChangeInProgress: a change in progress between two of its steps (or
	// in a single write); it starts no further step.
	ChangeInProgress
	// TransactionOpen: a change in progress has a transaction open, whose
	// writes are being sent; it is aborted.
	TransactionOpen
	// CommitInProgress: the server commits (or aborts) a transaction; its
	// answer is awaited.
	CommitInProgress
)

// StopChanges asks the changes in progress to stop where the directory is
// consistent (see the top of this file) and reports what it found. Unless
// it is NoChange the command returns by itself within StopWait: an
// *InterruptedError (nothing of the change written), a *PartialError
// (part of it written, consistent), or success (the change was complete;
// Stopped then reports true).
func StopChanges() ChangeState {
	stopAsked.Store(true)
	switch {
	case commitsInFlight.Load() > 0:
		return CommitInProgress
	case openTxns.Load() > 0:
		return TransactionOpen
	case changes.Load() > 0:
		return ChangeInProgress
	case changesDone.Load():
		return ChangeComplete
	}
	return NoChange
}

// ResetChanges forgets the changes made and a stop asked for: what a
// process that runs several commands in turn (commands.Main, in tests)
// does before each.
func ResetChanges() {
	stopAsked.Store(false)
	changesDone.Store(false)
}

// StartChange counts a change in progress (Store.ApplyPlan) until
// EndChange, for StopChanges.
func StartChange() { changes.Add(1) }

// EndChange ends a change StartChange counted.
func EndChange() { changes.Add(-1) }

// ChangeDone notes that a change of this process was completed.
func ChangeDone() { changesDone.Store(true) }

// Stopped reports whether StopChanges was called.
func Stopped() bool { return stopAsked.Load() }

// StopWait bounds how long a change takes to stop after StopChanges: the
// answers of the writes in flight (one request timeout), End Transaction
// (the commit deadline) and the re-read of a lost answer.
func StopWait() time.Duration {
	if d := time.Duration(stopWaitNanos.Load()); d > 0 {
		return d
	}
	return stopWaitFor(defaultTimeout)
}

func stopWaitFor(timeout time.Duration) time.Duration {
	return timeout + CommitTimeout(timeout) + SettleWait
}

// noteTimeout makes StopWait cover a connection with this request
// timeout.
func noteTimeout(timeout time.Duration) {
	d := int64(stopWaitFor(timeout))
	for {
		old := stopWaitNanos.Load()
		if old >= d || stopWaitNanos.CompareAndSwap(old, d) {
			return
		}
	}
}

// ErrStopped is what a transaction's writer returns when it stopped
// sending writes on StopChanges; Conn.Transaction then aborts.
var ErrStopped = errors.New("stopped on an interrupt")

// InterruptedError says a change stopped on an interrupt (StopChanges)
// with nothing of its step in progress written (exit code 130): no step
// had started, or the open transaction was aborted or dropped. An
// interrupted change of several steps, some written, is a *PartialError
// around it.
type InterruptedError struct {
	// Transaction reports whether a transaction was open.
	Transaction bool
	// Abort is why End Transaction with commit FALSE did not succeed: nil
	// when the server confirmed the abort. A transaction that is not
	// committed is dropped with its connection, so nothing of it is
	// written either way.
	Abort error
	// Nothing reports that nothing of the change was written: no step
	// before this one (ApplyPlan sets it).
	Nothing bool
}

func (e *InterruptedError) Error() string {
	nothing := "nothing of it was written"
	if e.Nothing {
		nothing = "nothing was written"
	}
	switch {
	case !e.Transaction && e.Nothing:
		return "interrupted before the change started: nothing was written"
	case !e.Transaction:
		return "interrupted before the next step of the change started"
	case e.Abort == nil:
		return "interrupted: the transaction in progress was aborted (the server confirmed it), so " + nothing
	}
	return fmt.Sprintf("interrupted: the abort of the transaction in progress failed (%s), but a transaction that is not committed is dropped with its connection, so %s",
		ldapclient.Describe(e.Abort), nothing)
}

// PartialError says a change written in steps (several transactions, or
// the moves of deleted subtrees between them) stopped at step Step of
// Steps: the steps before it are written, each of which left the
// directory consistent, and running the command again writes what is
// missing (exit code 8). Err says why it stopped; an *OutcomeUnknownError
// there makes the outcome of step Step unknown (exit code 7).
type PartialError struct {
	Step, Steps int
	Unit        string // "transaction" or "step"
	Err         error
}

func (e *PartialError) Error() string {
	written := "the one before it is written"
	if e.Step > 2 {
		written = fmt.Sprintf("the %d before it are written", e.Step-1)
	}
	return fmt.Sprintf("%s (%s %d of %d; %s and the directory is consistent: run the command again to finish)",
		e.Err.Error(), e.Unit, e.Step, e.Steps, written)
}

func (e *PartialError) Unwrap() error { return e.Err }

// StepFailed wraps the error of step i (from 0) of n: a *PartialError when
// steps before it were written.
func StepFailed(err error, unit string, i, n int) error {
	if i == 0 {
		return err
	}
	return &PartialError{Step: i + 1, Steps: n, Unit: unit, Err: err}
}

// StopBefore returns the error of a change asked to stop before its step
// i (from 0) of n started.
func StopBefore(unit string, i, n int) error {
	if !stopAsked.Load() {
		return nil
	}
	return StepFailed(&InterruptedError{}, unit, i, n)
}

// SettleWait is how long a write whose answer was lost is read back before
// it is called not written: a request the server received just before the
// connection broke may still be running. slapd finishes such a request in
// milliseconds; two seconds leaves room for a loaded server.
var SettleWait = 2 * time.Second
