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

// TestByNameScansAsTheMapFinds: a byName of few records (scanned) and of
// many (a map by folded name) find, for every name, the record a map by
// folded name filled first-wins finds; names that fold alike included.
func TestByNameScansAsTheMapFinds(t *testing.T) {
	names := []string{"uk", "UK", "\u212Aiosk", "kiosk", "Été", "ete", "ÉTÉ", "straße", "STRASSE", "ſales", "Sales", "σς", "ΣΣ", "", "ø", "Ø"}
	for n := 0; n <= len(names); n++ {
		for start := range names {
			var list []Pool
			for i := range n {
				list = append(list, Pool{Name: names[(start+i)%len(names)], Capacity: i})
			}
			want := map[string]*Pool{}
			for i := range list {
				if _, dup := want[foldKey(list[i].Name)]; !dup {
					want[foldKey(list[i].Name)] = &list[i]
				}
			}
			b := newByName(list, func(p *Pool) string { return p.Name })
			if scannedList := b.m == nil; scannedList != (n <= scanned) {
				t.Fatalf("%d records: scanned %t", n, scannedList)
			}
			for _, q := range append(names, "UK", "KIOSK", "Sales", "nowhere") {
				if got, w := b.get(q), want[foldKey(q)]; got != w {
					t.Errorf("%d records from %d: get(%q) = %+v, the map finds %+v", n, start, q, got, w)
				}
			}
		}
	}
}

// TestMemberGroupsScansAsTheMapFinds: memberGroups accepts, for few
// group members (scanned) and many (a map), exactly the names whose
// folded key is that of a group member (users left out).
func TestMemberGroupsScansAsTheMapFinds(t *testing.T) {
	names := []string{"Sales", "SALES", "\u212Aiosk", "kiosk", "Été", "straße", "STRASSE", "ſales", "σς", "ΣΣ", "ø", "g1", "g2", "g3", "g4"}
	for n := 0; n <= len(names); n++ {
		ge := &Entitlement{Members: []Member{{Kind: MemberUser, Name: "u1"}}}
		want := map[string]bool{}
		for _, name := range names[:n] {
			ge.Members = append(ge.Members, Member{Kind: "group", Name: name})
			want[foldKey(name)] = true
		}
		is := memberGroups(ge)
		for _, q := range append(names, "u1", "U1", "nobody", "G1") {
			if got := is(q); got != want[foldKey(q)] {
				t.Errorf("%d group members: %q accepted %t, want %t", n, q, got, want[foldKey(q)])
			}
		}
	}
}
