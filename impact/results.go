package impact

// What a decision comes to, and how two decisions differ.

import (
	"sort"
	"strings"

	"github.com/cpactl/cpactl/broker"
)

// result reads the outcome and placement of a decision.
func result(d *broker.Decision) Result {
	r := Result{Outcome: d.Outcome, Reason: d.Reason}
	if p := d.Placement; p != nil {
		r.Site, r.Pod, r.Pool, r.Farm, r.Host, r.Machine, r.Session = p.Site, p.Pod, p.Pool, p.Farm, p.Host, p.Machine, p.Session
	}
	return r
}

// named replaces the placeholder by the user's name.
func named(r Result, rep *namer) Result {
	if rep != nil {
		r.Reason, r.Session = rep.Replace(r.Reason), rep.Replace(r.Session)
	}
	return r
}

// firstDifference finds the first trace step where two decisions differ,
// the request's echo aside. It walks both traces side by side, comparing
// the steps as the broker does (broker.SameTraceStep: a lazily traced
// step is formatted only when its format or arguments differ), and keeps
// only the two lines it returns.
func firstDifference(dec [2]*broker.Decision) Difference {
	var n [2]int
	for i, d := range dec {
		if d != nil {
			n[i] = len(d.Trace)
		}
	}
	// next returns the index of the first step of side si at or after k
	// that is not the request's echo, n[si] when none.
	next := func(si, k int) int {
		for k < n[si] && dec[si].Trace[k].Step == "request" {
			k++
		}
		return k
	}
	i, j := next(0, 0), next(1, 0)
	for i < n[0] && j < n[1] && broker.SameTraceStep(dec[0], i, dec[1], j) {
		i, j = next(0, i+1), next(1, j+1)
	}
	var diff Difference
	if i < n[0] {
		diff.Before = &TraceLine{Number: i + 1, Step: dec[0].Trace[i].Step, Message: dec[0].TraceMessage(i)}
	}
	if j < n[1] {
		diff.After = &TraceLine{Number: j + 1, Step: dec[1].Trace[j].Step, Message: dec[1].TraceMessage(j)}
	}
	return diff
}

// namer puts a member's names in the texts of its class's decisions:
// its name for the placeholder, and its session IDs for the session
// placeholders (sessionPlaceholder), by rank.
type namer struct {
	name string
	ids  []string
	tx   *texts // the texts it gives are interned there (nil: not)
}

// Replace replaces every placeholder in s, left to right, as a
// strings.Replacer of the pairs (placeholder, name) and
// (sessionPlaceholder(r), ids[r]) would (placeholders start with a NUL,
// which no name holds; the text put in is not read again).
func (n *namer) Replace(s string) string {
	i := strings.IndexByte(s, 0)
	if i < 0 {
		return n.tx.text(s)
	}
	var b strings.Builder
	b.Grow(len(s) + len(n.name))
	for i >= 0 {
		b.WriteString(s[:i])
		s = s[i:]
		if strings.HasPrefix(s, placeholder) {
			b.WriteString(n.name)
			s = s[len(placeholder):]
		} else if r, l := sessionRank(s); r >= 0 && r < len(n.ids) {
			b.WriteString(n.ids[r])
			s = s[l:]
		} else {
			b.WriteByte(0)
			s = s[1:]
		}
		i = strings.IndexByte(s, 0)
	}
	b.WriteString(s)
	return n.tx.text(b.String())
}

// texts interns the texts of one GE's moves: a member's moves from every
// connecting point mostly say the same, and share one copy of each text
// and of each first differing step.
type texts struct {
	s     map[string]string
	lines map[TraceLine]*TraceLine
}

func newTexts() *texts {
	return &texts{s: map[string]string{}, lines: map[TraceLine]*TraceLine{}}
}

// text returns the interned copy of s (s itself for nil texts).
func (tx *texts) text(s string) string {
	if tx == nil {
		return s
	}
	if t, ok := tx.s[s]; ok {
		return t
	}
	tx.s[s] = s
	return s
}

// named returns line l (nil: none) with the member's names put in by
// n (nil: as it is), interned: the copy already made when one says the
// same (a new one for nil texts).
func (tx *texts) named(l *TraceLine, n *namer) *TraceLine {
	if l == nil {
		return nil
	}
	v := *l
	if n != nil {
		v.Message = n.Replace(v.Message)
	}
	if tx == nil {
		return &v
	}
	if t, ok := tx.lines[v]; ok {
		return t
	}
	t := &v
	tx.lines[v] = t
	return t
}

// sessionRank reads the session placeholder s starts with: its rank and
// length, or -1 when s starts with none.
func sessionRank(s string) (rank, length int) {
	const prefix = "\x00session"
	if !strings.HasPrefix(s, prefix) {
		return -1, 0
	}
	end := strings.IndexByte(s[len(prefix):], 0)
	if end < 6 || end > 9 {
		return -1, 0
	}
	digits := s[len(prefix) : len(prefix)+end]
	r := 0
	for _, c := range []byte(digits) {
		if c < '0' || c > '9' {
			return -1, 0
		}
		r = r*10 + int(c-'0')
	}
	if p := sessionPlaceholder(r); s[:len(prefix)+end+1] != p {
		return -1, 0 // not as sessionPlaceholder writes it (a leading zero too many)
	}
	return r, len(prefix) + end + 1
}

// counts lists a tally in name order of from, then to.
func counts(m map[[2]string]int) []Count {
	out := []Count{}
	for k, n := range m {
		out = append(out, Count{From: k[0], To: k[1], Requests: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].From != out[j].From {
			return nameLess(out[i].From, out[j].From)
		}
		return nameLess(out[i].To, out[j].To)
	})
	return out
}
