package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInteractiveApplyPruneConfirm: on a terminal, a pruning apply lists
// its writes and asks; "n" writes nothing, "y" deletes.
func TestInteractiveApplyPruneConfirm(t *testing.T) {
	srv, st := startSeed(t)
	seed, err := os.ReadFile("../../fixtures/seed-000.ldif")
	if err != nil {
		t.Fatal(err)
	}
	// The seed without Connection Server cs-lon-1.
	var kept []string
	for _, entry := range strings.Split(string(seed), "\n\n") {
		if !strings.HasPrefix(entry, "dn: cn=cs-lon-1,") {
			kept = append(kept, entry)
		}
	}
	file := filepath.Join(t.TempDir(), "federation.ldif")
	if err := os.WriteFile(file, []byte(strings.Join(kept, "\n\n")), 0o600); err != nil {
		t.Fatal(err)
	}

	term := startTerminal(t, srv, "apply", file, "--prune")
	term.expect("would delete connection server cs-lon-1")
	term.expect("deleting 1 object?")
	term.send("n", keyEnter)
	term.expect("cancelled: nothing written")
	if code := term.wait(); code != 1 {
		t.Fatalf("exit %d, want 1; the terminal shows:\n%s", code, term.output())
	}
	if _, err := st.ConnectionServer("cs-lon-1"); err != nil {
		t.Fatalf("declined, yet: %v", err)
	}

	term = startTerminal(t, srv, "apply", file, "--prune")
	term.expect("deleting 1 object?")
	term.send("y", keyEnter)
	term.expect("deleted connection server cs-lon-1")
	if code := term.wait(); code != 0 {
		t.Fatalf("exit %d; the terminal shows:\n%s", code, term.output())
	}
	if _, err := st.ConnectionServer("cs-lon-1"); err == nil {
		t.Fatal("cs-lon-1 still exists")
	}
}
