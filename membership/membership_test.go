package membership

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/cpactl/cpactl/ldapschema"
)

var dit = ldapschema.DIT{Base: "dc=example,dc=test"}

func group(name string, members ...string) ldapschema.Group {
	return ldapschema.Group{DN: dit.Group(name), Name: name, Members: members}
}

func TestMemberOf(t *testing.T) {
	alice := dit.User("alice")
	g := New([]ldapschema.Group{
		group("Sales", alice),
		group("EMEA", dit.Group("Sales")),
		group("All", dit.Group("EMEA"), dit.Group("Cycle")),
		group("Cycle", dit.Group("All")), // All and Cycle contain each other
		group("Also", alice),
		group("Zed", dit.Group("Also"), dit.Group("Sales")),
		group("Empty"),
	})
	tests := []struct {
		name    string
		members []string
		direct  bool
		chain   string // group names joined by " > "; "-" for not a member
	}{
		{"direct user member", []string{alice}, true, ""},
		{"immediate group", []string{dit.Group("Sales")}, false, "Sales"},
		{"nested two levels", []string{dit.Group("All")}, false, "Sales > EMEA > All"},
		{"through a cycle", []string{dit.Group("Cycle")}, false, "Sales > EMEA > All > Cycle"},
		{"shortest chain, ties by name", []string{dit.Group("Zed")}, false, "Also > Zed"},
		{"DNs compare without regard to case", []string{strings.ToUpper(dit.Group("emea"))}, false, "Sales > EMEA"},
		{"empty group", []string{dit.Group("Empty")}, false, "-"},
		{"no members", nil, false, "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			via, ok := g.MemberOf(alice, tt.members)
			if tt.chain == "-" {
				if ok {
					t.Fatalf("member via %+v, want not a member", via)
				}
				return
			}
			if !ok || via.Direct != tt.direct || strings.Join(Names(via.Chain), " > ") != tt.chain {
				t.Fatalf("got %v %+v (chain %q), want direct=%v chain %q", ok, via.Direct, Names(via.Chain), tt.direct, tt.chain)
			}
		})
	}
}

func TestAncestorsVisitEachGroupOnce(t *testing.T) {
	g := New([]ldapschema.Group{group("A", dit.Group("B"), dit.User("u")), group("B", dit.Group("A"))})
	got := ancestors(g, dit.User("u"))
	if len(got) != 2 || got[0].Group.Name != "A" || got[1].Group.Name != "B" {
		t.Fatalf("ancestors %+v", got)
	}
}

func TestWithin(t *testing.T) {
	alice, bob, pc := dit.User("alice"), dit.User("bob"), dit.Computer("pc1")
	g := New([]ldapschema.Group{
		group("Sales", alice, pc),
		group("EMEA", dit.Group("Sales"), bob),
		group("All", dit.Group("EMEA"), dit.Group("Cycle")),
		group("Cycle", dit.Group("All")), // All and Cycle contain each other
		group("Empty"),
	})
	n := ldapschema.NormalizeDN
	tests := []struct {
		name    string
		members []string
		want    []string // normalized, in any order
	}{
		{"a user member is itself", []string{alice}, []string{n(alice)}},
		{"a group and its members", []string{dit.Group("Sales")}, []string{n(dit.Group("Sales")), n(alice), n(pc)}},
		{"nested groups, through a cycle, each once", []string{dit.Group("Cycle")}, []string{n(dit.Group("Cycle")),
			n(dit.Group("All")), n(dit.Group("EMEA")), n(dit.Group("Sales")), n(bob), n(alice), n(pc)}},
		{"a member and a group holding it", []string{alice, dit.Group("Sales")}, []string{n(alice), n(dit.Group("Sales")), n(pc)}},
		{"DNs compare without regard to case", []string{strings.ToUpper(dit.Group("sales"))},
			[]string{n(dit.Group("Sales")), n(alice), n(pc)}},
		{"a DN in no group", []string{dit.User("ghost")}, []string{n(dit.User("ghost"))}},
		{"an empty group", []string{dit.Group("Empty")}, []string{n(dit.Group("Empty"))}},
		{"no members", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for k := range walkDown(g, NewSet(tt.members)) {
				got = append(got, k)
			}
			sort.Strings(got)
			want := append([]string(nil), tt.want...)
			sort.Strings(want)
			if strings.Join(got, " | ") != strings.Join(want, " | ") {
				t.Fatalf("got %q, want %q", got, want)
			}
		})
	}
}

func TestIn(t *testing.T) {
	alice := dit.User("alice")
	g := New([]ldapschema.Group{
		group("Sales", alice),
		group("All", dit.Group("Sales"), dit.Group("Cycle")),
		group("Cycle", dit.Group("All")),
	})
	tests := []struct {
		name      string
		principal string
		members   []string
		in        bool
	}{
		{"direct", alice, []string{alice}, true},
		{"through a group", alice, []string{dit.Group("All")}, true},
		{"through a cycle", alice, []string{dit.Group("Cycle")}, true},
		{"a group in itself through a cycle", dit.Group("All"), []string{dit.Group("Cycle")}, true},
		{"a group is not in its members", dit.Group("All"), []string{alice}, false},
		{"not a member", dit.User("bob"), []string{dit.Group("All")}, false},
		{"no members", alice, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := g.In(tt.principal, NewSet(tt.members)); got != tt.in {
				t.Fatalf("In = %v, want %v", got, tt.in)
			}
		})
	}
}

// TestTheThreeQuestionsAgree checks, on random graphs with cycles, that a
// principal is Within a set exactly when MemberOf and In say it is in it,
// and that a Tally counts exactly those.
func TestTheThreeQuestionsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		nGroups, nUsers := 1+r.IntN(12), 1+r.IntN(8)
		var groups []ldapschema.Group
		var principals []string
		for u := range nUsers {
			principals = append(principals, dit.User(fmt.Sprintf("u%d", u)))
		}
		for i := range nGroups {
			principals = append(principals, dit.Group(fmt.Sprintf("g%d", i)))
		}
		for i := range nGroups {
			var members []string
			for range r.IntN(4) {
				m := principals[r.IntN(len(principals))]
				if r.IntN(3) == 0 {
					m = strings.ToUpper(m)
				}
				members = append(members, m)
			}
			groups = append(groups, group(fmt.Sprintf("g%d", i), members...))
		}
		g := New(groups)
		var members []string
		for range r.IntN(4) {
			members = append(members, principals[r.IntN(len(principals))])
		}
		set := NewSet(members)
		within := map[string]bool{}
		for k := range walkDown(g, set) {
			if within[k] {
				t.Fatalf("round %d: %s yielded twice", round, k)
			}
			within[k] = true
		}
		tally := g.NewTally(principals)
		bits := tally.Within(set)
		var want []int
		for i, p := range principals {
			if within[ldapschema.NormalizeDN(p)] {
				want = append(want, i)
			}
		}
		if got := bits.First(len(principals)); bits.Count() != len(want) || fmt.Sprint(got) != fmt.Sprint(want) && len(want) > 0 {
			t.Fatalf("round %d: tally of %q: %v (%d), want %v; groups %+v", round, members, got, bits.Count(), want, groups)
		}
		for _, p := range principals {
			_, member := g.MemberOf(p, members)
			if in := g.In(p, set); in != member || within[ldapschema.NormalizeDN(p)] != member {
				t.Fatalf("round %d, %s in %q: MemberOf %v, In %v, Within %v; groups %+v", round, p, members, member, in,
					within[ldapschema.NormalizeDN(p)], groups)
			}
		}
	}
}

func TestTally(t *testing.T) {
	alice, bob, carol := dit.User("alice"), dit.User("bob"), dit.User("carol")
	g := New([]ldapschema.Group{
		group("Sales", alice),
		group("EMEA", dit.Group("Sales"), bob),
		group("All", dit.Group("EMEA"), dit.Group("Cycle")),
		group("Cycle", dit.Group("All"), carol), // All and Cycle contain each other
		group("Empty"),
	})
	// carol twice (two principals of one DN), dave in no group
	principals := []string{alice, bob, carol, dit.User("dave"), strings.ToUpper(carol)}
	tally := g.NewTally(principals)
	tests := []struct {
		name    string
		members []string
		count   int
		first   string
	}{
		{"a user member", []string{bob}, 1, "1"},
		{"a user in no group", []string{dit.User("dave")}, 1, "3"},
		{"a group", []string{dit.Group("Sales")}, 1, "0"},
		{"nested groups", []string{dit.Group("EMEA")}, 2, "0 1"},
		{"a cycle holds what each of its groups does", []string{dit.Group("Cycle")}, 4, "0 1 2"},
		{"the other group of the cycle", []string{dit.Group("All")}, 4, "0 1 2"},
		{"members that overlap count once", []string{dit.Group("Sales"), alice, dit.Group("EMEA")}, 2, "0 1"},
		{"an empty group", []string{dit.Group("Empty")}, 0, ""},
		{"a DN that is nothing", []string{dit.User("ghost")}, 0, ""},
		{"no members", nil, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tally.Within(NewSet(tt.members))
			if got := fmt.Sprint(b.First(3)); b.Count() != tt.count || strings.Trim(got, "[]") != tt.first {
				t.Fatalf("count %d, first %s; want %d, [%s]", b.Count(), got, tt.count, tt.first)
			}
		})
	}
}

// TestTallyRemembers asks one Tally many questions on random graphs with
// cycles: what it memoised from one answers the next ones right.
func TestTallyRemembers(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for round := range 300 {
		var principals, groupDNs []string
		for u := range 1 + r.IntN(70) {
			principals = append(principals, dit.User(fmt.Sprintf("u%d", u)))
		}
		nGroups := 1 + r.IntN(15)
		for i := range nGroups {
			groupDNs = append(groupDNs, dit.Group(fmt.Sprintf("g%d", i)))
		}
		all := append(append([]string{dit.User("ghost")}, principals...), groupDNs...)
		var groups []ldapschema.Group
		for i := range nGroups {
			var members []string
			for range r.IntN(6) {
				members = append(members, all[r.IntN(len(all))])
			}
			groups = append(groups, group(fmt.Sprintf("g%d", i), members...))
		}
		g := New(groups)
		tally := g.NewTally(append(principals, principals[0]))
		for q := range 10 {
			var members []string
			for range r.IntN(4) {
				members = append(members, all[r.IntN(len(all))])
			}
			set := NewSet(members)
			within := map[string]bool{}
			for k := range walkDown(g, set) {
				within[k] = true
			}
			var want []int
			for i, p := range append(principals, principals[0]) {
				if within[ldapschema.NormalizeDN(p)] {
					want = append(want, i)
				}
			}
			b := tally.Within(set)
			if got := b.First(len(want) + 1); b.Count() != len(want) || fmt.Sprint(got) != fmt.Sprint(want) && len(want) > 0 {
				t.Fatalf("round %d, question %d, %q: %v (%d), want %v; groups %+v", round, q, members, got, b.Count(), want, groups)
			}
		}
	}
}

func TestReach(t *testing.T) {
	alice, bob, carol := dit.User("alice"), dit.User("bob"), dit.User("carol")
	g := New([]ldapschema.Group{
		group("Sales", dit.Group("EMEA Sales"), bob),
		group("EMEA Sales", alice),
		group("Zed", alice, dit.Group("Loop")),
		group("Also", alice),
		group("Loop", dit.Group("Zed"), carol), // Zed and Loop contain each other
	})
	reached := func(members ...string) string {
		var out []string
		for _, r := range g.Reach(members) {
			path := "direct"
			if !r.Direct() {
				path = strings.Join(Names(r.Chain()), " > ")
			}
			out = append(out, ldapschema.NameOf(r.DN)+": "+path)
		}
		sort.Strings(out)
		return strings.Join(out, "; ")
	}
	tests := []struct {
		name    string
		members []string
		want    string
	}{
		{"nested two levels", []string{dit.Group("Sales")}, "EMEA Sales: Sales; Sales: direct; alice: Sales > EMEA Sales; bob: Sales"},
		{"a direct member stays direct", []string{dit.Group("Sales"), alice}, "EMEA Sales: Sales; Sales: direct; alice: direct; bob: Sales"},
		{"a user in no group", []string{dit.User("dave")}, "dave: direct"},
		{"the shortest chain wins", []string{dit.Group("Sales"), dit.Group("EMEA Sales")}, "EMEA Sales: direct; Sales: direct; alice: EMEA Sales; bob: Sales"},
		{"ties by group name", []string{dit.Group("Zed"), dit.Group("Also")}, "Also: direct; Loop: Zed; Zed: direct; alice: Also; carol: Zed > Loop"},
		{"a cycle ends", []string{dit.Group("Loop")}, "Loop: direct; Zed: Loop; alice: Loop > Zed; carol: Loop"},
		{"DNs compare without regard to case", []string{strings.ToUpper(dit.Group("emea sales")), alice}, "EMEA SALES: direct; alice: direct"},
		{"no members", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := reached(tc.members...); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
