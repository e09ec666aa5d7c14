package prompt

import (
	"os"
	"strings"
	"testing"
)

func TestInteractiveNeedsTerminals(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stdin")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if Interactive(f, f) {
		t.Error("regular files are not terminals")
	}
	if Interactive(strings.NewReader(""), os.Stdout) {
		t.Error("a reader that is not a file is not a terminal")
	}
}
