package membership

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/cpactl/cpactl/ldapschema"
)

// referenceAncestors is Ancestors as it was before the graph numbered its
// nodes: the reference for chains and their order.
func referenceAncestors(groups []ldapschema.Group, principal string) []Ancestor {
	byKey := map[string]ldapschema.Group{}
	parents := map[string][]string{}
	for _, grp := range groups {
		key := ldapschema.NormalizeDN(grp.DN)
		byKey[key] = grp
		for _, m := range grp.Members {
			mk := ldapschema.NormalizeDN(m)
			parents[mk] = append(parents[mk], key)
		}
	}
	less := func(a, b string) bool {
		na, nb := strings.ToLower(byKey[a].Name), strings.ToLower(byKey[b].Name)
		if na != nb {
			return na < nb
		}
		return a < b
	}
	for k, ps := range parents {
		sort.Slice(ps, func(i, j int) bool { return less(ps[i], ps[j]) })
		parents[k] = ps
	}
	type node struct {
		key    string
		parent int
	}
	var visited []node
	seen := map[string]bool{ldapschema.NormalizeDN(principal): true}
	enqueue := func(from string, parent int) {
		for _, p := range parents[from] {
			if !seen[p] {
				seen[p] = true
				visited = append(visited, node{key: p, parent: parent})
			}
		}
	}
	enqueue(ldapschema.NormalizeDN(principal), -1)
	for i := 0; i < len(visited); i++ {
		enqueue(visited[i].key, i)
	}
	out := make([]Ancestor, len(visited))
	for i, n := range visited {
		var chain []ldapschema.Group
		for j := i; j >= 0; j = visited[j].parent {
			chain = append([]ldapschema.Group{byKey[visited[j].key]}, chain...)
		}
		out[i] = Ancestor{Group: byKey[n.key], Chain: chain}
	}
	return out
}

func describe(as []Ancestor) string {
	var parts []string
	for _, a := range as {
		parts = append(parts, a.Group.DN+": "+strings.Join(Names(a.Chain), " > "))
	}
	return strings.Join(parts, "\n")
}

// TestAncestorsAsBefore compares Ancestors with the reference on random
// graphs with cycles, repeated members, names that differ only by case and
// groups listed twice.
func TestAncestorsAsBefore(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	names := []string{"a", "A", "b", "Sales", "sales", "EMEA", "z"}
	for round := range 300 {
		var groups []ldapschema.Group
		var principals []string
		for u := range 3 {
			principals = append(principals, dit.User(fmt.Sprintf("u%d", u)))
		}
		n := 1 + r.IntN(10)
		for i := range n {
			principals = append(principals, dit.Group(fmt.Sprintf("g%d", i)))
		}
		for i := range n {
			var members []string
			for range r.IntN(5) {
				m := principals[r.IntN(len(principals))]
				if r.IntN(4) == 0 {
					m = strings.ToUpper(m)
				}
				members = append(members, m)
			}
			grp := ldapschema.Group{DN: dit.Group(fmt.Sprintf("g%d", i)), Name: names[r.IntN(len(names))], Members: members}
			groups = append(groups, grp)
			if r.IntN(8) == 0 { // the same entry twice, spelled otherwise
				grp.DN = strings.ToUpper(grp.DN)
				groups = append(groups, grp)
			}
		}
		g := New(groups)
		for _, p := range principals {
			if got, want := describe(ancestors(g, p)), describe(referenceAncestors(groups, p)); got != want {
				t.Fatalf("round %d, ancestors of %s:\n%s\nwant\n%s", round, p, got, want)
			}
			for _, target := range principals {
				via, ok := g.MemberOf(p, []string{target})
				var want Via
				wantOK := ldapschema.EqualDN(p, target)
				if wantOK {
					want.Direct = true
				} else {
					for _, a := range referenceAncestors(groups, p) {
						if ldapschema.EqualDN(a.Group.DN, target) {
							want, wantOK = Via{Chain: a.Chain}, true
							break
						}
					}
				}
				if ok != wantOK || via.Direct != want.Direct || strings.Join(Names(via.Chain), ">") != strings.Join(Names(want.Chain), ">") {
					t.Fatalf("round %d: MemberOf(%s, %s) = %v %+v, want %v %+v", round, p, target, ok, via, wantOK, want)
				}
			}
		}
	}
}
