// Package membership answers "which groups is this user (or group, or
// computer) in, directly or through nested groups, and by which chain?"
// over plain group records. Groups may nest and cycles are tolerated: each
// group is visited once. It is pure: callers read the groups (all of them,
// or those found walking upwards from a principal) and hand them over.
package membership

import (
	"sort"
	"strings"

	"github.com/cpactl/cpactl/ldapschema"
)

// Graph is group membership turned upside down: for each member DN, the
// groups that list it.
type Graph struct {
	groups  map[string]ldapschema.Group // by normalized DN
	parents map[string][]string         // normalized member DN -> normalized group DNs
}

// New builds the graph of groups.
func New(groups []ldapschema.Group) *Graph {
	g := &Graph{groups: map[string]ldapschema.Group{}, parents: map[string][]string{}}
	for _, grp := range groups {
		key := ldapschema.NormalizeDN(grp.DN)
		g.groups[key] = grp
		for _, m := range grp.Members {
			mk := ldapschema.NormalizeDN(m)
			g.parents[mk] = append(g.parents[mk], key)
		}
	}
	for k, ps := range g.parents {
		sort.Slice(ps, func(i, j int) bool { return g.less(ps[i], ps[j]) })
		g.parents[k] = ps
	}
	return g
}

// less orders groups by name, case-insensitively, then by DN.
func (g *Graph) less(a, b string) bool {
	na, nb := strings.ToLower(g.groups[a].Name), strings.ToLower(g.groups[b].Name)
	if na != nb {
		return na < nb
	}
	return a < b
}

// Ancestor is a group a principal belongs to, with the chain that leads
// there.
type Ancestor struct {
	Group ldapschema.Group
	// Chain lists the groups from the principal's immediate group to Group
	// (Group last); its length is the nesting depth.
	Chain []ldapschema.Group
}

// Ancestors returns every group principal (a DN) is in, directly or through
// nested groups, breadth first: shortest chains first, ties by group name.
// Each group appears once, with its shortest chain.
func (g *Graph) Ancestors(principal string) []Ancestor {
	type node struct {
		key    string
		parent int // index in visited, -1 for an immediate group
	}
	var visited []node
	seen := map[string]bool{ldapschema.NormalizeDN(principal): true}
	enqueue := func(from string, parent int) {
		for _, p := range g.parents[from] {
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
			chain = append([]ldapschema.Group{g.groups[visited[j].key]}, chain...)
		}
		out[i] = Ancestor{Group: g.groups[n.key], Chain: chain}
	}
	return out
}

// Via says how a principal is a member of a set of DNs (an entitlement's
// members): directly, or through a chain of groups.
type Via struct {
	Direct bool
	Chain  []ldapschema.Group // nil when Direct
}

// MemberOf reports whether principal is in members (DNs of users, groups,
// computers), directly or through the nested groups of the graph, and by
// which chain (the shortest; ties by group names).
func (g *Graph) MemberOf(principal string, members []string) (Via, bool) {
	set := map[string]bool{}
	for _, m := range members {
		set[ldapschema.NormalizeDN(m)] = true
	}
	if set[ldapschema.NormalizeDN(principal)] {
		return Via{Direct: true}, true
	}
	for _, a := range g.Ancestors(principal) {
		if set[ldapschema.NormalizeDN(a.Group.DN)] {
			return Via{Chain: a.Chain}, true
		}
	}
	return Via{}, false
}

// Names returns the names of groups, in order.
func Names(groups []ldapschema.Group) []string {
	out := make([]string, len(groups))
	for i, grp := range groups {
		out[i] = grp.Name
	}
	return out
}
