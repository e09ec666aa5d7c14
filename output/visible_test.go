package output

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile are values another tool wrote: a terminal title and colour
// sequence, a right-to-left override, a line break, a C1 control.
var hostile = []string{"\x1b]0;PWNED\a\x1b[31m", "evil\u202etxt.exe", "two\nlines", "a\u009bb"}

// rawControl reports whether s holds a character that acts on a terminal.
func rawControl(s string) bool {
	for _, r := range s {
		if r != '\n' && (r < 0x20 || r >= 0x7f && r <= 0x9f || r == '\u202e') {
			return true
		}
	}
	return false
}

// TestTablesShowControlCharactersVisibly: in both layouts (tablewriter's
// and the large tables'), wrapped or not, every cell is shown escaped, the
// columns align on what is shown, and the rows given are not changed.
func TestTablesShowControlCharactersVisibly(t *testing.T) {
	header := []string{"name", "description", "pods"}
	long := hostile[0] + " and a description long enough to wrap at the width of a narrow terminal"
	rows := [][]string{{hostile[1], long, "p1"}, {"UK", hostile[2], "p2"}, {hostile[3], "plain", "p3"}}
	given := fmt.Sprint(rows)
	for _, tc := range []struct {
		name  string
		large int
		width int
	}{{"tablewriter", 5000, 0}, {"large", 1, 0}, {"fitted", 5000, 50}} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(n int) { largeTable = n }(largeTable)
			largeTable = tc.large
			got := printed(t, Printer{Format: Table, Width: tc.width}, header, rows)
			if rawControl(got) || strings.Count(got, "\n") != 4 && tc.width == 0 || strings.Count(got, "\n") <= 4 && tc.width > 0 {
				t.Fatalf("raw control characters or broken lines:\n%q", got)
			}
			for _, want := range []string{`\x1b]0;PWNED\a\x1b[31m`, `evil\u202etxt.exe`, `two\nlines`, `a\u009bb`} {
				if tc.width == 0 && !strings.Contains(got, want) {
					t.Errorf("%s not shown:\n%s", want, got)
				}
			}
			lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
			if tc.width > 0 {
				for _, l := range lines {
					if n := utf8.RuneCountInString(l); n > tc.width {
						t.Errorf("a line of %d at width %d: %q", n, tc.width, l)
					}
				}
				return
			}
			// The last column starts at the same rune offset on every line.
			col := func(l, cell string) int { return utf8.RuneCountInString(l[:strings.LastIndex(l, cell)]) }
			if col(lines[0], "PODS") != col(lines[1], "p1") || col(lines[1], "p1") != col(lines[2], "p2") || col(lines[2], "p2") != col(lines[3], "p3") {
				t.Errorf("columns not aligned on what is shown:\n%s", got)
			}
		})
	}
	if fmt.Sprint(rows) != given {
		t.Errorf("the rows given were changed: %q", rows)
	}
}

func TestFieldsShowControlCharactersVisibly(t *testing.T) {
	var b bytes.Buffer
	if err := Fields(&b, [][2]string{{"name", hostile[1]}, {"description", hostile[0]}}); err != nil {
		t.Fatal(err)
	}
	want := "name:         evil\\u202etxt.exe\ndescription:  \\x1b]0;PWNED\\a\\x1b[31m\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}

type named string

type stringer struct{ s string }

func (s stringer) String() string { return s.s }

func TestFprintfShowsValuesVisibly(t *testing.T) {
	for _, tc := range []struct {
		name, format string
		args         []any
		want         string
	}{
		{"a string under %s; the format's newline stays", "created site %s\n", []any{hostile[0]}, "created site \\x1b]0;PWNED\\a\\x1b[31m\n"},
		{"under %v, with a width", "[%-6v]", []any{"a\tb"}, "[a\\tb  ]"},
		{"an error", "cpactl: %v", []any{errors.New("site \x1b[2J gone")}, "cpactl: site \\x1b[2J gone"},
		{"a Stringer", "%s", []any{stringer{"x\u202ey"}}, "x\\u202ey"},
		{"a named string type", "%s", []any{named("a\x07")}, "a\\a"},
		{"a list", "%v", []any{[]string{"a\x1b", "b"}}, "[a\\x1b b]"},
		{"%q escapes by itself: nothing twice", "%q", []any{"a\x1bb"}, `"a\x1bb"`},
		{"numbers stay numbers", "%d of %d, %.1f", []any{3, 4, 0.5}, "3 of 4, 0.5"},
		{"an escape's text stays", "%s", []any{`CORP\alice \x1b`}, `CORP\alice \x1b`},
		{"no argument", "plain\n", nil, "plain\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if _, err := Fprintf(&b, tc.format, tc.args...); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("Fprintf(%q) = %q, want %q", tc.format, b.String(), tc.want)
			}
		})
	}
}

func TestPicturesShowControlCharactersVisibly(t *testing.T) {
	g := Graph{Title: hostile[0], Nodes: []Node{{ID: hostile[1], Lines: []string{hostile[1], "line 2"}}},
		Edges: []Edge{{From: hostile[1], To: hostile[1], Label: hostile[3]}}}
	for name, write := range map[string]func(io.Writer, Graph) error{"dot": WriteDOT, "mermaid": WriteMermaid} {
		var b bytes.Buffer
		if err := write(&b, g); err != nil {
			t.Fatal(err)
		}
		if rawControl(b.String()) || !strings.Contains(b.String(), `evil\\u202etxt.exe`) && !strings.Contains(b.String(), `evil\u202etxt.exe`) {
			t.Errorf("%s:\n%q", name, b.String())
		}
	}
}
