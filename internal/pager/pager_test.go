package pager

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// TestChoose: which pager runs, one row per rule.
func TestChoose(t *testing.T) {
	found := func(string) (string, error) { return "/usr/bin/less", nil }
	missing := func(string) (string, error) { return "", exec.ErrNotFound }
	for _, c := range []struct {
		name     string
		noPager  bool
		env      map[string]string
		lookPath func(string) (string, error)
		want     Command
		none     bool
	}{
		{name: "less with git's defaults when nothing is set", lookPath: found,
			want: Command{Line: "less", From: "the default", Args: []string{"less"}, Env: []string{"LESS=FRX", "LV=-c"}}},
		{name: "none when nothing is set and less is not on PATH", lookPath: missing, none: true},
		{name: "--no-pager wins over everything", noPager: true, env: map[string]string{"CPACTL_PAGER": "more"}, lookPath: found, none: true},
		{name: "PAGER", env: map[string]string{"PAGER": "more"}, lookPath: missing,
			want: Command{Line: "more", From: "PAGER", Args: []string{"more"}, Env: []string{"LESS=FRX", "LV=-c"}}},
		{name: "CPACTL_PAGER wins over PAGER", env: map[string]string{"PAGER": "more", "CPACTL_PAGER": "most -s"}, lookPath: found,
			want: Command{Line: "most -s", From: "CPACTL_PAGER", Args: []string{"most", "-s"}, Env: []string{"LESS=FRX", "LV=-c"}}},
		{name: "PAGER set empty is none", env: map[string]string{"PAGER": ""}, lookPath: found, none: true},
		{name: "PAGER=cat is none", env: map[string]string{"PAGER": " cat "}, lookPath: found, none: true},
		{name: "CPACTL_PAGER empty is none even with PAGER", env: map[string]string{"CPACTL_PAGER": "", "PAGER": "more"}, lookPath: found, none: true},
		{name: "CPACTL_PAGER=cat is none", env: map[string]string{"CPACTL_PAGER": "cat"}, lookPath: found, none: true},
		{name: "a line with shell characters runs with sh -c", env: map[string]string{"PAGER": "less -R | tee /tmp/x"}, lookPath: found,
			want: Command{Line: "less -R | tee /tmp/x", From: "PAGER", Env: []string{"LESS=FRX", "LV=-c"}}},
		{name: "a quoted argument needs the shell", env: map[string]string{"PAGER": `less -P"page %d"`}, lookPath: found,
			want: Command{Line: `less -P"page %d"`, From: "PAGER", Env: []string{"LESS=FRX", "LV=-c"}}},
		{name: "LESS and LV as the user set them", env: map[string]string{"LESS": "-S", "LV": ""}, lookPath: found,
			want: Command{Line: "less", From: "the default", Args: []string{"less"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := func(k string) (string, bool) { v, ok := c.env[k]; return v, ok }
			got, ok := Choose(c.noPager, env, c.lookPath)
			if c.none {
				if ok {
					t.Fatalf("a pager: %+v, want none", got)
				}
				return
			}
			if !ok || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v (%v), want %+v", got, ok, c.want)
			}
		})
	}
}

// TestCount: the output is paged once it takes as many screen lines as
// the terminal has rows (the shell's prompt needs the last), counting
// the lines a terminal wraps.
func TestCount(t *testing.T) {
	for _, c := range []struct {
		name       string
		cols, rows int
		text       string
		paged      bool
	}{
		{"rows-1 lines fit", 80, 5, "1\n2\n3\n4\n", false},
		{"rows lines do not", 80, 5, "1\n2\n3\n4\n5\n", true},
		{"a last line without newline fits", 80, 5, "1\n2\n3\n4\n5", false},
		{"a line of exactly cols takes one row", 4, 3, "abcd\nabcd\n", false},
		{"a longer line wraps", 4, 3, "abcde\nab\n", true},
		{"wide letters take two columns", 4, 3, "日本語\n", false},
		{"wide letters wrap by width", 4, 2, "日本語\n", true},
		{"a tab goes to the next multiple of 8", 10, 2, "\t\tx\n", true},
		{"carriage return goes back", 4, 2, "abcd\rabcd\n", false},
		{"an empty line is a line", 80, 3, "\n\n\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := New(Command{}, c.cols, c.rows, nil, nil)
			if got := w.count([]byte(c.text)); got != c.paged {
				t.Fatalf("paged %v, want %v (lines %d, col %d)", got, c.paged, w.lines, w.col)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer that the pager process (through exec's
// copying goroutine) and the test may use at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// recorder is a pager that copies its input to a file: sh -c 'cat >FILE'.
func recorder(t *testing.T) (Command, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "paged")
	return Command{Line: "cat >" + file, From: "PAGER"}, file
}

func lines(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(strings.Repeat("x", i%7) + "line\n")
	}
	return b.String()
}

// TestShortOutputIsNotPaged: what fits the screen goes to the terminal as
// written, with standard error in its place, and no pager runs.
func TestShortOutputIsNotPaged(t *testing.T) {
	cmd, file := recorder(t)
	var screen bytes.Buffer
	w := New(cmd, 80, 10, &screen, &screen)
	errOut := w.Stderr()
	_, _ = errOut.Write([]byte("warning: before\n"))
	_, _ = w.Write([]byte("a\nb\n"))
	_, _ = errOut.Write([]byte("note: between\n"))
	_, _ = w.Write([]byte("c\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if want := "warning: before\na\nb\nnote: between\nc\n"; screen.String() != want {
		t.Errorf("the terminal shows %q, want %q", screen.String(), want)
	}
	if w.Paging() {
		t.Error("a pager ran")
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the pager ran: %v", err)
	}
	_, _ = w.Write([]byte("after\n"))
	if !strings.HasSuffix(screen.String(), "c\nafter\n") {
		t.Errorf("a write after Close is not written at once: %q", screen.String())
	}
}

// TestLongOutputIsPaged: output longer than the screen goes whole into
// the pager, in order, the part held before it started included;
// standard error waits until the pager exits.
func TestLongOutputIsPaged(t *testing.T) {
	cmd, file := recorder(t)
	var out, errOut syncBuffer
	w := New(cmd, 80, 10, &out, &errOut)
	before := 0
	w.BeforePaging = func() { before++ }
	text := lines(500)
	for len(text) > 0 {
		n := min(len(text), 37)
		if _, err := w.Write([]byte(text[:n])); err != nil {
			t.Fatal(err)
		}
		text = text[n:]
	}
	_, _ = w.Stderr().Write([]byte("note: showing 500 of 900 lines\n"))
	if errOut.String() != "" {
		t.Errorf("standard error written while the pager runs: %q", errOut.String())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	paged, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(paged) != lines(500) {
		t.Errorf("the pager read %d bytes, want the %d written", len(paged), len(lines(500)))
	}
	if out.String() != "" {
		t.Errorf("written to the terminal beside the pager: %q", out.String())
	}
	if errOut.String() != "note: showing 500 of 900 lines\n" {
		t.Errorf("standard error after the pager: %q", errOut.String())
	}
	if !w.Paging() || before != 1 {
		t.Errorf("paging %v, BeforePaging called %d times", w.Paging(), before)
	}
}

// TestPagerQuitEarly: a reader who quits the pager before the end (here a
// pager that reads one line) makes the next writes return ErrClosed,
// never a broken-pipe error, and nothing hangs.
func TestPagerQuitEarly(t *testing.T) {
	var out, errOut syncBuffer
	w := New(Command{Line: "head -n 1 >/dev/null", From: "PAGER"}, 80, 5, &out, &errOut)
	var err error
	chunk := []byte(lines(1000))
	for range 200 { // 8 MB: far more than a pipe holds
		if _, err = w.Write(chunk); err != nil {
			break
		}
	}
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("a write after the pager quit: %v, want ErrClosed", err)
	}
	if _, err := w.Write([]byte("more\n")); !errors.Is(err, ErrClosed) {
		t.Errorf("the next write: %v, want ErrClosed", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if out.String() != "" || errOut.String() != "" {
		t.Errorf("written beside the pager: %q, %q", out.String(), errOut.String())
	}
}

// TestPagerNotFound: a pager that is not on PATH is said once and the
// output written without it; one the shell cannot run is a RunError.
func TestPagerNotFound(t *testing.T) {
	var out bytes.Buffer
	w := New(Command{Line: "no-such-pager-here", From: "PAGER", Args: []string{"no-such-pager-here"}}, 80, 5, &out, &out)
	var failed error
	w.StartFailed = func(_ Command, err error) { failed = err }
	if _, err := w.Write([]byte(lines(20))); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(failed, exec.ErrNotFound) {
		t.Errorf("StartFailed told %v, want not found", failed)
	}
	if out.String() != lines(20) {
		t.Errorf("the output without the pager: %q", out.String())
	}

	var errOut syncBuffer
	w = New(Command{Line: "no-such-pager-here \"-R\"", From: "CPACTL_PAGER"}, 80, 5, &out, &errOut)
	_, _ = w.Write([]byte(lines(20)))
	var run *RunError
	if err := w.Close(); !errors.As(err, &run) {
		t.Fatalf("Close: %v, want a RunError", err)
	}
	if !strings.Contains(run.Error(), `the pager "no-such-pager-here \"-R\"" (CPACTL_PAGER) could not be run`) {
		t.Errorf("the error says %q", run)
	}
}

// TestInterrupt: Ctrl-C while the pager runs closes its input (a write
// blocked on a full pipe returns ErrClosed), waits for the pager to exit,
// and Close returns ErrInterrupted.
func TestInterrupt(t *testing.T) {
	stop := filepath.Join(t.TempDir(), "stop")
	// A pager that reads one byte and then nothing until it is told to
	// exit, as less does while its reader looks at the first screen.
	pagerLine := "head -c 1 >/dev/null; while [ ! -e " + stop + " ]; do sleep 0.01; done"
	var out, errOut syncBuffer
	w := New(Command{Line: pagerLine, From: "PAGER"}, 80, 5, &out, &errOut)
	if _, err := w.Write([]byte(lines(10))); err != nil {
		t.Fatal(err)
	}
	if !w.Paging() {
		t.Fatal("no pager")
	}
	_, _ = w.Stderr().Write([]byte("note: held\n"))
	wrote := make(chan error, 1)
	go func() {
		_, err := w.Write(bytes.Repeat([]byte("x"), 4<<20)) // blocks: the pager does not read
		wrote <- err
	}()
	interrupted := make(chan bool, 1)
	after := false
	go func() {
		interrupted <- w.Interrupt(func() { after = true })
	}()
	if err := <-wrote; !errors.Is(err, ErrClosed) {
		t.Errorf("the blocked write: %v, want ErrClosed", err)
	}
	if err := os.WriteFile(stop, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if !<-interrupted || !after {
		t.Errorf("Interrupt did not see the pager, or did not call after")
	}
	if err := w.Close(); !errors.Is(err, ErrInterrupted) {
		t.Errorf("Close: %v, want ErrInterrupted", err)
	}
	if errOut.String() != "note: held\n" {
		t.Errorf("standard error after the pager: %q", errOut.String())
	}
	if New(Command{}, 80, 5, &out, &errOut).Interrupt(nil) {
		t.Error("Interrupt with no pager running says it stopped one")
	}
}
