package membership

// The questions the graph answers for tests only: the reference walks the
// Tally and MemberOf are checked against.

import (
	"iter"

	"github.com/cpactl/cpactl/internal/nesting"
	"github.com/cpactl/cpactl/ldapschema"
)

// Ancestor is a group a principal belongs to, with the chain that leads
// there.
type Ancestor struct {
	Group ldapschema.Group
	// Chain lists the groups from the principal's immediate group to Group
	// (Group last); its length is the nesting depth.
	Chain []ldapschema.Group
}

// ancestors returns every group principal (a DN) is in, directly or through
// nested groups, breadth first: shortest chains first, ties by group name.
// Each group appears once, with its shortest chain.
func ancestors(g *Graph, principal string) []Ancestor {
	steps := g.upwards(principal, nil)
	out := make([]Ancestor, len(steps))
	for i, s := range steps {
		out[i] = Ancestor{Group: g.groupOf(s.Node), Chain: g.chain(steps, i)}
	}
	return out
}

// walkDown yields, each once, the normalized DNs of s and of everything nested
// in it: the members of its groups, their groups' members, and so on, breadth
// first. It is the downward question ("who is entitled?") asked once for a
// set, where MemberOf asks it for one principal: O(R + M_R) for the R DNs
// reached and the M_R memberships of the groups among them, each group
// expanded once.
func walkDown(g *Graph, s Set) iter.Seq[string] {
	return func(yield func(string) bool) {
		v := g.startVisits()
		defer g.visits.Put(v)
		var first []int32
		for _, k := range s.keys {
			n, ok := g.ids[k]
			if !ok { // in no group and no group itself
				if !yield(k) {
					return
				}
				continue
			}
			first = append(first, n)
		}
		nesting.Up(first, func(n int32) []int32 { return g.children[n] }, v.mark,
			func(n int32) bool { return !yield(g.keys[n]) })
	}
}
