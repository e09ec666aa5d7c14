// Package progress shows how far a long command has got, on stderr: a bar
// on a terminal, plain periodic lines for logs (--progress=plain), or
// nothing.
//
// The work counts into a Counter (an atomic integer; a nil Counter counts
// nothing) and a Meter samples it on a ticker: counting costs one atomic
// add per entry when progress is shown and one nil test when it is not,
// with no allocation and no lock on the counting side.
package progress

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Mode is how progress is shown: the values of --progress.
type Mode string

// The modes.
const (
	Auto  Mode = "auto"  // a bar when stderr is a terminal, else nothing
	Plain Mode = "plain" // a line every interval, and one when each stage ends
	None  Mode = "none"  // nothing
)

// Modes are the values of --progress, as help names them: what ParseMode
// accepts and shell completion offers.
var Modes = []Mode{Auto, Plain, None}

// ParseMode validates the value of --progress.
func ParseMode(s string) (Mode, error) {
	if m := Mode(strings.ToLower(s)); slices.Contains(Modes, m) {
		return m, nil
	}
	return "", fmt.Errorf("unknown progress mode %q: use auto, plain or none", s)
}

// DefaultInterval is how often plain lines are printed.
const DefaultInterval = 2 * time.Second

// barInterval is how often a bar is redrawn.
const barInterval = 150 * time.Millisecond

// Counter counts the units of work of one stage. It is safe for concurrent
// use; a nil *Counter counts nothing.
type Counter struct{ n atomic.Int64 }

// Add counts n more units.
func (c *Counter) Add(n int64) {
	if c != nil {
		c.n.Add(n)
	}
}

// Value is the count so far (0 for a nil Counter).
func (c *Counter) Value() int64 {
	if c == nil {
		return 0
	}
	return c.n.Load()
}

// Meter shows the stages of one command's work on one stream. A nil
// *Meter shows nothing and hands out nil Counters.
type Meter struct {
	w     io.Writer
	label string // the command, "export"
	bar   bool
	every time.Duration

	mu  sync.Mutex
	cur *stage
}

// New returns a Meter that writes to w, prefixing every line with label:
// a bar when bar is set, else a plain line every interval (DefaultInterval
// when 0).
func New(w io.Writer, label string, bar bool, interval time.Duration) *Meter {
	if interval <= 0 {
		interval = DefaultInterval
		if bar {
			interval = barInterval
		}
	}
	return &Meter{w: w, label: label, bar: bar, every: interval}
}

// stage is one stretch of counted work.
type stage struct {
	name, unit string
	total      int64 // 0: unknown
	count      Counter
	start      time.Time
	stop, done chan struct{}
	bar        *progressbar.ProgressBar
	screen     *screen // what the bar draws through
}

// screen is the stream as a bar draws on it: it knows whether the bar is
// on the current line, and once closed lets nothing of the bar through.
// The bar library may draw from its own goroutine (a spinner redraws
// itself on a timer until the bar is finished, which Exit does not do):
// closing the screen, not the library, is what guarantees that nothing of
// a bar is drawn after its stage ends, over what the command prints next.
type screen struct {
	mu     sync.Mutex
	w      io.Writer
	drawn  bool // the bar is on the current line
	closed bool
}

// Write draws the bar, unless the screen is closed.
func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return len(p), nil
	}
	s.drawn = true
	return s.w.Write(p)
}

// erase clears the line the bar is on ("\x1b[2K\r": the cursor back at
// its start) and, with close, closes the screen.
func (s *screen) erase(close bool) {
	if s.drawn && !s.closed {
		_, _ = io.WriteString(s.w, "\x1b[2K\r")
	}
	s.drawn = false
	s.closed = s.closed || close
}

// Stage ends the stage in progress, if any, and starts one: name says what
// is done ("reading", "writing federation.ldif"), unit what is counted
// ("entries", "writes", or "bytes", shown in MB), total how many there are
// (0 when unknown). The work adds to the Counter returned (nil when m is
// nil).
func (m *Meter) Stage(name, unit string, total int64) *Counter {
	if m == nil {
		return nil
	}
	m.End()
	s := &stage{name: name, unit: unit, total: total, start: time.Now(),
		stop: make(chan struct{}), done: make(chan struct{})}
	if m.bar {
		s.screen = &screen{w: m.w}
		s.bar = m.newBar(s)
	}
	m.mu.Lock()
	m.cur = s
	m.mu.Unlock()
	go m.tick(s)
	return &s.count
}

// End ends the stage in progress: a plain meter prints its last line, a
// bar is erased and never drawn again, so that what the command prints
// next starts on a clean line. End on a nil Meter, or with no stage,
// does nothing.
func (m *Meter) End() {
	if m == nil {
		return
	}
	m.mu.Lock()
	s := m.cur
	m.cur = nil
	m.mu.Unlock()
	if s == nil {
		return
	}
	close(s.stop)
	<-s.done
	if s.bar != nil {
		s.screen.mu.Lock()
		s.screen.erase(true)
		s.screen.mu.Unlock()
		_ = s.bar.Exit()
		return
	}
	fmt.Fprintf(m.w, "%s (done)\n", m.line(s, true))
}

// Lines returns a writer for the lines a command writes to the meter's
// stream while a stage may be drawn (a note as the work goes on): a bar
// is erased before each write, and drawn again below it at its next tick.
// On a nil Meter, or one that draws no bar, it is w itself.
func (m *Meter) Lines(w io.Writer) io.Writer {
	if m == nil || !m.bar {
		return w
	}
	return lines{m: m, w: w}
}

type lines struct {
	m *Meter
	w io.Writer
}

func (l lines) Write(p []byte) (int, error) {
	l.m.mu.Lock()
	s := l.m.cur
	l.m.mu.Unlock()
	if s == nil || s.screen == nil {
		return l.w.Write(p)
	}
	s.screen.mu.Lock()
	defer s.screen.mu.Unlock()
	s.screen.erase(false)
	return l.w.Write(p)
}

// tick samples the stage's counter until it ends.
func (m *Meter) tick(s *stage) {
	defer close(s.done)
	t := time.NewTicker(m.every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			if s.bar != nil {
				_ = s.bar.Set64(s.count.Value())
			} else {
				fmt.Fprintln(m.w, m.line(s, false))
			}
		}
	}
}

// line is a plain line: "export: reading: 120000 entries, 12 s", with the
// time left when the total is known ("impact: comparing: 120/360
// requests, 4 s, about 8 s left"), but on the line of a stage done.
func (m *Meter) line(s *stage, done bool) string {
	n := s.count.Value()
	var amount string
	switch {
	case s.unit == "bytes" && s.total > 0:
		amount = fmt.Sprintf("%s/%s MB", megabytes(n), megabytes(s.total))
	case s.unit == "bytes":
		amount = megabytes(n) + " MB"
	case s.total > 0:
		amount = fmt.Sprintf("%d/%d %s", n, s.total, s.unit)
	default:
		amount = fmt.Sprintf("%d %s", n, s.unit)
	}
	elapsed := time.Since(s.start)
	line := fmt.Sprintf("%s: %s: %s, %d s", m.label, s.name, amount, int(elapsed.Seconds()))
	if left, ok := timeLeft(n, s.total, elapsed); ok && !done {
		line += fmt.Sprintf(", about %d s left", int(left.Round(time.Second).Seconds()))
	}
	return line
}

// timeLeft estimates the time the rest of a stage takes at the pace so
// far: n of total done in elapsed. ok is false until something is done,
// once all is, and when the total is unknown.
func timeLeft(n, total int64, elapsed time.Duration) (time.Duration, bool) {
	if n <= 0 || total <= 0 || n >= total {
		return 0, false
	}
	return time.Duration(float64(elapsed) * float64(total-n) / float64(n)), true
}

func megabytes(n int64) string { return fmt.Sprintf("%.1f", float64(n)/(1<<20)) }

// newBar draws the stage's bar (a spinner when the total is unknown).
func (m *Meter) newBar(s *stage) *progressbar.ProgressBar {
	total := s.total
	if total <= 0 {
		total = -1
	}
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(s.screen),
		// No timer of the library's own: the meter's ticker draws it.
		progressbar.OptionSetSpinnerChangeInterval(0),
		progressbar.OptionSetDescription(m.label + ": " + s.name),
		progressbar.OptionSetWidth(30),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(s.total > 0),
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionUseANSICodes(true),
	}
	if s.unit == "bytes" {
		opts = append(opts, progressbar.OptionShowBytes(true))
	} else {
		opts = append(opts, progressbar.OptionShowCount(), progressbar.OptionSetItsString(s.unit))
	}
	return progressbar.NewOptions64(total, opts...)
}

// Reader counts the bytes read through it.
type Reader struct {
	R     io.Reader
	Count *Counter
}

// Read implements io.Reader.
func (r *Reader) Read(p []byte) (int, error) {
	n, err := r.R.Read(p)
	r.Count.Add(int64(n))
	return n, err
}
