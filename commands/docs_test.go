package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// refreshDocs is the command that brings docs/cli up to date.
const refreshDocs = "go run ./cmd/cpactl docs markdown docs/cli"

// readTree returns the files of dir by name.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}

func generateDocs(t *testing.T, format string) map[string][]byte {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "new") // created by the command
	if code, _, errOut := run(t, "docs", format, dir); code != 0 {
		t.Fatalf("docs %s: exit %d: %s", format, code, errOut)
	}
	return readTree(t, dir)
}

// TestCheckedInReferenceIsCurrent: docs/cli holds exactly what `cpactl
// docs markdown` writes today, byte for byte, and no other file.
func TestCheckedInReferenceIsCurrent(t *testing.T) {
	want := generateDocs(t, "markdown")
	have := readTree(t, filepath.Join("..", "docs", "cli"))
	var stale []string
	for name, b := range want {
		if got, ok := have[name]; !ok {
			stale = append(stale, "missing "+name)
		} else if !bytes.Equal(got, b) {
			stale = append(stale, "out of date "+name)
		}
	}
	for name := range have {
		if _, ok := want[name]; !ok {
			stale = append(stale, "no such command any more: "+name)
		}
	}
	if len(stale) > 0 {
		slices.Sort(stale)
		t.Fatalf("docs/cli is not current (%d files): %s\nrefresh it from the repository root with:\n  rm -rf docs/cli && %s",
			len(stale), strings.Join(stale, "; "), refreshDocs)
	}
}

// TestDocsAreDeterministic: two generations give the same bytes, and no
// page carries a date of generation.
func TestDocsAreDeterministic(t *testing.T) {
	for _, format := range []string{"man", "markdown"} {
		first, second := generateDocs(t, format), generateDocs(t, format)
		if len(first) < 50 {
			t.Fatalf("%s: only %d pages", format, len(first))
		}
		for name, b := range first {
			if !bytes.Equal(b, second[name]) {
				t.Errorf("%s: %s differs between two generations", format, name)
			}
			if bytes.Contains(b, []byte("Auto generated")) {
				t.Errorf("%s: %s carries cobra's dated tag", format, name)
			}
		}
	}
	if _, ok := generateDocs(t, "man")["cpactl-site-preferred.1"]; !ok {
		t.Error("no man page cpactl-site-preferred.1")
	}
}

func TestDocsRefuseAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := run(t, "docs", "man", file)
	if code != ExitError {
		t.Fatalf("exit %d, want 1", code)
	}
	assertOneLineError(t, errOut, "it is a file, not a directory")
}

// TestExitCodesMatchConventions: the codes `cpactl help exit-codes` lists
// are the codes docs/conventions.md's "Exit codes" paragraph lists, no
// more and no fewer (a new code documented in one place only fails).
func TestExitCodesMatchConventions(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "conventions.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "\n## Exit codes\n")
	if start < 0 {
		t.Fatal(`docs/conventions.md has no "## Exit codes" section`)
	}
	para := doc[start+len("\n## Exit codes\n"):]
	if end := strings.Index(para, "\n\n"); end >= 0 {
		para = para[:end]
	}
	documented := map[int]bool{}
	for _, m := range regexp.MustCompile(`[:,]\s+(\d+)\s+[a-z]`).FindAllStringSubmatch(para, -1) {
		n, _ := strconv.Atoi(m[1])
		documented[n] = true
	}
	helped := map[int]bool{}
	for _, c := range exitCodeHelp {
		helped[c.code] = true
		if !documented[c.code] {
			t.Errorf("exit %d is in `cpactl help exit-codes` but not in docs/conventions.md's Exit codes", c.code)
		}
	}
	for n := range documented {
		if !helped[n] {
			t.Errorf("exit %d is in docs/conventions.md's Exit codes but not in `cpactl help exit-codes`", n)
		}
	}
	if len(helped) < 9 {
		t.Errorf("only %d codes in the help", len(helped))
	}
}
