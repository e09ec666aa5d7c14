// Package membership answers "which groups is this user (or group, or
// computer) in, directly or through nested groups, and by which chain?"
// and, the other way round, "who is in these members, directly or through
// nested groups?" over plain group records. Groups may nest and cycles are
// tolerated: each group is visited once per question. It is pure: callers
// read the groups (all of them, or those found walking upwards from a
// principal) and hand them over.
//
// Every DN is normalized once (ldapschema.NormalizeDN), when the graph or a
// Set is built; the walks then follow integer node numbers.
package membership

import (
	"math/bits"
	"sort"
	"strings"
	"sync"

	"github.com/cpactl/cpactl/internal/nesting"
	"github.com/cpactl/cpactl/ldapschema"
)

// Graph is group membership both ways: for each member DN, the groups that
// list it, and for each group, its members. It is safe for concurrent use.
type Graph struct {
	ids      map[string]int32 // normalized DN -> node
	keys     []string         // node -> normalized DN
	spelled  []string         // node -> the DN as first written (a group's DN or a member value)
	group    []int32          // node -> index in groups of the (last) group with that DN, -1 for none
	groups   []ldapschema.Group
	parents  [][]int32 // node -> the groups listing it, by name (see less)
	children [][]int32 // node -> the members of the groups with that DN
	visits   sync.Pool // of *visits
}

// New builds the graph of groups: O(G + M) normalizations and
// O(M log M) to sort each member's groups, for G groups and M memberships.
func New(groups []ldapschema.Group) *Graph {
	g := &Graph{ids: map[string]int32{}, groups: groups}
	for i, grp := range groups {
		key := g.node(ldapschema.NormalizeDN(grp.DN), grp.DN)
		g.group[key] = int32(i)
		for _, m := range grp.Members {
			mk := g.node(ldapschema.NormalizeDN(m), m)
			g.parents[mk] = append(g.parents[mk], key)
			g.children[key] = append(g.children[key], mk)
		}
	}
	lower := make([]string, len(g.keys)) // the name of each group, in lower case
	for n, i := range g.group {
		if i >= 0 {
			lower[n] = strings.ToLower(groups[i].Name)
		}
	}
	for _, ps := range g.parents {
		sort.Slice(ps, func(i, j int) bool { return g.less(lower, ps[i], ps[j]) })
	}
	return g
}

// node returns the node of a normalized DN (written dn), adding it when
// new.
func (g *Graph) node(key, dn string) int32 {
	if n, ok := g.ids[key]; ok {
		return n
	}
	n := int32(len(g.keys))
	g.ids[key] = n
	g.keys = append(g.keys, key)
	g.spelled = append(g.spelled, dn)
	g.group = append(g.group, -1)
	g.parents = append(g.parents, nil)
	g.children = append(g.children, nil)
	return n
}

// less orders groups by name, case-insensitively, then by DN.
func (g *Graph) less(lower []string, a, b int32) bool {
	if lower[a] != lower[b] {
		return lower[a] < lower[b]
	}
	return g.keys[a] < g.keys[b]
}

func (g *Graph) groupOf(n int32) ldapschema.Group {
	if i := g.group[n]; i >= 0 {
		return g.groups[i]
	}
	return ldapschema.Group{}
}

// visits marks the nodes one walk has reached. A walk takes one from the
// graph's pool and gives it back, so that walks neither allocate a mark per
// node nor clear them: a node is marked when its entry equals the walk's
// generation.
type visits struct {
	gen uint32
	at  []uint32
}

func (g *Graph) startVisits() *visits {
	v, _ := g.visits.Get().(*visits)
	if v == nil || len(v.at) != len(g.keys) {
		v = &visits{at: make([]uint32, len(g.keys))}
	}
	v.gen++
	if v.gen == 0 { // wrapped around: forget every mark
		clear(v.at)
		v.gen = 1
	}
	return v
}

// mark marks n and reports whether it was unmarked.
func (v *visits) mark(n int32) bool {
	if v.at[n] == v.gen {
		return false
	}
	v.at[n] = v.gen
	return true
}

// upwards walks breadth first from principal through the groups that list
// it (nesting.Up): shortest chains first, ties by group name, each group
// once. It stops after a step for which stop returns true, and returns the
// steps taken.
func (g *Graph) upwards(principal string, stop func(node int32) bool) []nesting.Step[int32] {
	start, ok := g.ids[ldapschema.NormalizeDN(principal)]
	if !ok {
		return nil
	}
	v := g.startVisits()
	defer g.visits.Put(v)
	v.mark(start)
	return nesting.Up(g.parents[start], func(n int32) []int32 { return g.parents[n] }, v.mark, stop)
}

// chain returns the groups from an immediate group to steps[i].
func (g *Graph) chain(steps []nesting.Step[int32], i int) []ldapschema.Group {
	nodes := nesting.Chain(steps, i)
	chain := make([]ldapschema.Group, len(nodes))
	for j, n := range nodes {
		chain[j] = g.groupOf(n)
	}
	return chain
}

// Via says how a principal is a member of a set of DNs (an entitlement's
// members): directly, or through a chain of groups.
type Via struct {
	Direct bool
	Chain  []ldapschema.Group // nil when Direct
}

// Set is a set of DNs (an entitlement's members), normalized once to be
// asked about many times.
type Set struct {
	keys []string // normalized, in the order given, without repeats
	has  map[string]bool
}

// NewSet builds the set of dns.
func NewSet(dns []string) Set {
	s := Set{keys: make([]string, 0, len(dns)), has: make(map[string]bool, len(dns))}
	for _, dn := range dns {
		if k := ldapschema.NormalizeDN(dn); !s.has[k] {
			s.has[k] = true
			s.keys = append(s.keys, k)
		}
	}
	return s
}

// Has reports whether dn is one of the set's DNs, compared as DNs.
func (s Set) Has(dn string) bool { return s.has[ldapschema.NormalizeDN(dn)] }

// MemberOf reports whether principal is in members (DNs of users, groups,
// computers), directly or through the nested groups of the graph, and by
// which chain (the shortest; ties by group names).
func (g *Graph) MemberOf(principal string, members []string) (Via, bool) {
	set := NewSet(members)
	if set.Has(principal) {
		return Via{Direct: true}, true
	}
	found := false
	steps := g.upwards(principal, func(n int32) bool {
		found = set.has[g.keys[n]]
		return found
	})
	if !found {
		return Via{}, false
	}
	return Via{Chain: g.chain(steps, len(steps)-1)}, true
}

// In reports whether principal is in s, directly or through nested groups:
// MemberOf without the chain, in O(A + M_A) for the A groups principal is
// in (directly or not) and their M_A memberships, and no allocation for
// each of them.
func (g *Graph) In(principal string, s Set) bool {
	if s.Has(principal) {
		return true
	}
	found := false
	g.upwards(principal, func(n int32) bool {
		found = s.has[g.keys[n]]
		return found
	})
	return found
}

// Reached is a DN within a set of members: a member itself, or one reached
// through nested groups.
type Reached struct {
	DN string // as written in the group or the set that lists it first
	// from is the step of the walk (walk.steps) at the group that lists
	// DN, -1 for a member of the set itself.
	from int
	walk *reachWalk
}

// reachWalk is one walk of Reach, shared by what it reached: a chain is
// built only when asked for, so that the walk holds one step per DN
// reached, whatever the depth.
type reachWalk struct {
	g     *Graph
	steps []nesting.Step[int32]
}

// Direct reports whether DN is a member of the set itself.
func (r Reached) Direct() bool { return r.from < 0 }

// Chain returns the groups from a member of the set down to the group that
// lists DN (the shortest chain; ties by group name); nil for a member of
// the set itself. It is built for the call: O(its length).
func (r Reached) Chain() []ldapschema.Group {
	if r.from < 0 {
		return nil
	}
	return r.walk.g.chain(r.walk.steps, r.from)
}

// Reach returns every DN within members, each once: the members (in the
// order given) and, breadth first through nested groups (nesting.Up
// downwards), every member of their groups, whose chain (Reached.Chain) is
// the shortest; among chains of one length, the one through groups first
// by name. Groups themselves are among the DNs returned. Cycles end the
// walk. Cost: O(R + M_R log M_R) time and O(R) memory for the R DNs
// reached and the M_R memberships of the groups among them; each chain
// asked for then costs its length (chains are not kept: a chain of 20,000
// nested groups would otherwise keep 20,000 chains of up to 20,000
// groups).
func (g *Graph) Reach(members []string) []Reached {
	set := NewSet(members)
	var out []Reached
	var first []int32
	spelled := map[string]string{}
	for _, dn := range members {
		if k := ldapschema.NormalizeDN(dn); spelled[k] == "" {
			spelled[k] = dn
		}
	}
	for _, k := range set.keys {
		if n, ok := g.ids[k]; ok {
			first = append(first, n)
		} else { // in no group and no group itself
			out = append(out, Reached{DN: spelled[k], from: -1})
		}
	}
	name := func(n int32) string {
		if grp := g.groupOf(n); grp.DN != "" {
			return strings.ToLower(grp.Name)
		}
		return g.keys[n]
	}
	byName := func(nodes []int32) []int32 {
		sorted := append([]int32(nil), nodes...)
		sort.SliceStable(sorted, func(i, j int) bool {
			if a, b := name(sorted[i]), name(sorted[j]); a != b {
				return a < b
			}
			return g.keys[sorted[i]] < g.keys[sorted[j]]
		})
		return sorted
	}
	v := g.startVisits()
	defer g.visits.Put(v)
	walk := &reachWalk{g: g}
	walk.steps = nesting.Up(byName(first), func(n int32) []int32 { return byName(g.children[n]) }, v.mark, nil)
	for _, st := range walk.steps {
		r := Reached{DN: g.spelled[st.Node], from: st.From, walk: walk}
		if st.From < 0 {
			if dn := spelled[g.keys[st.Node]]; dn != "" {
				r.DN = dn
			}
		}
		out = append(out, r)
	}
	return out
}

// Tally counts, for many sets of members, the principals of interest
// (users, say) within each, directly or through nested groups, and names
// the first of them. It is the downward question asked for every
// entitlement at once: what each group holds is computed once, as a bit
// set over the principals, over the strongly connected components of the
// nesting (a cycle of groups holds what each of them does), and memoised;
// a set of members is then the union of its members' bit sets.
//
// Cost, for P principals and w = ⌈P/64⌉ words per bit set: O(P) to build;
// the first question reaching a group costs O(M' + (G' + M'_g)·w) for the
// G' groups newly reached, their M' memberships and the M'_g of those that
// nest a group; each question then O(k·w) for its k members. Memory: w
// words per group reached. (Walking down from each set instead would cost
// up to the whole graph per set; keeping each group's principals as a list
// would cost up to P words per group and nesting level.)
type Tally struct {
	g     *Graph
	words int
	own   map[int32][]int32  // node -> the principals (numbers) it is
	loose map[string][]int32 // normalized DN -> the principals not in the graph
	scc   []int32            // node -> its component, -1 before it is reached
	sets  [][]uint64         // component -> the principals within it
}

// NewTally prepares counting principals (DNs; principal i is principals[i],
// and a DN given twice is two principals).
func (g *Graph) NewTally(principals []string) *Tally {
	t := &Tally{g: g, words: (len(principals) + 63) / 64, own: map[int32][]int32{}, loose: map[string][]int32{},
		scc: make([]int32, len(g.keys))}
	for i := range t.scc {
		t.scc[i] = -1
	}
	for i, dn := range principals {
		k := ldapschema.NormalizeDN(dn)
		if n, ok := g.ids[k]; ok {
			t.own[n] = append(t.own[n], int32(i))
		} else {
			t.loose[k] = append(t.loose[k], int32(i))
		}
	}
	return t
}

// Bits is a set of principals of a Tally, by number.
type Bits []uint64

func (b Bits) add(i int32) { b[i/64] |= 1 << (i % 64) }

func (b Bits) or(c Bits) {
	for i, w := range c {
		b[i] |= w
	}
}

// AndNot takes the principals of c out of b; a nil c takes nothing out.
func (b Bits) AndNot(c Bits) {
	for i, w := range c {
		b[i] &^= w
	}
}

// Add puts principal i in the set.
func (b Bits) Add(i int) { b.add(int32(i)) }

// Count returns how many principals the set holds.
func (b Bits) Count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// First returns the numbers of the first n principals of the set, in
// order.
func (b Bits) First(n int) []int {
	var out []int
	for i, w := range b {
		for ; w != 0 && len(out) < n; w &= w - 1 {
			out = append(out, i*64+bits.TrailingZeros64(w))
		}
		if len(out) == n {
			break
		}
	}
	return out
}

// Within returns the principals in s, directly or through nested groups
// (what walking down from s, each group once, reaches).
func (t *Tally) Within(s Set) Bits {
	out := make(Bits, t.words)
	for _, k := range s.keys {
		n, ok := t.g.ids[k]
		switch {
		case !ok:
			for _, i := range t.loose[k] {
				out.add(i)
			}
		case len(t.g.children[n]) == 0:
			for _, i := range t.own[n] {
				out.add(i)
			}
		default:
			out.or(t.reach(n))
		}
	}
	return out
}

// reach returns the principals within group node start, computing the
// components it reaches that are not known yet (Tarjan's algorithm, without
// recursion; nodes without members are not components: their principals
// go straight into their groups' sets).
func (t *Tally) reach(start int32) Bits {
	if c := t.scc[start]; c >= 0 {
		return t.sets[c]
	}
	g := t.g
	index, low := map[int32]int32{}, map[int32]int32{}
	onStack := map[int32]bool{}
	var stack []int32
	type frame struct {
		node int32
		next int // the next child to look at
	}
	calls := []frame{{node: start}}
	index[start], low[start] = 0, 0
	stack, onStack[start] = append(stack, start), true
	counter := int32(1)
	for len(calls) > 0 {
		f := &calls[len(calls)-1]
		v := f.node
		if f.next < len(g.children[v]) {
			c := g.children[v][f.next]
			f.next++
			switch _, seen := index[c]; {
			case len(g.children[c]) == 0 || t.scc[c] >= 0: // a member without members, or a known component
			case !seen:
				index[c], low[c] = counter, counter
				counter++
				stack, onStack[c] = append(stack, c), true
				calls = append(calls, frame{node: c})
			case onStack[c]:
				low[v] = min(low[v], index[c])
			}
			continue
		}
		calls = calls[:len(calls)-1]
		if len(calls) > 0 {
			parent := calls[len(calls)-1].node
			low[parent] = min(low[parent], low[v])
		}
		if low[v] != index[v] {
			continue
		}
		// v roots a component: the nodes above it on the stack.
		id := int32(len(t.sets))
		i := len(stack) - 1
		for stack[i] != v {
			i--
		}
		members := stack[i:]
		stack = stack[:i]
		for _, u := range members {
			onStack[u] = false
			t.scc[u] = id
		}
		set := make(Bits, t.words)
		for _, u := range members {
			for _, p := range t.own[u] {
				set.add(p)
			}
			for _, c := range g.children[u] {
				switch {
				case len(g.children[c]) == 0:
					for _, p := range t.own[c] {
						set.add(p)
					}
				case t.scc[c] != id:
					set.or(t.sets[t.scc[c]])
				}
			}
		}
		t.sets = append(t.sets, set)
	}
	return t.sets[t.scc[start]]
}

// Names returns the names of groups, in order.
func Names(groups []ldapschema.Group) []string {
	out := make([]string, len(groups))
	for i, grp := range groups {
		out[i] = grp.Name
	}
	return out
}
