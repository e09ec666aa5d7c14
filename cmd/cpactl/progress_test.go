package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/creack/pty"

	"github.com/cpactl/cpactl/internal/horizontest"
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

// runOnTerminal runs cpactl with stdout and stderr on one pseudo-terminal,
// as an administrator runs it, and returns what the terminal shows when it
// ends (screen) and the bytes it received.
func runOnTerminal(t *testing.T, srv *slapdtest.Server, env []string, args ...string) (screen []string, raw string) {
	t.Helper()
	cmd := cpactlCommand(t, srv, args, append([]string{"CPACTL_PROGRESS_INTERVAL=1ms"}, env...)...)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(tty, &pty.Winsize{Rows: 40, Cols: 250}); err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = tty, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	read := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(ptmx)
		read <- b
	}()
	err = cmd.Wait()
	b := <-read
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 2) {
		t.Fatalf("cpactl %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return render(string(b)), string(b)
}

// render plays bytes written to a terminal onto a screen and returns its
// lines: carriage return, line feed, erasing a line or its end (CSI 2K,
// CSI K, CSI 0K); other escape sequences draw nothing.
func render(b string) []string {
	lines := [][]rune{nil}
	row, col := 0, 0
	rs := []rune(b)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; {
		case r == '\r':
			col = 0
		case r == '\n':
			row++
			if row == len(lines) {
				lines = append(lines, nil)
			}
		case r == 0x1b && i+1 < len(rs) && rs[i+1] == '[':
			j := i + 2
			for j < len(rs) && (rs[j] < 0x40 || rs[j] > 0x7e) {
				j++
			}
			if j < len(rs) && rs[j] == 'K' {
				switch string(rs[i+2 : j]) {
				case "2":
					lines[row] = nil
				case "", "0":
					if col < len(lines[row]) {
						lines[row] = lines[row][:col]
					}
				}
			}
			i = j
		case r < 0x20:
		default:
			for len(lines[row]) <= col {
				lines[row] = append(lines[row], ' ')
			}
			lines[row][col] = r
			col++
		}
	}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, strings.TrimRight(string(l), " "))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// TestRenderTerminal: the screen the tests compare, on a bar erased, a bar
// left behind and a line written over a bar.
func TestRenderTerminal(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"\r- lint: reading (3/-)\x1b[0K\x1b[2K\rlint: no findings\r\n", "lint: no findings"},
		{"\r- lint: reading (3/-)\x1b[0Klint: no findings\r\n", "- lint: reading (3/-)lint: no findings"},
		{"\r- lint: reading (3/-)\x1b[0K\rlint: 1\r\n", "lint: 1 reading (3/-)"},
	} {
		if got := strings.Join(render(c.in), "\n"); got != c.want {
			t.Errorf("render(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestProgressBarsLeaveCleanLines: for every command that draws a bar,
// what it prints after a bar starts on a clean line and no bar is left
// on the screen: with stdout and stderr on one terminal, the screen is
// the one the same command leaves with --progress=none. (A finished
// spinner came back over the output: issue 27.)
func TestProgressBarsLeaveCleanLines(t *testing.T) {
	srv, _ := startSeed(t)
	dir := t.TempDir()
	// A file of 8 MiB or more: --from shows the bytes read.
	big := dir + "/big.ldif"
	if out, err := cpactlCommand(t, srv, []string{"generate", "--seed", "3", "--users", "2000", "--sessions", "18000",
		"--groups", "200", "--entitlements", "60", "--pools", "200", "-O", big}).CombinedOutput(); err != nil {
		t.Fatalf("generate: %v\n%s", err, out)
	}
	file := dir + "/fed.ldif"
	if out, err := cpactlCommand(t, srv, []string{"export", "-O", file}).CombinedOutput(); err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	// apply sends a write each time: the capacity of one pool, back and
	// forth between two files.
	content, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	capacity := regexp.MustCompile(`(?m)^pae-Capacity: (\d+)$`).FindStringSubmatchIndex(string(content))
	if capacity == nil {
		t.Fatal("no pae-Capacity in the export")
	}
	changed := string(content[:capacity[2]]) + "7777" + string(content[capacity[3]:])
	if err := os.WriteFile(dir+"/changed.ldif", []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	pull := dir + "/pull"
	hz, err := horizontest.New("seed-000", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hz.Close)
	hzEnv := []string{"CPACTL_HORIZON_PASSWORD=" + horizontest.Password}
	var pods []string
	for _, p := range hz.Pods() {
		pods = append(pods, "--pod-url", p+"="+hz.URL(p))
	}

	for _, c := range []struct {
		args []string
		env  []string
		// undo runs after the command with a bar, before the same with
		// --progress=none, so that both do the same.
		undo []string
	}{
		{args: []string{"lint"}},
		{args: []string{"lint", "--from", big}},
		{args: []string{"site", "list", "--from", big}},
		{args: []string{"export", "-O", dir + "/again.ldif"}},
		{args: []string{"diff", file}},
		{args: []string{"apply", dir + "/changed.ldif"}, undo: []string{"apply", file}},
		{args: []string{"impact", "--offline-pod", "London-1"}},
		{args: []string{"impact", "--from", big, "--offline-pod", "blr-1"}},
		{args: append([]string{"horizon", "pull", "--url", hz.URL("india-pod-1"), "--ca-file", hz.CAFile, "--user", `CORP\hzadmin`,
			"--replace", "-o", pull}, pods...), env: hzEnv},
	} {
		name := strings.Join(c.args[:min(2, len(c.args))], " ")
		screen, raw := runOnTerminal(t, srv, c.env, c.args...)
		if !strings.Contains(raw, "\x1b[0K") {
			t.Errorf("%s: no bar drawn on the terminal:\n%q", name, raw)
		}
		if c.undo != nil {
			runOnTerminal(t, srv, nil, c.undo...)
		}
		plain, _ := runOnTerminal(t, srv, c.env, append(c.args, "--progress=none")...)
		if strings.Join(screen, "\n") != strings.Join(plain, "\n") {
			t.Errorf("%s: the screen with a bar:\n%s\nwithout:\n%s\n(received %q)", name, strings.Join(screen, "\n"), strings.Join(plain, "\n"), tail(raw))
		}
		if c.undo != nil {
			runOnTerminal(t, srv, nil, c.undo...)
		}
	}
}

func tail(s string) string {
	if len(s) > 400 {
		return "..." + s[len(s)-400:]
	}
	return s
}
