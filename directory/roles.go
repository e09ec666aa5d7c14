package directory

// Roles: who the connection is, which of cpactl's roles it holds (through
// nested groups too), and the role groups themselves (cpactl init --roles,
// cpactl role). slapd enforces the roles (ldapschema/acl.go); cpactl reads
// the groups only to say who is refused and what would allow it.

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/internal/fold"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
)

// Identity is who a connection is, and its roles.
type Identity struct {
	// DN is the bound identity's DN ("" when anonymous). For SASL
	// EXTERNAL over ldapi it is the authorization identity slapd maps
	// the peer to (gidNumber=...+uidNumber=...,cn=peercred,...).
	DN string
	// Anonymous: the connection did not bind.
	Anonymous bool
	// Roles are the roles it holds, from the least to the most allowed.
	Roles []ldapschema.Role
	// Through says, for a role held through nested groups, the groups
	// between the role's group and the identity (outermost first).
	Through map[ldapschema.Role][]string
	// Unknown is why the roles could not be read ("" when they were).
	Unknown string
}

// Name renders the identity for a message: its DN, or "anonymous".
func (id Identity) Name() string {
	if id.Anonymous || id.DN == "" {
		return "anonymous"
	}
	return id.DN
}

// RolesText renders its roles: "helpdesk", "operator, helpdesk", "no role",
// or "roles unknown" when they could not be read.
func (id Identity) RolesText() string {
	switch {
	case id.Unknown != "":
		return "roles unknown"
	case len(id.Roles) == 0:
		return "no role"
	}
	names := make([]string, len(id.Roles))
	for i, r := range id.Roles {
		names[len(id.Roles)-1-i] = string(r)
	}
	return strings.Join(names, ", ")
}

// Holds reports whether the identity holds role r or one that allows
// more.
func (id Identity) Holds(r ldapschema.Role) bool { return ldapschema.Highest(id.Roles).Allows(r) }

// whoAmI asks the server who the connection is (RFC 4532 "Who am I?").
func whoAmI(c *ldapconn.Conn) (Identity, error) {
	authzID, err := c.WhoAmI()
	if err != nil {
		return Identity{}, fmt.Errorf("who am I: %s", ldapclient.Describe(err))
	}
	dn, isDN := strings.CutPrefix(authzID, "dn:")
	switch {
	case authzID == "":
		return Identity{Anonymous: true}, nil
	case isDN:
		return Identity{DN: dn}, nil
	}
	return Identity{DN: authzID}, nil
}

// WhoAmI returns who the store's connection is and the roles it holds.
// Roles that cannot be read (an anonymous connection reads no role group)
// are said in Identity.Unknown, not as an error.
func (s *Store) WhoAmI() (Identity, error) {
	c, ok := s.Client.(*ldapconn.Conn)
	if !ok {
		return Identity{}, errors.New("who the connection is needs a server, not an LDIF snapshot")
	}
	id, err := whoAmI(c)
	if err != nil {
		return id, err
	}
	if id.Anonymous {
		id.Unknown = "an anonymous connection reads no role group"
		return id, nil
	}
	groups, err := s.RoleGroups()
	// A base below the federation's (init -b of a new one): the role
	// groups are those of the base above it that holds them.
	for up := ldapschema.ParentOf(s.DIT.Base); err != nil && up != ""; up = ldapschema.ParentOf(up) {
		var layout *ldapconn.LayoutError
		if !errors.As(err, &layout) || !layout.Roles {
			break
		}
		groups, err = (&Store{Client: s.Client, DIT: ldapschema.DIT{Base: up}}).RoleGroups()
	}
	if err != nil {
		id.Unknown = err.Error()
		return id, nil
	}
	id.Through = map[ldapschema.Role][]string{}
	me := ldapschema.NormalizeDN(id.DN)
	for _, g := range groups {
		if chain, ok := g.Chain[me]; ok {
			id.Roles = append(id.Roles, g.Role)
			if len(chain) > 0 {
				id.Through[g.Role] = chain
			}
		}
	}
	return id, nil
}

// RoleGroup is a role's group as the directory holds it.
type RoleGroup struct {
	Role   ldapschema.Role
	DN     string
	Exists bool
	// Members are its direct members (the placeholder left out).
	Members []string
	// Chain maps each member, direct or through nested groups
	// (normalized DN), to the groups between the role's group and it
	// (none for a direct member).
	Chain map[string][]string
	// Unreadable lists nested groups that could not be read: their
	// members are not in Chain.
	Unreadable []string
}

// RoleGroups reads the three role groups and the groups nested in them
// (each group once: a loop of groups ends). A role group that does not
// exist is returned with Exists false; ou=Roles missing is a *LayoutError
// whose hint names `cpactl init --roles`.
func (s *Store) RoleGroups() ([]RoleGroup, error) {
	known := map[string]*ldap.Entry{}
	err := s.Each(s.DIT.Roles(), ldap.ScopeWholeSubtree, ldapclient.AnyEntry, []string{ldapschema.AttrObjectClass, ldapschema.AttrMember},
		func(e *ldap.Entry) error {
			known[ldapschema.NormalizeDN(e.DN)] = e
			return nil
		})
	var layout *ldapconn.LayoutError
	if errors.As(err, &layout) && layout.DN == s.DIT.Roles() {
		layout.Roles = true
		return nil, layout
	}
	if err != nil {
		return nil, err
	}
	read := func(dn string) (*ldap.Entry, bool) {
		k := ldapschema.NormalizeDN(dn)
		if e, ok := known[k]; ok {
			return e, e != nil
		}
		e, err := s.Entry(dn, ldapschema.AttrObjectClass, ldapschema.AttrMember)
		if err != nil {
			e = nil
		}
		known[k] = e
		return e, e != nil
	}
	var out []RoleGroup
	for _, d := range ldapschema.Roles {
		g := RoleGroup{Role: d.Role, DN: s.DIT.RoleGroup(d.Role), Chain: map[string][]string{}}
		e, ok := known[ldapschema.NormalizeDN(g.DN)]
		if !ok || e == nil {
			out = append(out, g)
			continue
		}
		g.Exists = true
		g.Members = members(e)
		// Breadth first from the role's group: each group once.
		type step struct {
			dn    string
			chain []string
		}
		seen := map[string]bool{ldapschema.NormalizeDN(g.DN): true}
		queue := []step{{dn: g.DN}}
		for len(queue) > 0 {
			at := queue[0]
			queue = queue[1:]
			group, _ := read(at.dn)
			for _, m := range members(group) {
				k := ldapschema.NormalizeDN(m)
				if seen[k] {
					continue
				}
				seen[k] = true
				g.Chain[k] = at.chain
				me, ok := read(m)
				switch {
				case ok && isGroup(me):
					queue = append(queue, step{dn: m, chain: append(slices.Clone(at.chain), m)})
				case !ok && ldapschema.IsUnder(m, s.DIT.Base):
					// An entry this bind may not read: it may be a group
					// whose members hold the role too.
					g.Unreadable = append(g.Unreadable, m)
				}
			}
		}
		out = append(out, g)
	}
	return out, nil
}

// members returns a group's member values, the placeholder left out.
func members(e *ldap.Entry) []string {
	if e == nil {
		return nil
	}
	var out []string
	for _, m := range e.GetEqualFoldAttributeValues(ldapschema.AttrMember) {
		if m != ldapschema.NoMember {
			out = append(out, m)
		}
	}
	return out
}

// isGroup reports whether an entry holds members.
func isGroup(e *ldap.Entry) bool {
	classes := e.GetEqualFoldAttributeValues(ldapschema.AttrObjectClass)
	return fold.Contains(classes, ldapschema.ClassGroupOfNames) || fold.Contains(classes, "groupOfUniqueNames") ||
		fold.Contains(classes, ldapschema.ClassGroup)
}

// bindClasses are standard classes, beyond those ldapschema knows, whose
// entries may hold a userPassword (RFC 4524, RFC 2307).
var bindClasses = []string{ldapschema.ClassSimpleSecurityObject, "posixAccount", "shadowAccount"}

// canBind reports whether an entry of these classes may hold a
// userPassword, so that it can bind.
func canBind(classes []string) bool {
	for _, c := range bindClasses {
		if fold.Contains(classes, c) {
			return true
		}
	}
	must, may, _ := ldapschema.ClassRules(classes)
	return must["userpassword"] || may["userpassword"]
}

// RolesLayout returns the entries `cpactl init --roles` creates: ou=Roles
// and the three role groups, each with the placeholder member only.
func RolesLayout(dit ldapschema.DIT) []LayoutEntry {
	out := []LayoutEntry{{dit.Roles(), ldapschema.Attrs{ldapschema.AttrObjectClass: {ldapschema.ClassTop, ldapschema.ClassOrganizationalUnit},
		ldapschema.AttrOU: {ldapschema.NameOf(dit.Roles())}}}}
	for _, d := range ldapschema.Roles {
		out = append(out, LayoutEntry{dit.RoleGroup(d.Role), ldapschema.Attrs{
			ldapschema.AttrObjectClass: {ldapschema.ClassTop, ldapschema.ClassGroupOfNames},
			ldapschema.AttrCN:          {d.Group},
			ldapschema.AttrMember:      {ldapschema.NoMember}}})
	}
	return out
}

// MemberKindError says a DN cannot be a role's member (exit code 1): it
// can neither bind nor hold members.
type MemberKindError struct {
	DN      string
	Classes []string
}

func (e *MemberKindError) Error() string {
	return fmt.Sprintf("%s (object classes %s) can neither bind (its classes allow no userPassword) nor hold members",
		e.DN, strings.Join(e.Classes, ", "))
}

// LastAdminError says a removal would leave the admin role without a
// member (exit code 1): only the root DN could manage the roles then.
type LastAdminError struct{ DN string }

func (e *LastAdminError) Error() string {
	return fmt.Sprintf("%s is the admin role's last member: removing it would leave only the root DN able to manage roles", e.DN)
}

// RoleMemberChange is what AddRoleMember and RemoveRoleMember did.
type RoleMemberChange struct {
	Changed bool // false: it was (not) a member already
}

// AddRoleMember makes dn a direct member of r's group. dn must be an
// entry that can bind (its classes allow userPassword) or hold members;
// one that does not exist is a *NotFoundError.
func (s *Store) AddRoleMember(r ldapschema.Role, dn string, dryRun bool) (RoleMemberChange, error) {
	group, err := s.roleGroupEntry(r)
	if err != nil {
		return RoleMemberChange{}, err
	}
	e, err := s.Entry(dn, ldapschema.AttrObjectClass)
	var refused *RefusedError
	if errors.As(err, &refused) {
		// A bind that may not read the entry may not change the group
		// either: say so, rather than that it needs to read.
		refused.Action, refused.Object = "change", s.DIT.Describe(group.DN)
		refused.Attrs, refused.Needs = []string{ldapschema.AttrMember}, ldapschema.RoleAdmin
		return RoleMemberChange{}, refused
	}
	if err != nil {
		return RoleMemberChange{}, err
	}
	if e == nil {
		return RoleMemberChange{}, &ldapclient.NotFoundError{Kind: objkind.Entry, Name: dn}
	}
	classes := e.GetEqualFoldAttributeValues(ldapschema.AttrObjectClass)
	if !isGroup(e) && !canBind(classes) {
		return RoleMemberChange{}, &MemberKindError{DN: dn, Classes: classes}
	}
	if slices.ContainsFunc(members(group), func(m string) bool { return ldapschema.EqualDN(m, dn) }) {
		return RoleMemberChange{}, nil
	}
	if dryRun {
		return RoleMemberChange{Changed: true}, nil
	}
	err = s.Update(group.DN, []ldap.Change{{Operation: ldap.AddAttribute,
		Modification: ldap.PartialAttribute{Type: ldapschema.AttrMember, Vals: []string{dn}}}})
	return RoleMemberChange{Changed: err == nil}, err
}

// RemoveRoleMember removes dn from r's direct members. Removing the admin
// role's last member is a *LastAdminError.
func (s *Store) RemoveRoleMember(r ldapschema.Role, dn string, dryRun bool) (RoleMemberChange, error) {
	group, err := s.roleGroupEntry(r)
	if err != nil {
		return RoleMemberChange{}, err
	}
	var value string
	var others int
	for _, m := range members(group) {
		if ldapschema.EqualDN(m, dn) {
			value = m
		} else {
			others++
		}
	}
	switch {
	case value == "":
		return RoleMemberChange{}, nil
	case r == ldapschema.RoleAdmin && others == 0:
		return RoleMemberChange{}, &LastAdminError{DN: dn}
	case dryRun:
		return RoleMemberChange{Changed: true}, nil
	}
	err = s.Update(group.DN, []ldap.Change{{Operation: ldap.DeleteAttribute,
		Modification: ldap.PartialAttribute{Type: ldapschema.AttrMember, Vals: []string{value}}}})
	return RoleMemberChange{Changed: err == nil}, err
}

// roleGroupEntry reads r's group (remembering its entryCSN, for Update);
// missing, it is a *LayoutError whose hint names `cpactl init --roles`.
func (s *Store) roleGroupEntry(r ldapschema.Role) (*ldap.Entry, error) {
	dn := s.DIT.RoleGroup(r)
	e, err := s.Entry(dn)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, &ldapconn.LayoutError{Base: s.DIT.Base, DN: dn, BaseExists: true, Roles: true}
	}
	return e, nil
}

// InitRoles creates what RolesLayout lists, skipping what exists; with
// dryRun it reports what it would create.
func (s *Store) InitRoles(dryRun bool) ([]InitStep, error) {
	var steps []InitStep
	for _, w := range RolesLayout(s.DIT) {
		e, err := s.Entry(w.DN, "1.1")
		if err != nil {
			return steps, err
		}
		if e != nil {
			steps = append(steps, InitStep{DN: w.DN})
			continue
		}
		if !dryRun {
			if err := s.Add(s.Client, w.DN, w.Attrs); err != nil {
				return steps, err
			}
		}
		steps = append(steps, InitStep{DN: w.DN, Created: true})
	}
	return steps, nil
}
