package output

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

var fitHeader = []string{"name", "preferred sites", "pods", "description"}

var fitRows = [][]string{
	{"India", "1. UK, 2. US", "in-pod1, in-pod2, in-pod3", "the site of the Bangalore and Chennai data centres, with the overflow for the whole APAC region"},
	{"UK", "-", "uk-pod1", "London"},
}

func printed(t *testing.T, p Printer, header []string, rows [][]string) string {
	t.Helper()
	var b bytes.Buffer
	p.Out = &b
	if err := p.Print(nil, func(w io.Writer) error { return Rows(w, header, rows) }); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestTablesFitTheTerminal: at a known width every line fits, long cells
// wrap at word boundaries, and no word is lost.
func TestTablesFitTheTerminal(t *testing.T) {
	for _, width := range []int{80, 60, 50} {
		got := printed(t, Printer{Format: Table, Width: width}, fitHeader, fitRows)
		lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
		if len(lines) <= 3 {
			t.Errorf("width %d: nothing wrapped:\n%s", width, got)
		}
		for _, l := range lines {
			if n := utf8.RuneCountInString(l); n > width {
				t.Errorf("width %d: a line of %d: %q", width, n, l)
			}
		}
		if !strings.HasPrefix(lines[0], "NAME   PREFERRED SITES  PODS") {
			t.Errorf("width %d: header %q", width, lines[0])
		}
		// No word is lost.
		for _, w := range strings.Fields("Bangalore Chennai centres, overflow APAC region London uk-pod1") {
			if !strings.Contains(got, w) {
				t.Errorf("width %d: %q lost:\n%s", width, w, got)
			}
		}
	}
	got := printed(t, Printer{Format: Table, Width: 80}, fitHeader, fitRows)
	want := "NAME   PREFERRED SITES  PODS                       DESCRIPTION\n" +
		"India  1. UK, 2. US     in-pod1, in-pod2, in-pod3  the site of the Bangalore and\n" +
		"                                                   Chennai data centres, with\n" +
		"                                                   the overflow for the whole\n" +
		"                                                   APAC region\n" +
		"UK     -                uk-pod1                    London\n"
	if got != want {
		t.Errorf("width 80:\n%s\nwant\n%s", got, want)
	}
}

// TestUnfittedTablesAreAsBefore: no width (a pipe), -o wide, and a table
// that fits print exactly what Rows prints alone, so that scripts reading
// tables see the same bytes as before fitting existed.
func TestUnfittedTablesAreAsBefore(t *testing.T) {
	var b bytes.Buffer
	if err := Rows(&b, fitHeader, fitRows); err != nil {
		t.Fatal(err)
	}
	plain := b.String()
	for name, p := range map[string]Printer{
		"no terminal":     {Format: Table},
		"wide":            {Format: Wide, Width: 40},
		"a wide terminal": {Format: Table, Width: 400},
	} {
		if got := printed(t, p, fitHeader, fitRows); got != plain {
			t.Errorf("%s:\n%s\nwant\n%s", name, got, plain)
		}
	}
}

// TestLargeTablesAreNotWrapped: a table of more than largeTable rows keeps
// the fast layout, unwrapped, on a terminal too.
func TestLargeTablesAreNotWrapped(t *testing.T) {
	defer func(n int) { largeTable = n }(largeTable)
	largeTable = 1
	var b bytes.Buffer
	if err := plainRows(&b, headerCells(fitHeader, nil), fitRows); err != nil {
		t.Fatal(err)
	}
	if got := printed(t, Printer{Format: Table, Width: 50}, fitHeader, fitRows); got != b.String() {
		t.Errorf("got\n%s\nwant\n%s", got, b.String())
	}
}

func TestTerminalWidthOfAPipe(t *testing.T) {
	if w := TerminalWidth(&bytes.Buffer{}); w != 0 {
		t.Errorf("a buffer: %d", w)
	}
}
