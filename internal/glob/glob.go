// Package glob matches names against shell patterns, as `--name 'lon-*'`
// of cpactl's lists takes them: `*` any run of characters (none
// included), `?` one character, `[abc]`, `[a-z]` and `[!a-z]` (or `[^a-z]`)
// one character of (or not of) a set, and `\` before a character to take
// it as it is. A pattern matches a whole name, without regard to case, as
// the directory compares names. Unlike path.Match, `/` is a character like
// any other: names hold it.
package glob

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A Pattern is a parsed pattern.
type Pattern struct {
	text  string
	items []item
}

// item is one element of a pattern: a literal rune, one of any rune (?),
// any run (*), or a set.
type item struct {
	kind   itemKind
	r      rune // literal
	ranges []runeRange
	negate bool
}

type itemKind uint8

const (
	literal itemKind = iota
	anyOne
	anyRun
	set
)

type runeRange struct{ lo, hi rune }

// Error is a pattern that does not parse.
type Error struct {
	Pattern string
	Problem string
}

func (e *Error) Error() string { return fmt.Sprintf("pattern %q: %s", e.Pattern, e.Problem) }

// Parse parses a pattern; one that does not parse is an *Error.
func Parse(pattern string) (*Pattern, error) {
	if !utf8.ValidString(pattern) {
		return nil, &Error{pattern, "it is not UTF-8"}
	}
	p := &Pattern{text: pattern}
	rs := []rune(pattern)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; r {
		case '*':
			if n := len(p.items); n == 0 || p.items[n-1].kind != anyRun {
				p.items = append(p.items, item{kind: anyRun})
			}
		case '?':
			p.items = append(p.items, item{kind: anyOne})
		case '\\':
			if i+1 == len(rs) {
				return nil, &Error{pattern, `it ends with \ (write \\ for a backslash)`}
			}
			i++
			p.items = append(p.items, item{kind: literal, r: rs[i]})
		case '[':
			it, next, err := parseSet(rs, i+1)
			if err != nil {
				return nil, &Error{pattern, err.Error()}
			}
			p.items = append(p.items, it)
			i = next
		default:
			p.items = append(p.items, item{kind: literal, r: r})
		}
	}
	return p, nil
}

// parseSet parses a set whose first rune after "[" is at i; it returns the
// set and the index of its closing "]".
func parseSet(rs []rune, i int) (item, int, error) {
	it := item{kind: set}
	if i < len(rs) && (rs[i] == '!' || rs[i] == '^') {
		it.negate = true
		i++
	}
	first := true
	for ; i < len(rs); i++ {
		r := rs[i]
		if r == ']' && !first {
			return it, i, nil
		}
		first = false
		if r == '\\' {
			if i+1 == len(rs) {
				break
			}
			i++
			r = rs[i]
		}
		lo, hi := r, r
		if i+2 < len(rs) && rs[i+1] == '-' && rs[i+2] != ']' {
			hi = rs[i+2]
			i += 2
			if hi == '\\' {
				if i+1 == len(rs) {
					break
				}
				i++
				hi = rs[i]
			}
			if hi < lo {
				return it, 0, fmt.Errorf("the range %c-%c runs backwards", lo, hi)
			}
		}
		it.ranges = append(it.ranges, runeRange{lo, hi})
	}
	return it, 0, errors.New("a [ is not closed by ] (write \\[ for a bracket)")
}

// String returns the pattern as given.
func (p *Pattern) String() string { return p.text }

// Literal returns the name the pattern matches when it holds no wildcard
// (`*`, `?` or a set), and whether it holds none.
func (p *Pattern) Literal() (string, bool) {
	var b strings.Builder
	for _, it := range p.items {
		if it.kind != literal {
			return "", false
		}
		b.WriteRune(it.r)
	}
	return b.String(), true
}

// Literals returns the runs of literal characters around the wildcards,
// for a coarser search that finds a superset of the matches (an LDAP
// substring filter): initial before the first wildcard, final after the
// last, any the runs in between that are not empty. A pattern with no
// wildcard is all initial.
func (p *Pattern) Literals() (initial string, any []string, final string) {
	var runs []string
	var cur strings.Builder
	for _, it := range p.items {
		if it.kind == literal {
			cur.WriteRune(it.r)
			continue
		}
		runs = append(runs, cur.String())
		cur.Reset()
	}
	runs = append(runs, cur.String())
	if len(runs) == 1 {
		return runs[0], nil, ""
	}
	for _, r := range runs[1 : len(runs)-1] {
		if r != "" {
			any = append(any, r)
		}
	}
	return runs[0], any, runs[len(runs)-1]
}

// Match reports whether name matches the whole pattern, without regard to
// case (simple case folding, as strings.EqualFold compares).
func (p *Pattern) Match(name string) bool {
	return match(p.items, []rune(name))
}

// match is the usual wildcard matcher with one point to come back to (the
// last *): linear in practice, never exponential.
func match(items []item, name []rune) bool {
	i, n := 0, 0
	starI, starN := -1, 0
	for n < len(name) {
		if i < len(items) {
			switch it := items[i]; it.kind {
			case anyRun:
				starI, starN = i, n
				i++
				continue
			case anyOne:
				i++
				n++
				continue
			case literal:
				if equalFold(it.r, name[n]) {
					i++
					n++
					continue
				}
			case set:
				if it.matches(name[n]) {
					i++
					n++
					continue
				}
			}
		}
		if starI < 0 {
			return false
		}
		starN++
		i, n = starI+1, starN
	}
	for i < len(items) && items[i].kind == anyRun {
		i++
	}
	return i == len(items)
}

// equalFold reports whether a and b are the same rune under simple case
// folding.
func equalFold(a, b rune) bool {
	if a == b {
		return true
	}
	for f := unicode.SimpleFold(a); f != a; f = unicode.SimpleFold(f) {
		if f == b {
			return true
		}
	}
	return false
}

// matches reports whether r, or a rune of its case-folding orbit, is in
// the set (or, negated, whether none is).
func (it item) matches(r rune) bool {
	in := false
	f := r
	for {
		for _, rg := range it.ranges {
			if rg.lo <= f && f <= rg.hi {
				in = true
				break
			}
		}
		if in {
			break
		}
		if f = unicode.SimpleFold(f); f == r {
			break
		}
	}
	return in != it.negate
}
