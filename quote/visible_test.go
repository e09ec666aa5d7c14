package quote

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestVisible(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain ASCII stays as it is", "UK London, R&D (West)", "UK London, R&D (West)"},
		{"the empty string", "", ""},
		{"letters of any script stay", "Zürich 東京 Москва", "Zürich 東京 Москва"},
		{"a backslash stays: names hold them", `CORP\alice`, `CORP\alice`},
		{"an escape's text stays: nothing is escaped twice", `a\x1bb \u202e`, `a\x1bb \u202e`},
		{"the probe's title and colour sequence", "\x1b]0;PWNED\a\x1b[31m", `\x1b]0;PWNED\a\x1b[31m`},
		{"named C0 controls", "\a\b\t\n\v\f\r", `\a\b\t\n\v\f\r`},
		{"other C0 controls in hex", "\x00\x01\x1f", `\x00\x01\x1f`},
		{"DEL", "a\x7fb", `a\x7fb`},
		{"a C1 control (CSI)", "a\u009b31mb", `a\u009b31mb`},
		{"next line, a C1 control", "a\u0085b", `a\u0085b`},
		{"a right-to-left override", "abc\u202etxt.exe", `abc\u202etxt.exe`},
		{"bidi isolates and marks", "\u2066\u2067\u2068\u2069\u200e\u200f\u061c", `\u2066\u2067\u2068\u2069\u200e\u200f\u061c`},
		{"a zero-width space and a byte order mark", "a\u200bb\ufeff", `a\u200bb\ufeff`},
		{"line and paragraph separators", "a\u2028b\u2029c", `a\u2028b\u2029c`},
		{"a tag character beyond the BMP", "a\U000e0041b", `a\U000e0041b`},
		{"ZWNJ stays: Persian words need it", "می\u200cخواهم", "می\u200cخواهم"},
		{"ZWJ stays: emoji sequences need it", "👩\u200d💻", "👩\u200d💻"},
		{"a no-break space stays (it is a space)", "a\u00a0b", "a\u00a0b"},
		{"a replacement character stays", "a\ufffdb", "a\ufffdb"},
		{"bytes that are not UTF-8", "a\xffb\xc3", `a\xffb\xc3`},
		{"an 8-bit CSI byte is not UTF-8", "a\x9b31m", `a\x9b31m`},
		{"escapes among letters", "Zürich\x1b[2Jé", `Zürich\x1b[2Jé`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Visible(tc.in); got != tc.want {
				t.Errorf("Visible(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestVisibleWritesGoEscapes: each escape is the one strconv.Quote writes
// for the same character, so that messages quoting a name with Name
// (%q) and table cells agree.
func TestVisibleWritesGoEscapes(t *testing.T) {
	for _, s := range []string{"\x1b", "\x00", "\t", "\x7f", "\u0085", "\u202e", "\ufeff", "\U000e0041", "\xff"} {
		want := strings.Trim(strconv.Quote(s), `"`)
		if got := Visible(s); got != want {
			t.Errorf("Visible(%q) = %s, strconv.Quote writes %s", s, got, want)
		}
	}
}

func TestVisiblePlainDoesNotAllocate(t *testing.T) {
	s := "cn=UK,ou=Sites,dc=vdiglobal 東京"
	if n := testing.AllocsPerRun(100, func() { _ = Visible(s) }); n != 0 {
		t.Errorf("Visible of plain text allocates %v times", n)
	}
}

// FuzzVisible: whatever the input, the output holds no character that
// acts on a terminal, is valid UTF-8, is left as it is by a second pass,
// and equals the input when the input needed no escape.
func FuzzVisible(f *testing.F) {
	for _, s := range []string{"", "UK", "\x1b]0;PWNED\a\x1b[31m", "abc\u202etxt", "a\xffb", "\u200d\u200c", `\x1b`, "\u0085\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := Visible(s)
		if !utf8.ValidString(v) {
			t.Fatalf("Visible(%q) = %q is not UTF-8", s, v)
		}
		for i, r := range v {
			if hidden(r, utf8.RuneLen(r)) {
				t.Fatalf("Visible(%q) = %q keeps %U at %d", s, v, r, i)
			}
		}
		if again := Visible(v); again != v {
			t.Fatalf("Visible is not stable: %q, then %q", v, again)
		}
		plain := true
		for i := 0; i < len(s); {
			r, size := utf8.DecodeRuneInString(s[i:])
			plain = plain && !hidden(r, size)
			i += size
		}
		if plain != (v == s) {
			t.Fatalf("Visible(%q) = %q: the input needed an escape: %v", s, v, !plain)
		}
	})
}
