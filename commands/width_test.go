package commands

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// runTree runs args through the command tree on g (a snapshot store).
func runTree(t *testing.T, g *Globals, args ...string) {
	t.Helper()
	root := NewRootCommand(g)
	root.SetArgs(args)
	root.SetOut(g.IO.Out)
	root.SetErr(g.IO.Err)
	if err := root.Execute(); err != nil {
		t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
}

// TestTablesFitTheInjectedWidth: with a terminal width, a read command's
// table wraps to fit it; -o wide prints the same bytes on a terminal and
// off one, unwrapped.
func TestTablesFitTheInjectedWidth(t *testing.T) {
	const width = 100
	g, out, _ := snapshotGlobals(t)
	runTree(t, g, "pool", "list")
	plain := out.String()
	if !strings.Contains(plain, "\n") || maxLine(plain) <= width {
		t.Fatalf("the demo's pool list is %d wide: pick a wider table\n%s", maxLine(plain), plain)
	}

	g, out, _ = snapshotGlobals(t)
	g.TerminalWidth = func() int { return width }
	runTree(t, g, "pool", "list")
	if n := maxLine(out.String()); n > width {
		t.Errorf("a line of %d on a terminal of %d:\n%s", n, width, out)
	}
	if strings.Count(out.String(), "\n") <= strings.Count(plain, "\n") {
		t.Errorf("nothing wrapped:\n%s", out)
	}

	g, out, _ = snapshotGlobals(t)
	runTree(t, g, "pool", "list", "-o", "wide")
	wide := out.String()
	g, out, _ = snapshotGlobals(t)
	g.TerminalWidth = func() int { return width }
	runTree(t, g, "pool", "list", "-o", "wide")
	if out.String() != wide {
		t.Errorf("-o wide on a terminal:\n%s\nwant\n%s", out, wide)
	}
	if maxLine(wide) <= maxLine(plain) {
		t.Errorf("-o wide shows no more than the table:\n%s", wide)
	}
}

func maxLine(s string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		n = max(n, utf8.RuneCountInString(l))
	}
	return n
}
