package broker

// Membership of global entitlements, through nested groups (docs/resolve.md step 1).

import (
	"strings"

	"github.com/cpactl/cpactl/internal/fold"
	"github.com/cpactl/cpactl/internal/nesting"
)

// memberGroups returns what tells the groups that are members of ge by
// name: a few of them are scanned with strings.EqualFold, more are put
// in a map by folded name.
func memberGroups(ge *Entitlement) func(name string) bool {
	n := 0
	for _, mem := range ge.Members {
		if strings.EqualFold(string(mem.Kind), string(MemberGroup)) {
			n++
		}
	}
	if n <= scanned {
		return func(name string) bool {
			for _, mem := range ge.Members {
				if strings.EqualFold(string(mem.Kind), string(MemberGroup)) && strings.EqualFold(mem.Name, name) {
					return true
				}
			}
			return false
		}
	}
	m := make(map[string]bool, n)
	for _, mem := range ge.Members {
		if strings.EqualFold(string(mem.Kind), string(MemberGroup)) {
			m[foldKey(mem.Name)] = true
		}
	}
	return func(name string) bool { return get(m, name) }
}

// directUserMember reports whether user is itself listed as a member of ge.
func directUserMember(ge *Entitlement, user string) bool {
	for _, mem := range ge.Members {
		if strings.EqualFold(string(mem.Kind), string(MemberUser)) && strings.EqualFold(mem.Name, user) {
			return true
		}
	}
	return false
}

// groupName is the stored spelling of a group referenced as name.
func (ix *index) groupName(name string) string {
	if g := ix.group(name); g != nil {
		return g.Name
	}
	return name
}

// groupChain searches, breadth first, from the immediate groups start up
// through the groups they are members of, for a group target accepts. It returns the chain of groups from an immediate group to the
// target (the shortest one; ties go to names in name order), or nil. Cycles
// are tolerated: each group is visited once (nesting.Up).
func (ix *index) groupChain(start []string, target func(name string) bool) []string {
	// stored returns names in name order, each in its stored spelling.
	stored := func(names []string) []string {
		sorted := append([]string(nil), names...)
		sortNames(sorted)
		for i, n := range sorted {
			sorted[i] = ix.groupName(n)
		}
		return sorted
	}
	next := func(name string) []string {
		if g := ix.group(name); g != nil {
			return stored(g.Groups)
		}
		return nil
	}
	found := false
	steps := nesting.Up(stored(start), next, nesting.Once(foldKey), func(name string) bool {
		found = target(name)
		return found
	})
	if !found {
		return nil
	}
	return nesting.Chain(steps, len(steps)-1)
}

// userEntitlement says how user is a member of ge: direct reports a direct
// user membership; otherwise chain is the group chain from one of the user's
// immediate groups to a group that is a member of ge. ok is false when the
// user is not a member.
func (ix *index) userEntitlement(ge *Entitlement, user *User) (direct bool, chain []string, ok bool) {
	if directUserMember(ge, user.Name) {
		return true, nil, true
	}
	chain = ix.groupChain(user.Groups, memberGroups(ge))
	return false, chain, chain != nil
}

// computerEntitlement returns the group chain by which client computer c is
// a member of a group that is itself a member of ge (client restrictions),
// or nil.
func (ix *index) computerEntitlement(ge *Entitlement, c *Computer) []string {
	return ix.groupChain(c.Groups, memberGroups(ge))
}

// tagsMatch applies the Connection Server restriction tags: a GE without
// tags may be brokered by any server; a GE with tags only by a server holding
// at least one of them (so never by a server without tags). It returns the
// tags the server and the GE share.
func tagsMatch(geTags, serverTags []string) (ok bool, shared []string) {
	if len(geTags) == 0 {
		return true, nil
	}
	for _, t := range serverTags {
		if fold.Contains(geTags, t) && !fold.Contains(shared, t) {
			shared = append(shared, t)
		}
	}
	return len(shared) > 0, shared
}
