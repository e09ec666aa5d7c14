package commands

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
)

func TestInterruptedWithoutACommit(t *testing.T) {
	ldapconn.ResetChanges() // no change made in this process
	t.Cleanup(ldapconn.ResetChanges)
	var stderr bytes.Buffer
	if code := Interrupted(&stderr, make(chan os.Signal)); code != ExitInterrupted {
		t.Errorf("exit %d, want %d", code, ExitInterrupted)
	}
	if stderr.String() != "cpactl: interrupted\n" {
		t.Errorf("stderr %q", stderr.String())
	}
}

func TestExitCodeOfAnUnknownOutcome(t *testing.T) {
	lost := &ldapconn.OutcomeUnknownError{What: "the commit of the transaction",
		Err: &ldapconn.NoAnswerError{URL: "ldap://ldap.example.com", Timeout: 10 * time.Second, Op: "commit"}}
	for _, err := range []error{lost, fmt.Errorf("apply: %w", lost)} {
		if code := ExitCode(err); code != ExitUnknown {
			t.Errorf("%v: exit %d, want %d", err, code, ExitUnknown)
		}
		if hintOf(err) == "" {
			t.Errorf("%v: no hint", err)
		}
	}
}

// TestInterruptedStopsAPull: Ctrl-C during an interruptible command (a
// Horizon pull) cancels its context and waits for its cleanup (logouts,
// the temporary directory removed) before the process exits 130.
func TestInterruptedStopsAPull(t *testing.T) {
	g := &Globals{}
	started := make(chan struct{})
	cleaned := false
	errc := make(chan error, 1)
	go func() {
		errc <- g.interruptible(func(ctx context.Context) error {
			close(started)
			<-ctx.Done()
			cleaned = true
			return fmt.Errorf("pull: %w", ctx.Err())
		})
	}()
	<-started
	var stderr bytes.Buffer
	if code := Interrupted(&stderr, make(chan os.Signal)); code != ExitInterrupted {
		t.Errorf("exit %d, want %d", code, ExitInterrupted)
	}
	if !cleaned {
		t.Error("Interrupted returned before the command cleaned up")
	}
	if !strings.Contains(stderr.String(), "every session logged out") {
		t.Errorf("stderr %q", stderr.String())
	}
	if err := <-errc; ExitCode(err) != ExitInterrupted {
		t.Errorf("the command's error %v exits %d", err, ExitCode(err))
	}
	// Nothing running any more: a later Ctrl-C is the plain one.
	stderr.Reset()
	if Interrupted(&stderr, make(chan os.Signal)); stderr.String() != "cpactl: interrupted\n" {
		t.Errorf("stderr %q", stderr.String())
	}
}

// TestExitCodeOfAStoppedChange: one row per rule of what a change that
// stopped part way exits with (issue 22, item 7).
func TestExitCodeOfAStoppedChange(t *testing.T) {
	network := ldap.NewError(ldap.ErrorNetwork, errors.New("EOF"))
	lost := &ldapconn.OutcomeUnknownError{What: "the commit of the transaction", Err: network}
	partial := func(err error) error {
		return &ldapconn.PartialError{Step: 2, Steps: 3, Unit: "transaction", Err: err}
	}
	for _, c := range []struct {
		rule string
		err  error
		code int
	}{
		{"an aborted transaction, nothing before it: interrupted", &ldapconn.InterruptedError{Transaction: true, Nothing: true}, ExitInterrupted},
		{"an aborted transaction after a written one: partly written", partial(&ldapconn.InterruptedError{Transaction: true}), ExitPartial},
		{"a connection broken before the commit, nothing before it: error", &directory.WriteError{What: "the connection broke before the commit", Err: network}, ExitError},
		{"a connection broken before the commit after a written transaction: partly written", partial(&directory.WriteError{What: "the connection broke before the commit", Err: network}), ExitPartial},
		{"a lost commit read back as not written, nothing before it: error", &directory.NotWrittenError{What: "the commit", Err: lost}, ExitError},
		{"a lost commit read back as not written after a written transaction: partly written", partial(&directory.NotWrittenError{What: "the commit", Err: lost}), ExitPartial},
		{"a lost commit the re-read cannot settle: unknown, written before it or not", partial(lost), ExitUnknown},
		{"a conflict after a written transaction: partly written", partial(&ldapclient.ConflictError{What: "site UK"}), ExitPartial},
		{"a server that closed the connection during the bind: error", &ldapconn.ClosedError{URL: "ldap://h", Op: "bind", Err: network}, ExitError},
	} {
		if code := ExitCode(c.err); code != c.code {
			t.Errorf("%s: exit %d, want %d (%v)", c.rule, code, c.code, c.err)
		}
		if c.code == ExitPartial && !strings.Contains(hintOf(c.err), "again") {
			t.Errorf("%s: hint %q does not say to run the command again", c.rule, hintOf(c.err))
		}
	}
}
