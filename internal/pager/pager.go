// Package pager shows a read command's output through a pager (less, or
// the one CPACTL_PAGER or PAGER names) when standard output is a terminal
// and the output is longer than the screen, as git and gh do
// (docs/conventions.md, "Pager").
//
// Choose decides which pager, if any; a Writer stands for standard
// output while the command runs: it holds the output until it is longer
// than the screen, then starts the pager and streams the rest into it.
// Output that fits the screen is written to the terminal as it would have
// been without a pager.
package pager

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
	"golang.org/x/term"
)

// Terminal is what the pager needs to know of standard output.
type Terminal interface {
	// Size returns the terminal's width and height in characters; ok is
	// false when standard output is not a terminal (a pipe, a file) or
	// its size is unknown.
	Size() (cols, rows int, ok bool)
}

// TerminalOf returns the Terminal that w is: an *os.File's, through
// golang.org/x/term; any other writer is not a terminal.
func TerminalOf(w io.Writer) Terminal {
	f, _ := w.(*os.File)
	return fileTerminal{f}
}

type fileTerminal struct{ f *os.File }

func (t fileTerminal) Size() (int, int, bool) {
	if t.f == nil || !term.IsTerminal(int(t.f.Fd())) {
		return 0, 0, false
	}
	cols, rows, err := term.GetSize(int(t.f.Fd()))
	if err != nil || cols <= 0 || rows <= 0 {
		return 0, 0, false
	}
	return cols, rows, true
}

// Command is a pager to run.
type Command struct {
	// Line is the pager as the variable gives it ("less -S"), or "less".
	Line string
	// From names where it came from, for messages: CPACTL_PAGER, PAGER,
	// or "the default" for less found on PATH.
	From string
	// Args is the program and its arguments when Line needs no shell
	// (words separated by blanks); nil runs Line with sh -c.
	Args []string
	// Env is what the pager's environment adds to cpactl's: LESS=FRX
	// when LESS is not set, LV=-c when LV is not (git's defaults).
	Env []string
}

// shellChars are those that make a pager line a shell command (git's
// list, less the blank, which separates arguments).
const shellChars = "|&;<>()$`\\\"'\n*?[#~=%"

// Choose returns the pager to run, ok false for none. noPager
// (--no-pager) is none; then CPACTL_PAGER, then PAGER, each when set
// (set to "" or "cat": none); then less when it is on PATH; else none.
// env looks a variable up (os.LookupEnv), lookPath finds a program
// (exec.LookPath).
func Choose(noPager bool, env func(string) (string, bool), lookPath func(string) (string, error)) (Command, bool) {
	if noPager {
		return Command{}, false
	}
	c := Command{Line: "less", From: "the default"}
	if v, ok := env("CPACTL_PAGER"); ok {
		c.Line, c.From = v, "CPACTL_PAGER"
	} else if v, ok := env("PAGER"); ok {
		c.Line, c.From = v, "PAGER"
	} else if _, err := lookPath("less"); err != nil {
		return Command{}, false
	}
	c.Line = strings.TrimSpace(c.Line)
	if c.Line == "" || c.Line == "cat" {
		return Command{}, false
	}
	if !strings.ContainsAny(c.Line, shellChars) {
		c.Args = strings.Fields(c.Line)
	}
	if _, ok := env("LESS"); !ok {
		c.Env = append(c.Env, "LESS=FRX")
	}
	if _, ok := env("LV"); !ok {
		c.Env = append(c.Env, "LV=-c")
	}
	return c, true
}

// ErrClosed is what a write returns once the pager stopped reading before
// the output ended (the reader quit it: `q` in less). The command stops
// there; cpactl exits 0 and says nothing, as gh does.
var ErrClosed = errors.New("the pager was closed before the output ended")

// ErrInterrupted is what Close returns when Ctrl-C stopped the output
// while the pager ran (Writer.Interrupt).
var ErrInterrupted = errors.New("interrupted while the pager ran")

// RunError is a pager the shell could not run (exit 126 or 127: not
// found, not executable).
type RunError struct {
	Command Command
	Err     error
}

func (e *RunError) Error() string {
	return fmt.Sprintf("the pager %q (%s) could not be run: %v", e.Command.Line, e.Command.From, e.Err)
}

func (e *RunError) Unwrap() error { return e.Err }

// process is a running pager.
type process struct {
	in   io.WriteCloser
	done chan struct{} // closed when it has exited; err is then set
	err  error
}

// start runs c with its standard output and error on stdout and stderr
// and a pipe as its input.
func start(c Command, stdout, stderr io.Writer) (*process, error) {
	var cmd *exec.Cmd
	if c.Args != nil {
		cmd = exec.Command(c.Args[0], c.Args[1:]...)
	} else {
		cmd = exec.Command("sh", "-c", c.Line)
	}
	cmd.Env = append(os.Environ(), c.Env...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{in: in, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// state is where a Writer's output goes.
type state int

const (
	deciding state = iota // held: it fits the screen so far
	direct                // to the terminal as it comes
	paging                // into the running pager
	quit                  // nowhere: the pager stopped reading
)

type chunk struct {
	stderr bool
	b      []byte
}

// Writer is standard output while a command runs, when it may be paged:
// New. Its Stderr is standard error meanwhile, so that what the command
// says there keeps its place after the output and never lands on the
// pager's screen.
type Writer struct {
	// BeforePaging, when set, is called once just before the pager
	// starts (cpactl ends its progress bar: nothing else may draw on the
	// terminal while the pager does).
	BeforePaging func()
	// StartFailed, when set, is told that the pager could not be started
	// (a program not on PATH); the output is then written without it.
	StartFailed func(Command, error)

	mu         sync.Mutex
	out        io.Writer // the terminal
	errOut     io.Writer
	cmd        Command
	cols, rows int
	state      state
	// held is, while deciding, what was written to either stream, in
	// order; while paging, what was written to standard error.
	held       []chunk
	lines, col int // the screen lines the held output takes, and the column

	proc          atomic.Pointer[process]
	interrupted   atomic.Bool
	interruptDone chan struct{}
}

// New returns the Writer that pages what is written to it with c once it
// is longer than a terminal of cols x rows; out and errOut are the
// terminal's standard output and error.
func New(c Command, cols, rows int, out, errOut io.Writer) *Writer {
	return &Writer{out: out, errOut: errOut, cmd: c, cols: cols, rows: rows, interruptDone: make(chan struct{})}
}

// Write writes p to standard output: held while the output fits the
// screen, into the pager once it does not. Once the pager stopped
// reading, it returns ErrClosed.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch w.state {
	case direct:
		return w.out.Write(p)
	case quit:
		return 0, ErrClosed
	case paging:
		return w.toPager(p)
	}
	w.held = append(w.held, chunk{b: append([]byte(nil), p...)})
	if !w.count(p) {
		return len(p), nil
	}
	if w.BeforePaging != nil {
		w.BeforePaging()
	}
	proc, err := start(w.cmd, w.out, w.errOut)
	if err != nil {
		if w.StartFailed != nil {
			w.StartFailed(w.cmd, err)
		}
		w.state = direct
		if err := w.flush(); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	w.proc.Store(proc)
	w.state = paging
	var stderr []chunk
	for _, c := range w.held {
		if c.stderr {
			stderr = append(stderr, c)
		} else if _, err := w.toPager(c.b); err != nil {
			break
		}
	}
	w.held = stderr
	if w.state == quit {
		return 0, ErrClosed
	}
	return len(p), nil
}

// toPager writes p into the pager; a pager that stopped reading (a
// broken pipe, a pipe closed by Interrupt) is ErrClosed, never a
// broken-pipe error.
func (w *Writer) toPager(p []byte) (int, error) {
	n, err := w.proc.Load().in.Write(p)
	if err != nil {
		w.state = quit
		return n, ErrClosed
	}
	return n, nil
}

// count adds p to the screen lines the held output takes, as a terminal
// of w.cols columns shows it (a long line wraps), and reports whether it
// no longer fits the screen with the shell's prompt under it.
func (w *Writer) count(p []byte) bool {
	for len(p) > 0 {
		r, n := utf8.DecodeRune(p)
		p = p[n:]
		switch r {
		case '\n':
			w.lines, w.col = w.lines+1, 0
		case '\r':
			w.col = 0
		default:
			width := runewidth.RuneWidth(r)
			if r == '\t' {
				width = 8 - w.col%8
			}
			if w.col+width > w.cols {
				w.lines, w.col = w.lines+1, 0
			}
			w.col += width
		}
		if w.lines >= w.rows {
			return true
		}
	}
	return false
}

// flush writes what was held to the terminal, each part to its stream,
// in the order written.
func (w *Writer) flush() error {
	held := w.held
	w.held = nil
	var first error
	for _, c := range held {
		to := w.out
		if c.stderr {
			to = w.errOut
		}
		if _, err := to.Write(c.b); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Stderr returns standard error while w stands for standard output: held
// with the output while it may still be paged, held until the pager exits
// while it runs, written at once otherwise.
func (w *Writer) Stderr() io.Writer { return stderrWriter{w} }

type stderrWriter struct{ w *Writer }

func (s stderrWriter) Write(p []byte) (int, error) {
	w := s.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state == paging || w.state == quit || (w.state == deciding && len(w.held) > 0) {
		w.held = append(w.held, chunk{stderr: true, b: append([]byte(nil), p...)})
		return len(p), nil
	}
	return w.errOut.Write(p)
}

// Paging reports whether the pager was started.
func (w *Writer) Paging() bool { return w.proc.Load() != nil }

// Close ends the output: what was held is written to the terminal, or
// the pager's input is closed and Close waits for the reader to quit it,
// then writes what standard error held. What is written after Close goes
// to the terminal at once (a question asked after a paged plan). It
// returns a *RunError when the shell could not run the pager, and
// ErrInterrupted when Ctrl-C stopped the output (Interrupt).
func (w *Writer) Close() error {
	w.mu.Lock()
	st := w.state
	w.state = direct
	if st == deciding {
		defer w.mu.Unlock()
		return w.flush()
	}
	proc := w.proc.Load()
	if proc == nil || (st != paging && st != quit) {
		w.mu.Unlock()
		return nil
	}
	w.mu.Unlock()
	_ = proc.in.Close()
	<-proc.done
	if w.interrupted.Load() {
		<-w.interruptDone
		return ErrInterrupted
	}
	w.mu.Lock()
	err := w.flush()
	w.mu.Unlock()
	var exit *exec.ExitError
	if w.cmd.Args == nil && errors.As(proc.err, &exit) && (exit.ExitCode() == 126 || exit.ExitCode() == 127) {
		return &RunError{Command: w.cmd, Err: proc.err}
	}
	return err
}

// Interrupt is Ctrl-C while the pager runs: the output stops (the
// pager's input is closed; the command's next write returns ErrClosed),
// and Interrupt waits for the reader to quit the pager, writes what
// standard error held, calls after and returns true. With no pager
// running it does nothing and returns false. Close, meanwhile, waits for
// it and returns ErrInterrupted.
func (w *Writer) Interrupt(after func()) bool {
	proc := w.proc.Load()
	if proc == nil || !w.interrupted.CompareAndSwap(false, true) {
		return false
	}
	_ = proc.in.Close()
	<-proc.done
	w.mu.Lock()
	_ = w.flush()
	w.mu.Unlock()
	if after != nil {
		after()
	}
	close(w.interruptDone)
	return true
}
