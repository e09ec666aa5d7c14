package impact

// Who is entitled, and the equivalence classes of users whose requests
// resolve alike (docs/impact.md, "How the work is shared").

import (
	"encoding/binary"
	"slices"
	"sort"
	"strings"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/internal/fold"
	"github.com/cpactl/cpactl/internal/nesting"
)

// within returns the users in the groups named, directly or through nested
// groups (the walker of internal/nesting, downwards), each once, in index
// order.
func (s *state) within(groups []string) []int {
	seen := map[int]bool{}
	var out []int
	nesting.Up(groups, func(g string) []string { return s.groupGroups[fold.Key(g)] }, nesting.Once(fold.Key), func(g string) bool {
		for _, ui := range s.groupUsers[fold.Key(g)] {
			if !seen[ui] {
				seen[ui] = true
				out = append(out, ui)
			}
		}
		return false
	})
	sort.Ints(out)
	return out
}

// entitled returns the users the GE data d entitles, directly or through
// nested groups.
func (s *state) entitled(d *geData) []int {
	var groups []string
	for _, m := range d.ge.Members {
		if strings.EqualFold(string(m.Kind), string(broker.MemberGroup)) {
			groups = append(groups, m.Name)
		}
	}
	users := s.within(groups)
	for k := range d.direct {
		if ui, ok := s.users[k]; ok {
			users = append(users, ui)
		}
	}
	sort.Ints(users)
	return compact(users)
}

func compact(l []int) []int {
	out := l[:0]
	for i, v := range l {
		if i == 0 || v != l[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// class is a set of users whose requests for one GE read the same inputs
// in both states but for their names: one representative is resolved.
type class struct {
	ui      [2]int   // the representative, by index in each state (-1: absent)
	members [][2]int // every member, by index in each state
	// ids are each member's session IDs in each state, by rank, for a
	// class of users classed by their sessions; nil otherwise.
	ids [][2][]string
}

// classKey tells classes apart: a user with anything of its own (a direct
// membership, a home-site row, a session or assignment the decision reads)
// in either state is its own class (own); any other is classed by its
// immediate groups in each state, which decide everything else it reads.
type classKey struct {
	own    string
	groups [2]int32
	// With the groups, the GE's group members and the nesting the same in
	// both states and the user's immediate groups too, a user's groups
	// decide, besides the chain named in the membership line (the same
	// line before and after, so never the first difference), only whether
	// it is entitled, the group home-site rows (when the GE, its backup or
	// Home Site Redirection reads them) and, when it is not entitled, the
	// list the denial names: users alike in these share a class.
	reduced  bool
	entitled [2]bool
	rows     [2]string
	// sessions encodes what a user's sessions read (sessionKey), for a
	// user whose only records of its own are sessions.
	sessions [2]string
}

// onlySessions reports whether user ui's only records of its own that a
// request for the GE reads are sessions: no direct membership, home-site
// row or assignment.
func (e *engine) onlySessions(st *state, ui int, d *geData) bool {
	if d == nil {
		return false
	}
	k := st.userKey[ui]
	return !d.direct[k] && !st.userRows[ui] && len(st.userAssigned[ui]) == 0
}

// sessionKey encodes the sessions of a part (named by placeholders),
// every field, each string with its length before it. What else of the
// sessions the decision reads, their GEs' and their pools' records (and
// the pools' farms), the part holds too, but within one state and one GE
// it is looked up by the sessions' GE and pool names (state.user): the
// sessions decide it.
func sessionKey(p *userPart) string {
	n := 0
	for _, x := range p.sessions {
		n += len(x.ID) + len(x.User) + len(x.Entitlement) + len(x.Pod) + len(x.BrokeringPod) +
			len(x.Pool) + len(x.Host) + len(x.State) + len(x.Client) + sessionFields*4
	}
	b := make([]byte, 0, n)
	for _, x := range p.sessions {
		for _, f := range [sessionFields]string{x.ID, x.User, x.Entitlement, x.Pod, x.BrokeringPod, x.Pool, x.Host, string(x.State), x.Client} {
			b = binary.AppendUvarint(b, uint64(len(f)))
			b = append(b, f...)
		}
	}
	return string(b)
}

// sessionFields is the number of fields of a broker.Session, every one
// of which sessionKey encodes.
const sessionFields = 9

// classes groups the users the GE entitles (in either state) into classes,
// in name order of their first member.
//
// With sessions, when keys is set (the requests will be resolved), a user
// whose only records of its own are sessions is classed by what its
// sessions read, their IDs named by placeholders, with the users alike.
func (e *engine) classes(gk string, db, da *geData, only map[string]bool, keys bool) []*class {
	type pair struct {
		b, a     int
		entitled [2]bool
	}
	byName := map[string]*pair{}
	var order []string
	add := func(si int, st *state, d *geData) {
		if d == nil {
			return
		}
		for _, ui := range st.entitled(d) {
			k := st.userKey[ui]
			if only != nil && !only[k] {
				continue
			}
			p, ok := byName[k]
			if !ok {
				p = &pair{b: -1, a: -1}
				byName[k] = p
				order = append(order, k)
			}
			if si == 0 {
				p.b = ui
			} else {
				p.a = ui
			}
			p.entitled[si] = true
		}
	}
	add(0, e.b, db)
	add(1, e.a, da)
	// Users entitled in one state only still exist in the other.
	for _, k := range order {
		p := byName[k]
		if ui, ok := e.b.users[k]; ok && p.b < 0 {
			p.b = ui
		}
		if ui, ok := e.a.users[k]; ok && p.a < 0 {
			p.a = ui
		}
	}
	// Name order: the folded name (the key), then the spelling.
	names := make(map[string]string, len(order))
	for _, k := range order {
		names[k] = e.nameOf(byName[k].b, byName[k].a)
	}
	sort.Slice(order, func(i, j int) bool {
		if order[i] != order[j] {
			return order[i] < order[j]
		}
		return names[order[i]] < names[order[j]]
	})
	stableGE := db != nil && da != nil && e.groupsSame && sameGE(db, da)
	var homeRead [2]bool
	for si, st := range e.states() {
		d := [2]*geData{db, da}[si]
		homeRead[si] = d != nil && (d.ge.UseHomeSite || (d.backup != nil && d.backup.UseHomeSite) || st.f.Settings.EnableSiteRedirection)
	}
	rowsOf := [2]map[int32]string{{}, {}}
	byKey := map[classKey]*class{}
	var out []*class
	for _, k := range order {
		p := byName[k]
		key := classKey{groups: [2]int32{-1, -1}}
		if p.b >= 0 {
			key.groups[0] = e.b.groupSet[p.b]
		}
		if p.a >= 0 {
			key.groups[1] = e.a.groupSet[p.a]
		}
		var ids [2][]string
		own := e.own(e.b, p.b, db) || e.own(e.a, p.a, da)
		if own && keys && p.b >= 0 && p.a >= 0 && e.onlySessions(e.b, p.b, db) && e.onlySessions(e.a, p.a, da) {
			pb, pa := e.b.user(p.b, db), e.a.user(p.a, da)
			if pb.ids != nil && pa.ids != nil && slices.Equal(pb.ids, pa.ids) {
				key.sessions = [2]string{sessionKey(pb), sessionKey(pa)}
				ids = [2][]string{pb.ids, pa.ids}
				own = false
			}
		}
		switch {
		case own || (p.b < 0) != (p.a < 0):
			key = classKey{own: k}
		case stableGE && key.groups[0] == key.groups[1]:
			key.reduced, key.entitled = true, p.entitled
			for si, st := range e.states() {
				ui := [2]int{p.b, p.a}[si]
				if homeRead[si] {
					gs := st.groupSet[ui]
					r, ok := rowsOf[si][gs]
					if !ok {
						r = st.groupRows(ui)
						rowsOf[si][gs] = r
					}
					key.rows[si] = r
				}
				if p.entitled[si] {
					key.groups[si] = -2 // the list is not named
				}
			}
		}
		c, ok := byKey[key]
		if !ok {
			c = &class{ui: [2]int{p.b, p.a}}
			byKey[key] = c
			out = append(out, c)
		}
		c.members = append(c.members, [2]int{p.b, p.a})
		if key.sessions != [2]string{} {
			c.ids = append(c.ids, ids)
		}
	}
	return out
}

func (e *engine) nameOf(b, a int) string {
	if b >= 0 {
		return e.b.f.Users[b].Name
	}
	return e.a.f.Users[a].Name
}

// own reports whether user ui holds anything of its own that a request for
// the GE reads.
func (e *engine) own(st *state, ui int, d *geData) bool {
	if ui < 0 || d == nil {
		return false
	}
	k := st.userKey[ui]
	if st.userRows[ui] || len(st.userAssigned[ui]) > 0 || (len(d.direct) > 0 && d.direct[k]) {
		return true
	}
	for _, i := range st.userSessions[ui] {
		ek := st.sessionGE[i]
		if d.app || ek == d.key || (d.backup != nil && ek == d.backupKey) {
			return true
		}
	}
	return false
}
