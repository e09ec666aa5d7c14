package generate

import "sort"

// Groups are nested in levels. Level 0 groups ("teams") hold users and
// client computers; a group of level L > 0 holds groups of level L-1: group
// j of level L holds the groups c of level L-1 with c mod n[L] = j, so every
// group above level 0 has members and the nesting is computed, not stored.
// A few groups are empty, and a few level-0 groups also hold a group of
// the top level above them: rare membership cycles, which the spec allows.
//
// User u's first group is team u mod n[0]; every eighth row of users (u div
// n[0] mod 8 = 1) is also in the next team, so some users have two groups
// at the same level (home-site conflicts). A team's users are therefore
// computed from its index too.

const levels = 4

var levelNames = [levels]string{"Team", "Department", "Division", "Region"}

// groupShape is the nesting of the groups and, for each group, the teams
// below it with the number of users they add (for "the r-th user of this
// group").
type groupShape struct {
	n      [levels]int // groups per level
	top    int         // the highest level with groups (-1: no groups but empty ones)
	empty  int         // groups with no members at all
	offset [levels + 1]int
	users  int
	comps  int
	widths [levels + 1]int
	// teams lists, for each group above level 0, the teams below it in
	// order, and cum the running count of their first-group users.
	teams [][]int
	cum   [][]int
}

func newGroupShape(groups, users, computers int) *groupShape {
	g := &groupShape{users: users, comps: computers, top: -1}
	switch {
	case groups >= 50:
		g.empty = groups / 50
	case groups >= 5:
		g.empty = 1
	}
	rest := groups - g.empty
	if rest >= 4 {
		g.n[1] = max(1, rest/5)
	}
	if rest >= 8 {
		g.n[2] = max(1, rest/25)
	}
	if rest >= 16 {
		g.n[3] = max(1, rest/125)
	}
	g.n[0] = rest - g.n[1] - g.n[2] - g.n[3]
	for l := 0; l < levels; l++ {
		g.offset[l+1] = g.offset[l] + g.n[l]
		g.widths[l] = width(g.n[l] + 1)
		if g.n[l] > 0 {
			g.top = l
		}
	}
	g.widths[levels] = width(g.empty + 1)
	g.teams = make([][]int, g.offset[levels])
	g.cum = make([][]int, g.offset[levels])
	for c := 0; c < g.n[0]; c++ {
		j := c
		for l := 1; l < levels && g.n[l] > 0; l++ {
			j %= g.n[l]
			idx := g.offset[l] + j
			g.teams[idx] = append(g.teams[idx], c)
		}
	}
	for idx := g.offset[1]; idx < g.offset[levels]; idx++ {
		total := 0
		g.cum[idx] = make([]int, len(g.teams[idx]))
		for k, c := range g.teams[idx] {
			total += g.teamUsers(c)
			g.cum[idx][k] = total
		}
	}
	return g
}

// total is the number of groups.
func (g *groupShape) total() int { return g.offset[levels] + g.empty }

// level returns a group's level (levels for an empty group) and its index
// within the level.
func (g *groupShape) level(idx int) (level, j int) {
	for l := 0; l < levels; l++ {
		if idx < g.offset[l+1] {
			return l, idx - g.offset[l]
		}
	}
	return levels, idx - g.offset[levels]
}

func (g *groupShape) name(idx int) string {
	l, j := g.level(idx)
	if l == levels {
		return numbered("Unused ", j+1, g.widths[levels])
	}
	return numbered(levelNames[l]+" ", j+1, g.widths[l])
}

// teamUsers is the number of users whose first group is team c.
func (g *groupShape) teamUsers(c int) int {
	if c >= g.users {
		return 0
	}
	return (g.users - c + g.n[0] - 1) / g.n[0]
}

// usersBelow returns the number of distinct users reachable as "first-group
// users" below the group: what userAt enumerates.
func (g *groupShape) usersBelow(idx int) int {
	l, j := g.level(idx)
	switch {
	case l == 0:
		return g.teamUsers(j)
	case l == levels:
		return 0
	}
	c := g.cum[idx]
	if len(c) == 0 {
		return 0
	}
	return c[len(c)-1]
}

// userAt returns the r-th user below the group (0 <= r < usersBelow).
func (g *groupShape) userAt(idx, r int) int {
	l, j := g.level(idx)
	if l == 0 {
		return j + r*g.n[0]
	}
	cum := g.cum[idx]
	k := sort.SearchInts(cum, r+1)
	if k > 0 {
		r -= cum[k-1]
	}
	return g.teams[idx][k] + r*g.n[0]
}

// cycleMember returns the top-level group that team c also holds (closing
// a cycle through the levels between them), or -1.
func (g *groupShape) cycleMember(c int) int {
	if g.top < 1 || c >= g.n[g.top] || c%20 != 0 {
		return -1
	}
	return g.offset[g.top] + c
}

// members lists a group's members: users, computers and groups, as indexes.
func (g *groupShape) members(idx int, user func(int), computer func(int), group func(int)) {
	l, j := g.level(idx)
	switch {
	case l == levels:
		return
	case l > 0:
		for c := j; c < g.n[l-1]; c += g.n[l] {
			group(g.offset[l-1] + c)
		}
		return
	}
	for u := j; u < g.users; u += g.n[0] {
		user(u)
	}
	if g.n[0] >= 2 {
		prev := (j - 1 + g.n[0]) % g.n[0]
		for u := prev + g.n[0]; u < g.users; u += 8 * g.n[0] {
			user(u)
		}
	}
	for k := j; k < g.comps; k += g.n[0] {
		computer(k)
	}
	if top := g.cycleMember(j); top >= 0 {
		group(top)
	}
}

// secondTeam returns the second group of user u, or -1: every eighth row
// of users is also in the next team.
func (g *groupShape) secondTeam(u int) int {
	if g.n[0] < 2 || (u/g.n[0])%8 != 1 {
		return -1
	}
	return (u%g.n[0] + 1) % g.n[0]
}

// userGroups returns the groups user u is a direct member of (the inverse
// of members for users): team u mod n[0], and the second team.
func (g *groupShape) userGroups(u int) []int {
	if g.n[0] == 0 || u >= g.users {
		return nil
	}
	out := []int{u % g.n[0]}
	if s := g.secondTeam(u); s >= 0 {
		out = append(out, s)
	}
	return out
}

// parents returns the groups group idx is a direct member of (the inverse
// of members for groups): the group of the level above that holds it, and
// for a top-level group that closes a cycle, its team.
func (g *groupShape) parents(idx int) []int {
	l, j := g.level(idx)
	if l == levels {
		return nil
	}
	var out []int
	if l+1 < levels && g.n[l+1] > 0 {
		out = append(out, g.offset[l+1]+j%g.n[l+1])
	}
	if l == g.top && g.cycleMember(j) == idx {
		out = append(out, j)
	}
	return out
}
