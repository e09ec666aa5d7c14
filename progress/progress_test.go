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
