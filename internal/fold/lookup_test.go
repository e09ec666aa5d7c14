package fold

import (
	"strings"
	"testing"
)

// TestLookupIsKeyLookup: Lookup finds what m[Key(name)] finds, for ASCII
// names of any case, names past its 64-byte buffer, and non-ASCII names
// (the Kelvin sign folds to K).
func TestLookupIsKeyLookup(t *testing.T) {
	long := strings.Repeat("a", 70)
	m := map[string]int{Key("London-1"): 1, Key("São Paulo"): 2, Key(long): 3, Key("KEY"): 4, Key(""): 5}
	for _, name := range []string{"London-1", "LONDON-1", "london-1", "São Paulo", "SÃO PAULO", long, strings.ToUpper(long), "\u212aey", "key", "", "Londres", "x\x7f"} {
		if got, want := Lookup(m, name), m[Key(name)]; got != want {
			t.Errorf("Lookup(%q) = %d, m[Key] = %d", name, got, want)
		}
	}
	if Lookup(m, "london-1") != 1 || Lookup(m, "\u212aey") != 4 {
		t.Error("a name that folds alike is not found")
	}
}
