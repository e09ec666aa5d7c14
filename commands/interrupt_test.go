package commands

import (
	"bytes"
	"fmt"
	"os"
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
