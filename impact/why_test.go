package impact

import (
	"testing"

	"github.com/cpactl/cpactl/broker"
)

// TestWhy: the short why of each kind of move, on the demo fixture.
func TestWhy(t *testing.T) {
	demo := fixture(t, "demo.ldif")
	indexOf := func(f *broker.Federation, pool string) int {
		for i, p := range f.Pools {
			if p.Name == pool {
				return i
			}
		}
		t.Fatalf("no pool %s", pool)
		return -1
	}
	full := clone(demo)
	for _, p := range []string{"blr-desktops", "blr2-desktops"} {
		full.Pools[indexOf(full, p)].Sessions = 20
	}
	reordered := clone(full)
	for i := range reordered.Sites {
		if reordered.Sites[i].Name == "India" {
			reordered.Sites[i].PreferredSites = []string{"US", "UK"}
		}
	}
	shortened := clone(full)
	for i := range shortened.Sites {
		if shortened.Sites[i].Name == "India" {
			shortened.Sites[i].PreferredSites = shortened.Sites[i].PreferredSites[:0]
		}
	}
	disabled := clone(demo)
	for i := range disabled.Entitlements {
		if disabled.Entitlements[i].Name == "Desktops" {
			disabled.Entitlements[i].Enabled = false
		}
	}
	for _, c := range []struct {
		name          string
		before, after *broker.Federation
		offline       []string
		user, ge      string
		want          string
	}{
		{"a session on a pod taken offline", demo, demo, []string{"London-1"}, "carol", "Desktops", "pod London-1 is offline: the session there is ignored"},
		{"an assignment on a pod taken offline", demo, demo, []string{"London-1"}, "alice", "Engineering Workstations", "pod London-1 is offline: the assigned machine there is unavailable"},
		{"a placement on a pod taken offline", demo, demo, []string{"London-1"}, "erin", "Engineering Workstations", "pod London-1 is offline"},
		{"a pool filled up", demo, full, nil, "erin", "Desktops", "pool blr2-desktops: full: sessions 20 of capacity 20"},
		{"a preferred rank changed", full, reordered, nil, "erin", "Desktops", "India's rank 1 changed from UK to US"},
		{"a preferred rank removed", full, shortened, nil, "erin", "Desktops", "India's rank 1 changed from UK to none"},
		{"an entitlement disabled", demo, disabled, nil, "erin", "Desktops", "denied: entitlement Desktops is disabled"},
		{"an entitlement enabled", disabled, demo, nil, "erin", "Desktops", "no longer denied (entitlement Desktops is disabled)"},
	} {
		points, err := DefaultPoints(c.before, c.after, c.offline, "India")
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(c.before, c.after, Options{Points: points, Offline: c.offline, Users: []string{c.user}, Entitlements: []string{c.ge}})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(rep.Moves) == 0 {
			t.Errorf("%s: %s does not move", c.name, c.user)
		}
		for _, m := range rep.Moves {
			if m.Why != c.want {
				t.Errorf("%s: %s via %s: why %q, want %q", c.name, m.User, m.Pod, m.Why, c.want)
			}
		}
	}
}
