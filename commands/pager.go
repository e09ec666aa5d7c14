package commands

import (
	"os/exec"
	"sync/atomic"

	"github.com/cpactl/cpactl/internal/pager"
	"github.com/cpactl/cpactl/output"
	"github.com/cpactl/cpactl/quote"
)

// paging is the pager of the command in progress, for Interrupted: Ctrl-C
// while it runs waits for it to exit (main runs one command at a time).
var paging atomic.Pointer[pager.Writer]

// startPager makes standard output a pager.Writer for a read command, when
// it may be paged: stdout is a terminal (Globals.Stdout), --no-pager is
// not given and a pager is chosen (pager.Choose: CPACTL_PAGER, PAGER,
// less). Nothing starts until the output is longer than the screen.
// Called by readFlags.printer, once per command.
func (g *Globals) startPager() {
	if g.pager != nil || g.NoPager || g.Stdout == nil {
		return
	}
	cols, rows, ok := g.Stdout.Size()
	if !ok {
		return
	}
	c, ok := pager.Choose(false, g.lookupEnv, exec.LookPath)
	if !ok {
		return
	}
	w := pager.New(c, cols, rows, g.IO.Out, g.IO.Err)
	// Nothing else draws on the terminal while the pager does: a progress
	// bar still shown is erased, and no further one starts.
	w.BeforePaging = func() {
		g.endProgress()
		g.progress.meter = nil
	}
	errOut := g.IO.Err
	w.StartFailed = func(c pager.Command, err error) {
		output.Fprintf(errOut, "warning: the pager %s (%s) could not be started (%v): writing without it\nhint: set CPACTL_PAGER or PAGER to a pager on PATH, or pass --no-pager\n",
			quote.Name(c.Line), c.From, err)
	}
	g.pager = w
	g.IO.Out, g.IO.Err = w, w.Stderr()
	paging.Store(w)
}

// closePager ends a paged command's output (pager.Writer.Close): what was
// held is written, or cpactl waits for the reader to quit the pager. Main
// calls it before it prints an error; a question calls it first too
// (pagedFirst), so that it is never asked under the pager. The first
// error it met is returned, then and at every later call.
func (g *Globals) closePager() error {
	w := g.pager
	if w == nil {
		return nil
	}
	if err := w.Close(); err != nil && g.pagerErr == nil {
		g.pagerErr = err
	}
	paging.CompareAndSwap(w, nil)
	return g.pagerErr
}

// pagedFirst is interactive (Globals.Interactive: may cpactl ask?) once
// the output before the question is paged or written: a question is
// never asked under the pager, and what follows it goes to the terminal.
func (g *Globals) pagedFirst(interactive func() bool) func() bool {
	return func() bool {
		_ = g.closePager() // Main reports its error
		return interactive()
	}
}

// lookupEnv is os.LookupEnv, or Getenv's non-empty values when a test
// replaced only Getenv.
func (g *Globals) lookupEnv(name string) (string, bool) {
	if g.LookupEnv != nil {
		return g.LookupEnv(name)
	}
	v := g.Getenv(name)
	return v, v != ""
}
