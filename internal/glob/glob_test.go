package glob

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"lon-*", "lon-pod1", true},
		{"lon-*", "LON-POD1", true},     // case ignored, as names compare
		{"LON-*", "lon-pod1", true},     // both ways
		{"lon-*", "lon-", true},         // * matches nothing too
		{"lon-*", "xlon-pod1", false},   // the whole name
		{"lon", "lon-pod1", false},      // no wildcard: the name itself
		{"lon", "LON", true},            // ... without regard to case
		{"*pod*", "uk-pod-1", true},     // anywhere
		{"*-1", "uk-pod-1", true},       // suffix
		{"*-1", "uk-pod-12", false},     // ... at the end only
		{"pod?", "pod1", true},          // ? one character
		{"pod?", "pod", false},          // ... exactly one
		{"pod?", "pod12", false},        //
		{"pod?", "podé", true},          // a character, not a byte
		{"pod[12]", "pod2", true},       // a set
		{"pod[12]", "pod3", false},      //
		{"pod[0-9]", "pod7", true},      // a range
		{"pod[!0-9]", "pod7", false},    // negated
		{"pod[^0-9]", "podx", true},     // ^ as !
		{"[a-c]*", "Bob", true},         // a range of lower case matches upper case
		{"[A-C]*", "bob", true},         // and the other way
		{"[]]", "]", true},              // ] first is a member
		{"[a-]", "-", true},             // - last is a member
		{`a\*b`, "a*b", true},           // escaped *
		{`a\*b`, "axb", false},          //
		{`CORP\\*`, `CORP\alice`, true}, // escaped backslash
		{"a/b*", "a/bc", true},          // / is a character like any other
		{"*", "", true},                 //
		{"**a**", "a", true},            // stars fold
		{"*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false}, // no blow-up
		{"K*", "\u212aelvin", true},  // the Kelvin sign folds to K
		{"straße", "STRASSE", false}, // simple folding only, as EqualFold
	} {
		p, err := Parse(c.pattern)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.pattern, err)
			continue
		}
		if got := p.Match(c.name); got != c.want {
			t.Errorf("%q matching %q = %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, c := range []struct{ pattern, problem string }{
		{"lon-[", "is not closed"},
		{"[abc", "is not closed"},
		{"[]", "is not closed"},
		{`lon\`, `ends with \`},
		{"[z-a]", "runs backwards"},
		{"\xff", "not UTF-8"},
	} {
		_, err := Parse(c.pattern)
		if err == nil || !strings.Contains(err.Error(), c.problem) {
			t.Errorf("Parse(%q) = %v, want an error saying %q", c.pattern, err, c.problem)
		}
	}
}

func TestLiterals(t *testing.T) {
	for _, c := range []struct {
		pattern, initial, final string
		any                     []string
		literal                 bool
	}{
		{pattern: "lon-pod1", initial: "lon-pod1", literal: true},
		{pattern: `a\*b`, initial: "a*b", literal: true},
		{pattern: "lon-*", initial: "lon-"},
		{pattern: "*-1", final: "-1"},
		{pattern: "*pod*", any: []string{"pod"}},
		{pattern: "a*b?c[de]f*", initial: "a", any: []string{"b", "c", "f"}, final: ""},
		{pattern: "a?b", initial: "a", final: "b"},
		{pattern: "*"},
	} {
		p, err := Parse(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		initial, any, final := p.Literals()
		if initial != c.initial || final != c.final || strings.Join(any, "|") != strings.Join(c.any, "|") {
			t.Errorf("Literals(%q) = %q %q %q, want %q %q %q", c.pattern, initial, any, final, c.initial, c.any, c.final)
		}
		if _, lit := p.Literal(); lit != c.literal {
			t.Errorf("Literal(%q): %v, want %v", c.pattern, lit, c.literal)
		}
	}
}

// FuzzPattern: whatever the pattern, Parse never panics; a pattern that
// parses matches as the same pattern translated to a regular expression
// does, and every name it matches holds its literals in order (the
// coarser search never drops a match).
func FuzzPattern(f *testing.F) {
	for _, s := range []string{"lon-*", "*pod?", "[a-c]x", `\*`, "[!]]", "a*b*c", "[^-z]"} {
		f.Add(s, "lon-pod1")
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		p, err := Parse(pattern)
		if err != nil || !utf8.ValidString(name) {
			return
		}
		re, ok := regexpOf(p)
		if !ok {
			return
		}
		if got, want := p.Match(name), re.MatchString(name); got != want {
			t.Fatalf("%q matching %q = %v, the regular expression %s says %v", pattern, name, got, re, want)
		}
		if p.Match(name) {
			initial, any, final := p.Literals()
			rest := []rune(name)
			if !hasPrefixFold(rest, []rune(initial)) {
				t.Fatalf("%q matches %q, which does not start with %q", pattern, name, initial)
			}
			if !hasPrefixFold(reverse(rest), reverse([]rune(final))) {
				t.Fatalf("%q matches %q, which does not end with %q", pattern, name, final)
			}
			rest = rest[len([]rune(initial)):]
			for _, a := range any {
				i := indexFold(rest, []rune(a))
				if i < 0 {
					t.Fatalf("%q matches %q, which does not hold %q after %q", pattern, name, any, initial)
				}
				rest = rest[i+len([]rune(a)):]
			}
		}
	})
}

// regexpOf translates a parsed pattern to a case-insensitive regular
// expression; ok is false when it has a rune the translation cannot say.
func regexpOf(p *Pattern) (*regexp.Regexp, bool) {
	var b strings.Builder
	b.WriteString(`(?is)^`)
	for _, it := range p.items {
		switch it.kind {
		case literal:
			b.WriteString(regexp.QuoteMeta(string(it.r)))
		case anyOne:
			b.WriteString(".")
		case anyRun:
			b.WriteString(".*")
		case set:
			b.WriteString("[")
			if it.negate {
				b.WriteString("^")
			}
			for _, rg := range it.ranges {
				b.WriteString(regexp.QuoteMeta(string(rg.lo)))
				if rg.hi != rg.lo {
					b.WriteString("-" + regexp.QuoteMeta(string(rg.hi)))
				}
			}
			b.WriteString("]")
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	return re, err == nil
}

func hasPrefixFold(s, prefix []rune) bool {
	if len(prefix) > len(s) {
		return false
	}
	for i := range prefix {
		if !equalFold(s[i], prefix[i]) {
			return false
		}
	}
	return true
}

func indexFold(s, sub []rune) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if hasPrefixFold(s[i:], sub) {
			return i
		}
	}
	return -1
}

func reverse(rs []rune) []rune {
	out := make([]rune, len(rs))
	for i, r := range rs {
		out[len(rs)-1-i] = r
	}
	return out
}
