package directory

import (
	"errors"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/internal/nesting"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
)

// Member is a resolved member of a group or entitlement: a user, a group or
// a client computer.
type Member struct {
	Kind string // objkind.User, objkind.Group or objkind.Computer
	Name string // the stored name (uid for users)
	DN   string
}

// String renders "user alice".
func (m Member) String() string { return m.Kind + " " + m.Name }

// memberPrefixes are the explicit forms of a member argument.
var memberPrefixes = []struct{ prefix, kind string }{
	{"user:", objkind.User}, {"group:", objkind.Group}, {"computer:", objkind.Computer},
}

// ResolveMember finds the user, group or client computer a member argument
// names. "user:NAME", "group:NAME" and "computer:NAME" say the kind; a bare
// name must match exactly one kind (users also in the DOMAIN\uid and
// uid@domain forms). A name that matches none is a *NotFoundError; one that
// matches several kinds is an error asking for a prefix.
func (s *Store) ResolveMember(arg string) (Member, error) {
	for _, p := range memberPrefixes {
		if len(arg) > len(p.prefix) && strings.EqualFold(arg[:len(p.prefix)], p.prefix) {
			return s.memberOfKind(p.kind, arg[len(p.prefix):])
		}
	}
	var found []Member
	var userErr error
	for _, p := range memberPrefixes {
		m, err := s.memberOfKind(p.kind, arg)
		var nf *ldapclient.NotFoundError
		switch {
		case errors.As(err, &nf):
			continue
		case err != nil && p.kind == objkind.User:
			userErr = err // a bad user form or domain; maybe a group or computer
			continue
		case err != nil:
			return Member{}, err
		}
		found = append(found, m)
	}
	switch len(found) {
	case 0:
		if userErr != nil {
			return Member{}, userErr
		}
		return Member{}, s.notFound(kindMember, arg)
	case 1:
		return found[0], nil
	}
	kinds := make([]string, len(found))
	for i, m := range found {
		kinds[i] = m.Kind
	}
	return Member{}, &AmbiguousError{Kind: "member", Name: arg, Kinds: kinds}
}

func (s *Store) memberOfKind(kind, name string) (Member, error) {
	switch kind {
	case objkind.User:
		u, err := s.User(name)
		return Member{Kind: kind, Name: u.UID, DN: u.DN}, err
	case objkind.Group:
		g, err := s.Group(name)
		return Member{Kind: kind, Name: g.Name, DN: g.DN}, err
	default:
		c, err := s.Computer(name)
		return Member{Kind: kind, Name: c.Name, DN: c.DN}, err
	}
}

// MemberOfDN names a member DN by where it lives in the DIT: users under
// ou=People, groups under ou=Groups, computers under ou=Computers;
// anything else is an "entry" named by its DN.
func (s *Store) MemberOfDN(dn string) Member {
	parent := ldapschema.ParentOf(dn)
	m := Member{Name: ldapschema.NameOf(dn), DN: dn}
	switch {
	case ldapschema.EqualDN(parent, s.DIT.People()):
		m.Kind = objkind.User
	case ldapschema.EqualDN(parent, s.DIT.Groups()):
		m.Kind = objkind.Group
	case ldapschema.EqualDN(parent, s.DIT.Computers()):
		m.Kind = objkind.Computer
	default:
		m.Kind, m.Name = "entry", dn
	}
	return m
}

// Entitled reports whether the user or group principalDN is a member of
// the entitlement ge, directly or through nested groups (cycles are
// tolerated). It reads one search per level of nesting.
func (s *Store) Entitled(principalDN string, ge ldapschema.Entitlement) (bool, error) {
	members := map[string]bool{}
	for _, m := range ge.Members {
		members[ldapschema.NormalizeDN(m)] = true
	}
	return s.reachesUp(principalDN, func(key string) bool { return members[key] })
}

// ReachesGroup reports whether group groupDN is reachable upwards from
// startDN through member-of links (startDN itself included): adding startDN
// as a member of groupDN then closes a cycle.
func (s *Store) ReachesGroup(startDN, groupDN string) (bool, error) {
	target := ldapschema.NormalizeDN(groupDN)
	return s.reachesUp(startDN, func(key string) bool { return key == target })
}

// reachesUp reports whether target (given normalized DNs) holds for startDN
// or for a group it is in, directly or through nested groups: one search
// per level of nesting (nesting.Levels), ending at the first level that
// holds a target.
func (s *Store) reachesUp(startDN string, target func(key string) bool) (bool, error) {
	found := false
	err := nesting.Levels([]string{startDN}, func(level []string) ([]string, bool, error) {
		for _, dn := range level {
			if target(ldapschema.NormalizeDN(dn)) {
				found = true
				return nil, true, nil
			}
		}
		parents, err := s.GroupsWithMember(level...)
		if err != nil {
			return nil, false, err
		}
		up := make([]string, len(parents))
		for i, g := range parents {
			up[i] = g.DN
		}
		return up, false, nil
	}, nesting.Once(ldapschema.NormalizeDN))
	return found, err
}

// PodsOfSite reads the pods of the site siteDN, sorted by name.
func (s *Store) PodsOfSite(siteDN string) ([]ldapschema.Pod, error) {
	return findSorted(s, s.DIT.Pods(), ldap.ScopeSingleLevel,
		ldapclient.And(ldapclient.ClassFilter(ldapschema.ClassPod), ldapclient.Filter(ldapschema.AttrSiteDN, siteDN)), ldapschema.PodFromEntry, func(x ldapschema.Pod) string { return x.Name })
}

// ConnectionServersOfPod reads the Connection Servers of the pod podDN,
// sorted by name.
func (s *Store) ConnectionServersOfPod(podDN string) ([]ldapschema.ConnectionServer, error) {
	return findSorted(s, podDN, ldap.ScopeSingleLevel, ldapclient.ClassFilter(ldapschema.ClassConnectionServer), ldapschema.ConnectionServerFromEntry, func(x ldapschema.ConnectionServer) string { return x.Name })
}
