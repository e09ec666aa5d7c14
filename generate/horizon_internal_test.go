package generate

import (
	"fmt"
	"testing"
)

// TestRESTValues: the values that differ between cpactl and the API,
// both ways of each pair as docs/horizon.md lists them.
func TestRESTValues(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"ANY", "ALL_SITES"}, {"SITE", "WITHIN_SITE"}, {"LOCAL", "WITHIN_POD"}, {"any", "error"},
	} {
		got, err := restScope(tc.in)
		if err != nil {
			got = "error"
		}
		if got != tc.want {
			t.Errorf("restScope(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct{ in, dns, netbios string }{
		{"", "", ""}, {"CORP", "corp.example.com", "CORP"}, {"corp.example.com", "corp.example.com", ""},
		{"EMEA", "emea.example.com", "EMEA"},
	} {
		dns, netbios := restDomain(tc.in)
		if dns != tc.dns || netbios != tc.netbios {
			t.Errorf("restDomain(%q) = %q, %q; want %q, %q", tc.in, dns, netbios, tc.dns, tc.netbios)
		}
	}
	for _, tc := range []struct {
		in   int
		want string
	}{{-1, "<nil> UNKNOWN"}, {0, "0 LIGHT"}, {33, "33 LIGHT"}, {34, "34 NORMAL"}, {80, "80 HEAVY"}, {100, "100 BLOCK"}} {
		load, pref := restLoad(tc.in)
		got := "<nil> " + pref
		if load != nil {
			got = fmt.Sprintf("%d %s", *load, pref)
		}
		if got != tc.want {
			t.Errorf("restLoad(%d) = %s, want %s", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		in   int
		want string
	}{{0, "UNLIMITED 0"}, {25, "LIMITED 25"}} {
		typ, n := restMaxSessions(tc.in)
		if got := fmt.Sprintf("%s %d", typ, n); got != tc.want {
			t.Errorf("restMaxSessions(%d) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestIDs: ids are UUIDs, distinct across kinds and indexes, the same for
// a seed and different for another; SIDs likewise for users and groups.
func TestIDs(t *testing.T) {
	cfg, _ := Preset(PresetDemo)
	cfg.Seed = 1
	p, err := newPlan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := newHorizonWriter(p, nil, 1000)
	seen := map[string]string{}
	for _, kind := range []string{"site", "pod", "pool", "farm", "rds-server", "connection-server", "global-desktop-entitlement"} {
		for i := 0; i < 300; i++ {
			id := h.id(kind, i)
			if len(id) != 36 || id[14] != '4' || id[19] != '8' {
				t.Fatalf("%s %d: %q is not a version 4 UUID", kind, i, id)
			}
			if other, dup := seen[id]; dup {
				t.Fatalf("%s %d has the id of %s", kind, i, other)
			}
			seen[id] = fmt.Sprint(kind, i)
		}
	}
	for i := 0; i < 1000; i++ {
		for _, sid := range []string{h.userSID(i), h.groupSID(i)} {
			if _, dup := seen[sid]; dup {
				t.Fatalf("SID %s twice", sid)
			}
			seen[sid] = "sid"
		}
	}
	again := newHorizonWriter(p, nil, 1000)
	if again.id("pod", 3) != h.id("pod", 3) || again.userSID(7) != h.userSID(7) {
		t.Errorf("ids differ for the same seed")
	}
	cfg.Seed = 2
	q, _ := newPlan(cfg)
	other := newHorizonWriter(q, nil, 1000)
	if other.id("pod", 3) == h.id("pod", 3) || other.userSID(7) == h.userSID(7) {
		t.Errorf("seeds 1 and 2 give the same ids")
	}
}
