package progress

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for the meter's goroutine.
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

func TestNilMeterCountsNothing(t *testing.T) {
	var m *Meter
	c := m.Stage("reading", "entries", 0)
	if c != nil {
		t.Fatal("a nil meter hands out a counter")
	}
	c.Add(3)
	if c.Value() != 0 {
		t.Fatal("a nil counter counts")
	}
	m.End()
}

func TestPlainLines(t *testing.T) {
	var out lockedBuffer
	m := New(&out, "export", false, time.Millisecond)
	c := m.Stage("reading", "entries", 0)
	c.Add(120)
	time.Sleep(20 * time.Millisecond)
	w := m.Stage("writing", "writes", 10)
	w.Add(4)
	m.End()
	m.End() // no stage: nothing
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	periodic := regexp.MustCompile(`^export: reading: 120 entries, 0 s$`)
	if !periodic.MatchString(lines[0]) {
		t.Errorf("first line %q", lines[0])
	}
	want := []string{"export: reading: 120 entries, 0 s (done)", "export: writing: 4/10 writes, 0 s (done)"}
	var done []string
	for _, l := range lines {
		if strings.HasSuffix(l, "(done)") {
			done = append(done, l)
		}
	}
	if strings.Join(done, "\n") != strings.Join(want, "\n") {
		t.Errorf("stage ends:\n%s\nwant:\n%s", strings.Join(done, "\n"), strings.Join(want, "\n"))
	}
}

func TestBytesInMegabytes(t *testing.T) {
	var out lockedBuffer
	m := New(&out, "diff", false, time.Hour)
	m.Stage("reading big.ldif", "bytes", 3<<20).Add(3 << 19)
	m.End()
	if got, want := out.String(), "diff: reading big.ldif: 1.5/3.0 MB, 0 s (done)\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestParseMode(t *testing.T) {
	for _, s := range []string{"auto", "PLAIN", "none"} {
		if _, err := ParseMode(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	if _, err := ParseMode("bar"); err == nil {
		t.Error("bar accepted")
	}
}

// BenchmarkCounter: what an entry costs the reader, with progress off (a
// nil counter) and on (an atomic add).
func BenchmarkCounter(b *testing.B) {
	b.Run("off", func(b *testing.B) {
		var c *Counter
		for b.Loop() {
			c.Add(1)
		}
	})
	b.Run("on", func(b *testing.B) {
		c := &Counter{}
		for b.Loop() {
			c.Add(1)
		}
	})
}

// TestBarEndsClean: a bar, spinner (total unknown) or not, is erased when
// its stage ends, and nothing is drawn after: what the command prints next
// starts on a clean line. (The bar library redraws a spinner on its own
// every 100 ms until told the bar is finished, which Exit does not: the
// spinner came back over the command's output.)
func TestBarEndsClean(t *testing.T) {
	for _, total := range []int64{0, 10} {
		var out lockedBuffer
		m := New(&out, "lint", true, time.Millisecond)
		c := m.Stage("reading", "entries", total)
		c.Add(4)
		time.Sleep(20 * time.Millisecond)
		m.End()
		ended := out.String()
		if !strings.HasSuffix(ended, "\x1b[2K\r") {
			t.Errorf("total %d: the bar is not erased when its stage ends: %q", total, tail(ended))
		}
		// Several of the library's redraw intervals: nothing may come.
		time.Sleep(500 * time.Millisecond)
		if got := out.String(); got != ended {
			t.Errorf("total %d: drawn after its stage ended: %q", total, got[len(ended):])
		}
	}
}

func tail(s string) string {
	if len(s) > 120 {
		return "..." + s[len(s)-120:]
	}
	return s
}

// TestPlainTimeLeft: a plain line of a stage with a total says the time
// left at the pace so far; not before anything is done, not once all is,
// not without a total, and not on the stage's last line.
func TestPlainTimeLeft(t *testing.T) {
	for _, c := range []struct {
		n, total int64
		elapsed  time.Duration
		left     time.Duration
		ok       bool
	}{
		{n: 0, total: 100, elapsed: time.Second},
		{n: 25, total: 100, elapsed: 10 * time.Second, left: 30 * time.Second, ok: true},
		{n: 99, total: 100, elapsed: 99 * time.Second, left: time.Second, ok: true},
		{n: 100, total: 100, elapsed: time.Second},
		{n: 25, total: 0, elapsed: time.Second},
	} {
		left, ok := timeLeft(c.n, c.total, c.elapsed)
		if left != c.left || ok != c.ok {
			t.Errorf("%d of %d in %s: %s, %t; want %s, %t", c.n, c.total, c.elapsed, left, ok, c.left, c.ok)
		}
	}
	var out lockedBuffer
	m := New(&out, "impact", false, time.Millisecond)
	m.Stage("comparing", "requests", 1000).Add(1)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "left") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	m.End()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if !regexp.MustCompile(`^impact: comparing: 1/1000 requests, \d+ s, about \d+ s left$`).MatchString(lines[0]) {
		t.Errorf("periodic line %q", lines[0])
	}
	if last := lines[len(lines)-1]; !regexp.MustCompile(`^impact: comparing: 1/1000 requests, \d+ s \(done\)$`).MatchString(last) {
		t.Errorf("last line %q", last)
	}
}

// TestLinesEraseTheBar: a line written while a bar is drawn starts on a
// clean line, and the bar comes back below it.
func TestLinesEraseTheBar(t *testing.T) {
	var out lockedBuffer
	m := New(&out, "horizon pull", true, time.Millisecond)
	m.Stage("reading", "records", 0).Add(3)
	w := m.Lines(&out)
	for !strings.Contains(out.String(), "reading") {
		time.Sleep(time.Millisecond)
	}
	if _, err := w.Write([]byte("note: pod uk-pod-1 answers slowly\n")); err != nil {
		t.Fatal(err)
	}
	before := len(out.String())
	for len(out.String()) == before {
		time.Sleep(time.Millisecond)
	}
	m.End()
	got := out.String()
	i := strings.Index(got, "note:")
	if !strings.HasSuffix(got[:i], "\x1b[2K\r") {
		t.Errorf("the note does not start on a clean line: %q", tail(got[:i]))
	}
	if !strings.Contains(got[i:], "reading") {
		t.Errorf("the bar is not drawn again after the note: %q", got[i:])
	}
	if m := (*Meter)(nil); m.Lines(&out) != &out {
		t.Error("a nil meter's Lines is not the stream itself")
	}
}
