package quote

import (
	"strings"
	"testing"
)

func TestName(t *testing.T) {
	long := strings.Repeat("é", 1000)
	for _, tc := range []struct{ in, want string }{
		{"UK", `"UK"`},
		{`R&D, "West"`, `"R&D, \"West\""`},
		{strings.Repeat("a", 80), `"` + strings.Repeat("a", 80) + `"`},
		{strings.Repeat("a", 81), `"` + strings.Repeat("a", 80) + `"… (81 characters)`},
		{long, `"` + strings.Repeat("é", 80) + `"… (1000 characters)`},
	} {
		if got := Name(tc.in); got != tc.want {
			t.Errorf("Name(%.20q...) = %.100s, want %.100s", tc.in, got, tc.want)
		}
	}
}

func TestShell(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"a plain word stays as it is", "uk-pod1", "uk-pod1"},
		{"plain punctuation stays as it is", "a_b.c,d/e:f@g", "a_b.c,d/e:f@g"},
		{"an empty word is quoted", "", "''"},
		{"a space is quoted", "Sales Desktop", "'Sales Desktop'"},
		{"a single quote is closed, escaped and reopened", "O'Brien", `'O'\''Brien'`},
		{"a non-ASCII letter is quoted", "Zürich", "'Zürich'"},
		{"digits, dashes, underscores and dots stay as they are", "plain-name_1.2", "plain-name_1.2"},
		{"a plus is quoted", "a,b+c", "'a,b+c'"},
		{"a quote inside a word", "it's", `'it'\''s'`},
		{"a control character: ANSI-C quotes, escaped", "a\x1b]0;x\ab", `$'a\x1b]0;x\ab'`},
		{"a bidi override: ANSI-C quotes, escaped", "abc\u202etxt", `$'abc\u202etxt'`},
		{"ANSI-C quotes escape a quote and a backslash", "O'B\\r\n", `$'O\'B\\r\n'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Shell(tc.in); got != tc.want {
				t.Errorf("Shell(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}
