package ldapschema

// The records of who and what connects: home-site rows, sessions, pod
// assignments, users, groups and client computers.

import (
	"fmt"
	"strings"

	"github.com/go-ldap/ldap/v3"
)

// HomeSite is a home-site row.
type HomeSite struct {
	DN            string
	UserDN        string // exactly one of UserDN and GroupDN
	GroupDN       string
	EntitlementDN string // "" for the global home site
	SiteDN        string
}

// HomeSiteFromEntry maps a home-site row.
func HomeSiteFromEntry(e *ldap.Entry) (HomeSite, error) {
	if err := need(e, ClassHomeSite); err != nil {
		return HomeSite{}, err
	}
	r := reader{e: e}
	h := HomeSite{DN: e.DN, UserDN: r.str(AttrUserDN), GroupDN: r.str(AttrGroupDN),
		EntitlementDN: r.str(AttrEntitlementDN), SiteDN: r.str(AttrSiteDN)}
	if (h.UserDN == "") == (h.GroupDN == "") && r.err == nil {
		r.err = fmt.Errorf("home-site row %q: needs exactly one of %s and %s", e.DN, AttrUserDN, AttrGroupDN)
	}
	return h, r.err
}

// Attrs returns the entry form of the row.
func (h HomeSite) Attrs() Attrs {
	a := Attrs{AttrObjectClass: {ClassTop, ClassHomeSite}, AttrCN: {NameOf(h.DN)}, AttrSiteDN: {h.SiteDN}}
	a.SetString(AttrUserDN, h.UserDN)
	a.SetString(AttrGroupDN, h.GroupDN)
	a.SetString(AttrEntitlementDN, h.EntitlementDN)
	return a
}

// HomeSiteManaged lists the attributes a rewrite of a row changes.
var HomeSiteManaged = []string{AttrSiteDN, AttrUserDN, AttrGroupDN, AttrEntitlementDN}

// Session is a session record.
type Session struct {
	DN             string
	ID             string
	UserDN         string
	EntitlementDN  string
	PodDN          string
	BrokeringPodDN string
	PoolDN         string
	HostDN         string
	ClientDN       string
	State          string
}

// SessionFromEntry maps a session record.
func SessionFromEntry(e *ldap.Entry) (Session, error) {
	if err := need(e, ClassSession); err != nil {
		return Session{}, err
	}
	r := reader{e: e}
	s := Session{DN: e.DN, ID: r.name(), UserDN: r.str(AttrUserDN), EntitlementDN: r.str(AttrEntitlementDN),
		PodDN: r.str(AttrPodDN), BrokeringPodDN: r.str(AttrBrokeringPodDN), PoolDN: r.str(AttrPoolDN),
		HostDN: r.str(AttrHostDN), ClientDN: r.str(AttrClientDN),
		State: r.enum(AttrSessionState, StateConnected, StateConnected, StateDisconnected)}
	return s, r.err
}

// Attrs returns the entry form of the session.
func (s Session) Attrs() Attrs {
	a := Attrs{AttrObjectClass: {ClassTop, ClassSession}, AttrCN: {s.ID}}
	a.SetString(AttrUserDN, s.UserDN)
	a.SetString(AttrEntitlementDN, s.EntitlementDN)
	a.SetString(AttrPodDN, s.PodDN)
	a.SetString(AttrBrokeringPodDN, s.BrokeringPodDN)
	a.SetString(AttrPoolDN, s.PoolDN)
	a.SetString(AttrHostDN, s.HostDN)
	a.SetString(AttrClientDN, s.ClientDN)
	a.SetString(AttrSessionState, s.State)
	return a
}

// Assignment is a pod assignment.
type Assignment struct {
	DN            string
	UserDN        string
	EntitlementDN string
	PodDN         string
	Machine       string
}

// AssignmentFromEntry maps a pod assignment.
func AssignmentFromEntry(e *ldap.Entry) (Assignment, error) {
	if err := need(e, ClassPodAssignment); err != nil {
		return Assignment{}, err
	}
	r := reader{e: e}
	a := Assignment{DN: e.DN, UserDN: r.str(AttrUserDN), EntitlementDN: r.str(AttrEntitlementDN),
		PodDN: r.str(AttrPodDN), Machine: r.str(AttrMachine)}
	return a, r.err
}

// Attrs returns the entry form of the assignment.
func (a Assignment) Attrs() Attrs {
	at := Attrs{AttrObjectClass: {ClassTop, ClassPodAssignment}, AttrCN: {NameOf(a.DN)}}
	at.SetString(AttrUserDN, a.UserDN)
	at.SetString(AttrEntitlementDN, a.EntitlementDN)
	at.SetString(AttrPodDN, a.PodDN)
	at.SetString(AttrMachine, a.Machine)
	return at
}

// AssignmentManaged lists the attributes a rewrite of an assignment changes.
var AssignmentManaged = []string{AttrPodDN, AttrMachine}

// User is a user entry (inetOrgPerson with pae-UserIdentity).
type User struct {
	DN       string
	UID      string
	Domain   string
	FullName string
}

// UserFromEntry maps a user entry.
func UserFromEntry(e *ldap.Entry) (User, error) {
	if err := need(e, ClassInetOrgPerson); err != nil {
		return User{}, err
	}
	r := reader{e: e}
	u := User{DN: e.DN, UID: r.str(AttrUID), Domain: r.str(AttrDomain), FullName: r.str(AttrCN)}
	if u.UID == "" {
		u.UID = r.name()
	}
	return u, r.err
}

// Attrs returns the entry form of the user. inetOrgPerson needs cn and sn:
// without a full name both are the uid.
func (u User) Attrs() Attrs {
	full := u.FullName
	if full == "" {
		full = u.UID
	}
	sn := full
	if i := strings.LastIndex(full, " "); i >= 0 && i < len(full)-1 {
		sn = full[i+1:]
	}
	a := Attrs{AttrObjectClass: {ClassTop, "person", "organizationalPerson", ClassInetOrgPerson, ClassUserIdentity},
		AttrUID: {u.UID}, AttrCN: {full}, AttrSN: {sn}}
	a.SetString(AttrDomain, u.Domain)
	return a
}

// UserManaged lists the attributes an update of a user rewrites.
var UserManaged = []string{AttrDomain, AttrCN, AttrSN}

// Group is a group entry.
type Group struct {
	DN          string
	Name        string
	Description string
	Members     []string // DNs of users, groups and computers
}

// GroupFromEntry maps a group entry.
func GroupFromEntry(e *ldap.Entry) (Group, error) {
	if err := need(e, ClassGroup); err != nil {
		return Group{}, err
	}
	r := reader{e: e}
	g := Group{DN: e.DN, Name: r.name(), Description: r.str(AttrDescription), Members: r.strs(AttrMember)}
	return g, r.err
}

// Attrs returns the entry form of the group.
func (g Group) Attrs() Attrs {
	a := Attrs{AttrObjectClass: {ClassTop, ClassGroup}, AttrCN: {g.Name}}
	a.SetString(AttrDescription, g.Description)
	a.Set(AttrMember, g.Members...)
	return a
}

// Computer is a client computer entry (device).
type Computer struct {
	DN          string
	Name        string
	Description string
}

// ComputerFromEntry maps a client computer entry.
func ComputerFromEntry(e *ldap.Entry) (Computer, error) {
	if err := need(e, ClassDevice); err != nil {
		return Computer{}, err
	}
	r := reader{e: e}
	return Computer{DN: e.DN, Name: r.name(), Description: r.str(AttrDescription)}, r.err
}

// Attrs returns the entry form of the computer.
func (c Computer) Attrs() Attrs {
	a := Attrs{AttrObjectClass: {ClassTop, ClassDevice}, AttrCN: {c.Name}}
	a.SetString(AttrDescription, c.Description)
	return a
}
