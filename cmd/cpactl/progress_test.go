package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/creack/pty"

	"github.com/cpactl/cpactl/internal/slapdtest"
)

// runStderrOnTerminal runs cpactl with stderr on a pseudo-terminal and
// stdout on a pipe (or, with piped set, both on pipes), and returns what
// each received.
func runStderrOnTerminal(t *testing.T, srv *slapdtest.Server, piped bool, args ...string) (stdout, stderr string) {
	t.Helper()
	cmd := cpactlCommand(t, srv, args, "CPACTL_PROGRESS_INTERVAL=1ms")
	var out, errOut bytes.Buffer
	cmd.Stdout = &out
	if piped {
		cmd.Stderr = &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("cpactl %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
		}
		return out.String(), errOut.String()
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(tty, &pty.Winsize{Rows: 40, Cols: 150}); err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the child holds it now
	read := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(ptmx) // ends with EIO when the child closes the terminal
		read <- b
	}()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("cpactl %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), string(<-read)
}

// TestProgressOnTerminal: with stderr on a terminal, lint, export and diff
// draw a progress bar there (and clear it); with stderr piped they print
// none; -o json prints none either way, and stdout is byte-identical.
func TestProgressOnTerminal(t *testing.T) {
	srv, _ := startSeed(t)
	file := t.TempDir() + "/fed.ldif"
	for _, args := range [][]string{{"lint"}, {"export", "-O", file}, {"diff", file}} {
		name := args[0]
		stdout, stderr := runStderrOnTerminal(t, srv, false, args...)
		if !strings.Contains(stderr, name+": reading") {
			t.Errorf("%s with stderr on a terminal: no progress bar; stderr:\n%q", name, stderr)
		}
		if !strings.Contains(stderr, "\x1b[2K\r") {
			t.Errorf("%s: the bar is not cleared; stderr:\n%q", name, stderr)
		}
		if strings.Contains(stdout, "reading") {
			t.Errorf("%s: progress on stdout:\n%s", name, stdout)
		}
		pipedOut, pipedErr := runStderrOnTerminal(t, srv, true, args...)
		if strings.Contains(pipedErr, "reading") {
			t.Errorf("%s with stderr piped: progress shown:\n%s", name, pipedErr)
		}
		if pipedOut != stdout {
			t.Errorf("%s: stdout differs with stderr on a terminal:\n%s\nand piped:\n%s", name, stdout, pipedOut)
		}
	}
	for _, args := range [][]string{{"lint", "-o", "json"}, {"diff", file, "-o", "json"}, {"site", "list", "-o", "yaml"}} {
		stdout, stderr := runStderrOnTerminal(t, srv, false, args...)
		if stderr != "" {
			t.Errorf("%s: stderr on a terminal is not empty:\n%q", strings.Join(args, " "), stderr)
		}
		pipedOut, _ := runStderrOnTerminal(t, srv, true, args...)
		if pipedOut != stdout {
			t.Errorf("%s: stdout differs with stderr on a terminal:\n%s\nand piped:\n%s", strings.Join(args, " "), stdout, pipedOut)
		}
	}
}
