package generate

import (
	"fmt"
	"io"
	"sort"
	"testing"

	"github.com/cpactl/cpactl/ldapschema"
)

// TestGroupShape: the members each group lists agree with the model the
// generator computes from (a user's groups, the users below a group), for
// shapes from none to thousands of groups.
func TestGroupShape(t *testing.T) {
	for _, tc := range []struct{ groups, users, computers int }{
		{0, 10, 0}, {1, 1, 1}, {3, 10, 2}, {12, 40, 8}, {12, 5, 8}, {200, 800, 60}, {5000, 50000, 2500},
	} {
		t.Run(fmt.Sprintf("%d-groups-%d-users", tc.groups, tc.users), func(t *testing.T) {
			g := newGroupShape(tc.groups, tc.users, tc.computers)
			if g.total() != tc.groups {
				t.Fatalf("%d groups, want %d", g.total(), tc.groups)
			}
			for l := 1; l < levels; l++ {
				if g.n[l] > g.n[l-1] {
					t.Errorf("level %d has %d groups, more than level %d below it (%d)", l, g.n[l], l-1, g.n[l-1])
				}
			}
			inTeams := map[int][]int{}
			children := map[int][]int{}
			computers := 0
			for idx := 0; idx < g.total(); idx++ {
				g.members(idx, func(u int) { inTeams[u] = append(inTeams[u], idx) },
					func(int) { computers++ },
					func(child int) { children[idx] = append(children[idx], child) })
			}
			if tc.groups > 0 && computers != tc.computers && g.n[0] > 0 {
				t.Errorf("%d computers in groups, want %d", computers, tc.computers)
			}
			for u := 0; u < tc.users; u++ {
				got := inTeams[u]
				sort.Ints(got)
				want := g.userGroups(u)
				sort.Ints(want)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("user %d is listed by %v, but its groups are %v", u, got, want)
				}
			}
			// Each group's parents are the groups that list it.
			parents := map[int][]int{}
			for idx, cs := range children {
				for _, c := range cs {
					parents[c] = append(parents[c], idx)
				}
			}
			for idx := 0; idx < g.total(); idx++ {
				got, want := g.parents(idx), parents[idx]
				sort.Ints(got)
				sort.Ints(want)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("group %s is listed by %v, but its parents are %v", g.name(idx), want, got)
				}
			}
			// below returns the first-group users below a group, through the
			// nesting (not the cycle edges).
			var below func(idx int, out map[int]bool)
			below = func(idx int, out map[int]bool) {
				if l, j := g.level(idx); l == 0 {
					for u := j; u < tc.users; u += g.n[0] {
						out[u] = true
					}
					return
				}
				for _, c := range children[idx] {
					if l, _ := g.level(c); l < levelOf(g, idx) {
						below(c, out)
					}
				}
			}
			cycles := 0
			for idx := 0; idx < g.total(); idx++ {
				want := map[int]bool{}
				below(idx, want)
				if g.usersBelow(idx) != len(want) {
					t.Fatalf("group %s: usersBelow %d, want %d", g.name(idx), g.usersBelow(idx), len(want))
				}
				seen := map[int]bool{}
				for r := 0; r < g.usersBelow(idx); r++ {
					u := g.userAt(idx, r)
					if !want[u] || seen[u] {
						t.Fatalf("group %s: userAt(%d) = %d, not a distinct user below it", g.name(idx), r, u)
					}
					seen[u] = true
				}
				if g.cycleMember(idx) >= 0 {
					cycles++
				}
			}
			if g.top >= 1 && cycles == 0 {
				t.Errorf("no cycle among %d groups", tc.groups)
			}
			if cycles > max(1, tc.groups/100) {
				t.Errorf("%d cycles among %d groups: not rare", cycles, tc.groups)
			}
		})
	}
}

func levelOf(g *groupShape, idx int) int {
	l, _ := g.level(idx)
	return l
}

func TestSpread(t *testing.T) {
	for _, tc := range []struct {
		total int
		caps  []int
		want  string
	}{
		{0, []int{3, 4}, "[0 0]"},
		{10, []int{40, 40}, "[5 5]"},
		{11, []int{40, 40}, "[6 5]"},
		{10, []int{2, 40, 40}, "[2 4 4]"},
		{7, []int{1, 1, 5}, "[1 1 5]"},
	} {
		if got := fmt.Sprint(spread(tc.total, tc.caps)); got != tc.want {
			t.Errorf("spread(%d, %v) = %s, want %s", tc.total, tc.caps, got, tc.want)
		}
	}
}

func TestCoprimeStride(t *testing.T) {
	for n := 1; n < 200; n++ {
		s := coprimeStride(n)
		seen := map[int]bool{}
		for i := 0; i < n; i++ {
			seen[i*s%n] = true
		}
		if len(seen) != n {
			t.Fatalf("stride %d over %d visits %d values", s, n, len(seen))
		}
	}
}

// TestEmitErrorStops: an error from the callback ends the generation (the
// plan Write runs: entries parents before children, each handed to emit).
func TestEmitErrorStops(t *testing.T) {
	cfg, err := Preset(PresetDemo)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Seed = 1
	p, err := newPlan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	err = p.run(func(string, ldapschema.Attrs) error {
		calls++
		if calls == 20 {
			return io.ErrShortWrite
		}
		return nil
	})
	if err != io.ErrShortWrite || calls != 20 {
		t.Errorf("the generation returned %v after %d entries", err, calls)
	}
}
