package commands

import (
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/progress"
)

// progressFlags hold --progress and the meter it gives the command that
// runs (nil: no progress is shown).
type progressFlags struct {
	Mode  string
	meter *progress.Meter
}

// progressIntervalEnv sets how often progress is sampled (a Go duration;
// tests make it short). Not documented for people: --progress is.
const progressIntervalEnv = "CPACTL_PROGRESS_INTERVAL"

// largeFile is the size from which reading an LDIF file (--from, the FILE
// of diff and apply) shows progress: smaller ones read in well under a
// second.
var largeFile int64 = 8 << 20

func (g *Globals) addProgressFlag(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVar(&g.progress.Mode, "progress", string(progress.Auto),
		"progress of long work on stderr: auto (a bar when stderr is a terminal), plain (a line every 2s) or none")
}

// startProgress decides, once the command is known, whether and how it
// shows progress: never with -o json or -o yaml (a script reads the
// output); with auto, a bar only when stderr is a terminal; with plain,
// lines whatever stderr is.
func (g *Globals) startProgress(cmd *cobra.Command) error {
	mode, err := progress.ParseMode(g.progress.Mode)
	if err != nil {
		return errorf("", "--progress: %v", err)
	}
	g.progress.meter = nil
	if f := cmd.Flags().Lookup("output"); f != nil {
		if v := strings.ToLower(f.Value.String()); v == "json" || v == "yaml" {
			return nil
		}
	}
	var interval time.Duration
	if v := g.Getenv(progressIntervalEnv); v != "" {
		interval, _ = time.ParseDuration(v)
	}
	label := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
	switch {
	case mode == progress.Plain:
		g.progress.meter = progress.New(g.IO.Err, label, false, interval)
	case mode == progress.Auto && isTerminal(g.IO.Err):
		g.progress.meter = progress.New(g.IO.Err, label, true, interval)
	}
	return nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// track shows, as one stage of the command's progress, the entries st
// reads and the writes it sends, until the function it returns is called;
// what names the stage ("reading"), unit what is counted and total how
// many there will be (0: unknown). One line for a long command:
//
//	defer o.g.track(st, "reading", "entries", 0)()
func (g *Globals) track(st *directory.Store, what, unit string, total int64) func() {
	m := g.progress.meter
	if m == nil {
		return func() {}
	}
	st.Progress = m.Stage(what, unit, total)
	return func() {
		st.Progress = nil
		m.End()
	}
}

// stage starts a stage of the command's progress for work that is not
// the directory's (impact's requests compared): what names it, unit what
// is counted and total how many (0: unknown). It returns what counts the
// units done (safe for concurrent use); the stage ends at the next one,
// or with endProgress.
func (g *Globals) stage(what, unit string, total int64) func(int64) {
	m := g.progress.meter
	if m == nil {
		return func(int64) {}
	}
	return m.Stage(what, unit, total).Add
}

// endProgress ends the stage in progress, if any: a bar is erased.
func (g *Globals) endProgress() { g.progress.meter.End() }

// loadSnapshot reads an LDIF file, showing the bytes read as a stage of
// the command's progress when the file is large.
func (g *Globals) loadSnapshot(path string) (*snapshot.Snapshot, error) {
	m := g.progress.meter
	size := snapshot.FileSize(path)
	if m == nil || (size < largeFile && path != "-") {
		return snapshot.LoadSnapshot(path)
	}
	defer m.End()
	return snapshot.LoadSnapshotCounting(path, m.Stage("reading "+path, "bytes", size))
}
