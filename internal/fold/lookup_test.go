package broker

import (
	"strings"
	"testing"
)

// TestGetIsFoldKeyLookup: get finds what m[foldKey(name)] finds, for ASCII
// names of any case, names past its 64-byte buffer, and non-ASCII names
// (the Kelvin sign folds to K).
func TestGetIsFoldKeyLookup(t *testing.T) {
	long := strings.Repeat("a", 70)
	m := map[string]int{foldKey("London-1"): 1, foldKey("São Paulo"): 2, foldKey(long): 3, foldKey("KEY"): 4, foldKey(""): 5}
	for _, name := range []string{"London-1", "LONDON-1", "london-1", "São Paulo", "SÃO PAULO", long, strings.ToUpper(long), "\u212aey", "key", "", "Londres", "x\x7f"} {
		if got, want := get(m, name), m[foldKey(name)]; got != want {
			t.Errorf("get(%q) = %d, m[foldKey] = %d", name, got, want)
		}
	}
	if get(m, "london-1") != 1 || get(m, "\u212aey") != 4 {
		t.Error("a name that folds alike is not found")
	}
}
