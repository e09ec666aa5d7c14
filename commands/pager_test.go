package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// lockedBuffer is a bytes.Buffer the pager process (through exec's
// copying goroutine) and the test may use at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// screen is a pager.Terminal of a given size; rows 0 is not a terminal.
type screen struct{ cols, rows int }

func (s screen) Size() (int, int, bool) { return s.cols, s.rows, s.rows > 0 }

// pagedGlobals are snapshotGlobals on a terminal of rows rows (0: stdout
// is not a terminal) whose CPACTL_PAGER copies what it reads to the file
// returned, then writes "end" there once its input is closed.
func pagedGlobals(t *testing.T, rows int) (g *Globals, out, errOut *lockedBuffer, record string) {
	t.Helper()
	g, _, _ = snapshotGlobals(t)
	out, errOut = &lockedBuffer{}, &lockedBuffer{}
	g.IO.Out, g.IO.Err = out, errOut
	dir := t.TempDir()
	record = filepath.Join(dir, "paged")
	script := filepath.Join(dir, "pager")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat >'"+record+"'\necho end >>'"+record+"'\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	g.Stdout = screen{cols: 100, rows: rows}
	g.LookupEnv = func(k string) (string, bool) {
		if k == "CPACTL_PAGER" {
			return script, true
		}
		return "", false
	}
	return g, out, errOut, record
}

// plainOutput is what args print with no pager.
func plainOutput(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	g, out, errOut := snapshotGlobals(t)
	runTree(t, g, args...)
	return out.String(), errOut.String()
}

// TestQuestionAfterThePagedOutput: a question is asked once the reader
// has quit the pager, never under it, and what follows it goes to the
// terminal.
func TestQuestionAfterThePagedOutput(t *testing.T) {
	want, _ := plainOutput(t, "pool", "list")
	g, out, _, record := pagedGlobals(t, 3)
	asked := false
	g.Interactive = g.pagedFirst(func() bool {
		asked = true
		paged, err := os.ReadFile(record)
		if err != nil || string(paged) != want+"end\n" {
			t.Errorf("asked with the pager still running: it has read %q (%v)", paged, err)
		}
		return false
	})
	runTree(t, g, "pool", "list")
	if g.Interactive(); !asked {
		t.Fatal("not asked")
	}
	g.report("after the question")
	if out.String() != "after the question\n" {
		t.Errorf("the terminal shows %q, want only what follows the question", out.String())
	}
	if err := g.closePager(); err != nil {
		t.Fatal(err)
	}
}

// TestPagedListCount: a cut list's count on stderr waits until the reader
// quits the pager, and then says it under what the pager leaves; the
// pager reads stdout alone.
func TestPagedListCount(t *testing.T) {
	wantOut, wantErr := plainOutput(t, "pool", "list", "--limit", "2")
	if wantErr == "" {
		t.Fatal("the demo's pool list is not cut at 2: pick a smaller limit")
	}
	g, out, errOut, record := pagedGlobals(t, 2)
	runTree(t, g, "pool", "list", "--limit", "2")
	if errOut.String() != "" {
		t.Errorf("stderr written while the pager runs: %q", errOut)
	}
	if err := g.closePager(); err != nil {
		t.Fatal(err)
	}
	paged, err := os.ReadFile(record)
	if err != nil || string(paged) != wantOut+"end\n" {
		t.Errorf("the pager read %q (%v), want %q", paged, err, wantOut)
	}
	if out.String() != "" || errOut.String() != wantErr {
		t.Errorf("the terminal shows %q and %q, want nothing and %q", out, errOut, wantErr)
	}
}

// TestNoPagerOffATerminal: with stdout not a terminal, or --no-pager, the
// output is written as it comes, JSON included, and no pager runs.
func TestNoPagerOffATerminal(t *testing.T) {
	want, _ := plainOutput(t, "pool", "list", "-o", "json")
	for _, c := range []struct {
		name string
		rows int
		args []string
	}{
		{"stdout is not a terminal", 0, []string{"pool", "list", "-o", "json"}},
		{"--no-pager", 2, []string{"pool", "list", "-o", "json", "--no-pager"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, out, _, record := pagedGlobals(t, c.rows)
			runTree(t, g, c.args...)
			if err := g.closePager(); err != nil {
				t.Fatal(err)
			}
			if out.String() != want {
				t.Errorf("stdout %q, want %q", out, want)
			}
			if _, err := os.Stat(record); err == nil {
				t.Error("the pager ran")
			}
		})
	}
	g, out, _, record := pagedGlobals(t, 2)
	runTree(t, g, "pool", "list", "-o", "json")
	if err := g.closePager(); err != nil {
		t.Fatal(err)
	}
	if paged, _ := os.ReadFile(record); out.String() != "" || string(paged) != want+"end\n" {
		t.Errorf("-o json on a terminal is not paged: stdout %q, the pager read %q", out, paged)
	}
}
