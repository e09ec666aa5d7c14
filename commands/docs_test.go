package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
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
