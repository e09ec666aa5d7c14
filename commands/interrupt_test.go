package commands

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cpactl/cpactl/directory"
)

func TestInterruptedWithoutACommit(t *testing.T) {
	var stderr bytes.Buffer
	if code := Interrupted(&stderr, make(chan os.Signal)); code != ExitInterrupted {
		t.Errorf("exit %d, want %d", code, ExitInterrupted)
	}
	if stderr.String() != "cpactl: interrupted\n" {
		t.Errorf("stderr %q", stderr.String())
	}
}

func TestExitCodeOfAnUnknownOutcome(t *testing.T) {
	lost := &directory.OutcomeUnknownError{What: "the commit of the transaction",
		Err: &directory.NoAnswerError{URL: "ldap://ldap.example.com", Timeout: 10 * time.Second, Op: "commit"}}
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
