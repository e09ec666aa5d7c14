// Package nearest finds, among the names cpactl knows, the one a mistyped
// name most likely meant, for the "did you mean" of an error: `site show
// Indai` (India), `--entitlement "Sales Desktop"` (Sales Desktops), the
// setting LoadThresholdForSite (pae-LoadThresholdForSite), the LDIF
// attribute pae-PreferedSite (pae-PreferredSite).
package nearest

import (
	"strings"
	"unicode/utf8"

	"github.com/cpactl/cpactl/internal/fold"
	"github.com/cpactl/cpactl/quote"
)

// maxRunes bounds the names compared: a longer name (or candidate) is
// skipped, so that one comparison costs at most maxRunes² steps.
const maxRunes = 256

// Finder keeps the best candidate seen so far for one mistyped name, so
// that the candidates can be streamed (a search's entries as they come):
// memory O(length of the name), time O(candidates × length²).
type Finder struct {
	given []rune // folded
	key   string // fold.Key of the given name
	limit int    // the most edits a candidate may be away

	best      string
	bestScore int
	bestKey   string
	found     bool

	prev, cur, prev2 []int // rows of the distance table, reused
}

// New returns a Finder for the name as given.
func New(given string) *Finder {
	key := fold.Key(given)
	n := utf8.RuneCountInString(key)
	return &Finder{given: []rune(key), key: key, limit: min(max(n/3, 1), 3)}
}

// Add offers one candidate name. A candidate equal to the given name (as
// EqualFold compares) is skipped: it is not a different name.
func (f *Finder) Add(candidate string) {
	if candidate == "" || len(f.given) == 0 || utf8.RuneCountInString(candidate) > maxRunes || len(f.given) > maxRunes {
		return
	}
	key := fold.Key(candidate)
	if key == f.key {
		return
	}
	score, ok := f.score(key)
	if !ok {
		return
	}
	if !f.found || score < f.bestScore || (score == f.bestScore && key < f.bestKey) {
		f.best, f.bestScore, f.bestKey, f.found = candidate, score, key, true
	}
}

// score is the optimal-string-alignment distance (insertions, deletions,
// substitutions and swaps of two neighbours) between the given name and
// key, when it is within the limit; a name one holds whole in the other
// (LoadThresholdForSite in pae-LoadThresholdForSite), when it is at least
// 4 runes, is accepted at its distance too.
func (f *Finder) score(key string) (int, bool) {
	c := []rune(key)
	contained := len(f.given) >= 4 && len(c) >= 4 && (strings.Contains(key, f.key) || strings.Contains(f.key, key))
	if d := len(c) - len(f.given); !contained && (d > f.limit || -d > f.limit) {
		return 0, false
	}
	d := f.distance(c)
	return d, d <= f.limit || contained
}

func (f *Finder) distance(c []rune) int {
	a := f.given
	width := len(c) + 1
	if cap(f.prev) < width {
		f.prev, f.cur, f.prev2 = make([]int, width), make([]int, width), make([]int, width)
	}
	prev2, prev, cur := f.prev2[:width], f.prev[:width], f.cur[:width]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(c); j++ {
			cost := 1
			if a[i-1] == c[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == c[j-2] && a[i-2] == c[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
		}
		prev2, prev, cur = prev, cur, prev2
	}
	f.prev2, f.prev, f.cur = prev2, prev, cur
	return prev[len(c)]
}

// Best returns the nearest candidate offered, and whether there was one
// within reach. Of candidates at the same distance, the first in
// case-insensitive order wins, whatever order they came in.
func (f *Finder) Best() (string, bool) { return f.best, f.found }

// Of returns the candidate of names nearest to given, or "" when none is
// near enough.
func Of(given string, names []string) string {
	f := New(given)
	for _, n := range names {
		f.Add(n)
	}
	best, _ := f.Best()
	return best
}

// Hint is the "did you mean" hint for a suggestion: `did you mean
// "India"?`, or "" when there is none.
func Hint(suggestion string) string {
	if suggestion == "" {
		return ""
	}
	return "did you mean " + quote.Name(suggestion) + "?"
}
