package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// pagerCommand is cpactl with args and none of this process's pager
// settings (CPACTL_PAGER, PAGER, LESS, LV), env added.
func pagerCommand(t *testing.T, args []string, env ...string) *exec.Cmd {
	t.Helper()
	bin, err := exec.LookPath("cpactl")
	if err != nil {
		t.Fatalf("cpactl is not in PATH: %v", err)
	}
	cmd := exec.Command(bin, args...)
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "CPACTL_PAGER", "PAGER", "LESS", "LV":
		default:
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, append([]string{"TERM=xterm", "CPACTL_CONFIG=" + noConfig}, env...)...)
	return cmd
}

// startPaged runs cpactl with stdout and stderr on a terminal of 10 rows
// and 100 columns.
func startPaged(t *testing.T, env []string, args ...string) *terminal {
	t.Helper()
	cmd := pagerCommand(t, args, env...)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 10, Cols: 100})
	if err != nil {
		t.Fatal(err)
	}
	term := &terminal{t: t, cmd: cmd, tty: tty, done: make(chan error, 1)}
	go term.read()
	go func() { term.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		tty.Close()
	})
	return term
}

// recordingPager writes a pager script that copies what it reads to a
// file, and returns the script and the file.
func recordingPager(t *testing.T, name string) (script, record string) {
	t.Helper()
	dir := t.TempDir()
	script, record = filepath.Join(dir, name), filepath.Join(dir, name+".out")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat >'"+record+"'\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return script, record
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestPagerOnTerminal: a read command's output longer than the screen is
// paged when stdout is a terminal (PAGER, CPACTL_PAGER first, else less
// with LESS=FRX), never when it fits, with --no-pager or when stdout is a
// pipe; quitting less early exits 0 with no broken-pipe error, and Ctrl-C
// under less exits 130 once the reader quits it.
func TestPagerOnTerminal(t *testing.T) {
	dir := t.TempDir()
	fed := filepath.Join(dir, "fed.ldif")
	if out, err := pagerCommand(t, []string{"generate", "--seed", "3", "--users", "2000", "--sessions", "100",
		"--groups", "20", "--entitlements", "6", "--pools", "20", "-O", fed}).CombinedOutput(); err != nil {
		t.Fatalf("generate: %v\n%s", err, out)
	}
	piped := func(args ...string) string {
		t.Helper()
		out, err := pagerCommand(t, args).Output()
		if err != nil {
			t.Fatalf("%s: %v", strings.Join(args, " "), err)
		}
		return string(out)
	}
	wantJSON := piped("user", "list", "--from", fed, "-o", "json")

	t.Run("PAGER reads the whole output", func(t *testing.T) {
		script, record := recordingPager(t, "pager")
		term := startPaged(t, []string{"PAGER=" + script}, "user", "list", "--from", fed, "-o", "json")
		if code := term.wait(); code != 0 {
			t.Fatalf("exit %d:\n%s", code, term.output())
		}
		got, err := os.ReadFile(record)
		if err != nil {
			t.Fatalf("the pager did not run: %v; the terminal shows:\n%s", err, term.output())
		}
		if string(got) != wantJSON {
			t.Errorf("the pager read %d bytes, want the %d cpactl prints to a pipe", len(got), len(wantJSON))
		}
		if strings.Contains(term.output(), `"uid"`) {
			t.Errorf("the output was also written to the terminal:\n%s", tail(term.output()))
		}
	})
	t.Run("CPACTL_PAGER wins over PAGER", func(t *testing.T) {
		pagerScript, pagerRecord := recordingPager(t, "pager")
		ours, ourRecord := recordingPager(t, "ours")
		term := startPaged(t, []string{"PAGER=" + pagerScript, "CPACTL_PAGER=" + ours}, "user", "list", "--from", fed)
		if code := term.wait(); code != 0 {
			t.Fatalf("exit %d:\n%s", code, term.output())
		}
		if !exists(ourRecord) || exists(pagerRecord) {
			t.Errorf("CPACTL_PAGER ran: %v, PAGER ran: %v", exists(ourRecord), exists(pagerRecord))
		}
	})
	for _, c := range []struct {
		name string
		args []string
	}{
		{"no pager with --no-pager", []string{"user", "list", "--from", fed, "--no-pager"}},
		{"no pager for what fits the screen", []string{"user", "list", "--from", fed, "--limit", "8"}},
		{"no pager with CPACTL_PAGER=cat", []string{"user", "list", "--from", fed}},
	} {
		t.Run(c.name, func(t *testing.T) {
			script, record := recordingPager(t, "pager")
			env := []string{"PAGER=" + script}
			if strings.Contains(c.name, "cat") {
				env = append(env, "CPACTL_PAGER=cat")
			}
			term := startPaged(t, env, c.args...)
			if code := term.wait(); code != 0 {
				t.Fatalf("exit %d:\n%s", code, term.output())
			}
			if exists(record) {
				t.Error("the pager ran")
			}
			term.expect("UID ") // the table, on the terminal
		})
	}
	t.Run("no pager when stdout is a pipe", func(t *testing.T) {
		script, record := recordingPager(t, "pager")
		cmd := pagerCommand(t, []string{"user", "list", "--from", fed, "-o", "json"}, "PAGER="+script)
		tty, tt, err := pty.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer tty.Close()
		defer tt.Close()
		cmd.Stderr = tt // stderr on a terminal changes nothing
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != wantJSON || exists(record) {
			t.Errorf("piped: the pager ran %v; stdout is what a pipe gets: %v", exists(record), string(out) == wantJSON)
		}
	})
	t.Run("a pager not on PATH: a warning, and the output without it", func(t *testing.T) {
		term := startPaged(t, []string{"PAGER=no-such-pager -R"}, "user", "list", "--from", fed)
		if code := term.wait(); code != 0 {
			t.Fatalf("exit %d:\n%s", code, tail(term.output()))
		}
		term.expect(`warning: the pager "no-such-pager -R" (PAGER) could not be started`)
		term.expect("hint: set CPACTL_PAGER or PAGER to a pager on PATH, or pass --no-pager")
		term.expect("UID ")
	})
	t.Run("a pager the shell cannot run: exit 1 naming it", func(t *testing.T) {
		term := startPaged(t, []string{`CPACTL_PAGER=no-such-pager "-R"`}, "user", "list", "--from", fed)
		if code := term.wait(); code != 1 {
			t.Fatalf("exit %d, want 1:\n%s", code, tail(term.output()))
		}
		term.expect(`cpactl: the pager "no-such-pager \"-R\"" (CPACTL_PAGER) could not be run: exit status 127`)
		term.expect("hint: set CPACTL_PAGER or PAGER to a pager on PATH, or pass --no-pager")
	})

	if _, err := exec.LookPath("less"); err != nil {
		t.Skipf("less is not on PATH: %v", err)
	}
	t.Run("less by default; q early exits 0 with no broken pipe", func(t *testing.T) {
		term := startPaged(t, nil, "user", "list", "--from", fed, "--limit", "1500")
		term.expect("UID ")
		term.expect("\n:") // less's prompt under the first screen
		term.send("q")
		if code := term.wait(); code != 0 {
			t.Fatalf("exit %d:\n%s", code, tail(term.output()))
		}
		out := term.output()
		if strings.Contains(out, "broken pipe") || strings.Contains(out, "cpactl:") {
			t.Errorf("an error after quitting the pager:\n%s", tail(out))
		}
		if strings.Contains(out, "\x1b[?1049h") {
			t.Errorf("less switched to the alternate screen: LESS=FRX was not its default")
		}
		// The count comes once the pager is gone, under what it left.
		term.expect("note: showing 1,500 of 2,000 users: --limit 0 for all")
	})
	t.Run("Ctrl-C under less exits 130 once it is quit", func(t *testing.T) {
		term := startPaged(t, nil, "user", "list", "--from", fed)
		term.expect("\n:")
		term.send("\x03")
		term.settle()
		// cpactl waits for the reader: it neither exits nor writes
		// under the pager until less is quit.
		select {
		case err := <-term.done:
			t.Fatalf("cpactl exited (%v) with less still running:\n%s", err, tail(term.output()))
		default:
		}
		if strings.Contains(term.output(), "cpactl: interrupted") {
			t.Fatalf("cpactl wrote under the pager:\n%s", tail(term.output()))
		}
		term.send("q")
		if code := term.wait(); code != 130 {
			t.Fatalf("exit %d, want 130:\n%s", code, tail(term.output()))
		}
		term.expect("cpactl: interrupted")
		if strings.Contains(term.output(), "broken pipe") {
			t.Errorf("a broken-pipe error:\n%s", tail(term.output()))
		}
	})
}
