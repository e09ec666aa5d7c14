package broker

import (
	"strings"
	"testing"
)

func TestFoldKeyMatchesEqualFold(t *testing.T) {
	names := []string{"uk", "UK", "Uk", "\u212Aiosk", "kiosk", "KIOSK", "Été", "été", "ÉTÉ", "ete",
		"straße", "STRASSE", "ſales", "Sales", "σς", "ΣΣ", "a,b+c", "A,B+C", "", "ø", "Ø"}
	for _, a := range names {
		for _, b := range names {
			if got, want := foldKey(a) == foldKey(b), strings.EqualFold(a, b); got != want {
				t.Errorf("foldKey(%q) == foldKey(%q) is %t, strings.EqualFold says %t", a, b, got, want)
			}
		}
	}
}

func TestIndexFirstDuplicateWins(t *testing.T) {
	f := &Federation{Pools: []Pool{{Name: "Desk", Capacity: 1}, {Name: "DESK", Capacity: 2}}}
	if p := newIndex(f, nil).pool("desk"); p == nil || p.Capacity != 1 {
		t.Fatalf("pool %+v", p)
	}
}
