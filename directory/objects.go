package directory

import (
	"slices"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
)

// Kind names used in messages and NotFoundError.
const (
	// kindMember is what a member argument names (ResolveMember).
	kindMember = "user, group or computer"
)

// findNamed finds the single entry of a class named name under base.
func (s *Store) findNamed(kind, name, base string, scope int, class, nameAttr string) (*ldap.Entry, error) {
	e, err := s.FindOne(kind, name, base, scope, ldapclient.And(ldapclient.ClassFilter(class), ldapclient.Filter(nameAttr, name)))
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, s.notFound(kind, name)
	}
	return e, nil
}

// Site reads the named site.
func (s *Store) Site(name string) (ldapschema.Site, error) {
	e, err := s.findNamed(objkind.Site, name, s.DIT.Sites(), ldap.ScopeSingleLevel, ldapschema.ClassSite, ldapschema.AttrCN)
	if err != nil {
		return ldapschema.Site{}, err
	}
	return ldapschema.SiteFromEntry(e)
}

// Sites reads every site, sorted by name.
func (s *Store) Sites() ([]ldapschema.Site, error) {
	return findSorted(s, s.DIT.Sites(), ldap.ScopeSingleLevel, ldapclient.ClassFilter(ldapschema.ClassSite), ldapschema.SiteFromEntry, func(x ldapschema.Site) string { return x.Name })
}

// Pod reads the named pod.
func (s *Store) Pod(name string) (ldapschema.Pod, error) {
	e, err := s.findNamed(objkind.Pod, name, s.DIT.Pods(), ldap.ScopeSingleLevel, ldapschema.ClassPod, ldapschema.AttrCN)
	if err != nil {
		return ldapschema.Pod{}, err
	}
	return ldapschema.PodFromEntry(e)
}

// Pods reads every pod, sorted by name.
func (s *Store) Pods() ([]ldapschema.Pod, error) {
	return findSorted(s, s.DIT.Pods(), ldap.ScopeSingleLevel, ldapclient.ClassFilter(ldapschema.ClassPod), ldapschema.PodFromEntry, func(x ldapschema.Pod) string { return x.Name })
}

// ConnectionServer reads the named Connection Server (names are unique
// across the federation).
func (s *Store) ConnectionServer(name string) (ldapschema.ConnectionServer, error) {
	e, err := s.findNamed(objkind.ConnectionServer, name, s.DIT.Pods(), ldap.ScopeWholeSubtree,
		ldapschema.ClassConnectionServer, ldapschema.AttrCN)
	if err != nil {
		return ldapschema.ConnectionServer{}, err
	}
	return ldapschema.ConnectionServerFromEntry(e)
}

// ConnectionServers reads every Connection Server, sorted by name.
func (s *Store) ConnectionServers() ([]ldapschema.ConnectionServer, error) {
	return findSorted(s, s.DIT.Pods(), ldap.ScopeWholeSubtree, ldapclient.ClassFilter(ldapschema.ClassConnectionServer), ldapschema.ConnectionServerFromEntry, func(x ldapschema.ConnectionServer) string { return x.Name })
}

func poolFilter() string {
	return ldapclient.Or(ldapclient.ClassFilter(ldapschema.ClassDesktopPool), ldapclient.ClassFilter(ldapschema.ClassFarmPool))
}

// Pool reads the named pool (desktop or farm-backed).
func (s *Store) Pool(name string) (ldapschema.Pool, error) {
	e, err := s.FindOne(objkind.Pool, name, s.DIT.Pods(), ldap.ScopeWholeSubtree,
		ldapclient.And(poolFilter(), ldapclient.Filter(ldapschema.AttrCN, name)))
	if err != nil {
		return ldapschema.Pool{}, err
	}
	if e == nil {
		return ldapschema.Pool{}, s.notFound(objkind.Pool, name)
	}
	return ldapschema.PoolFromEntry(e)
}

// Pools reads every pool, sorted by name.
func (s *Store) Pools() ([]ldapschema.Pool, error) {
	return findSorted(s, s.DIT.Pods(), ldap.ScopeWholeSubtree, poolFilter(), ldapschema.PoolFromEntry, func(x ldapschema.Pool) string { return x.Name })
}

// Farm reads the named RDS farm.
func (s *Store) Farm(name string) (ldapschema.Farm, error) {
	e, err := s.findNamed(objkind.Farm, name, s.DIT.Pods(), ldap.ScopeWholeSubtree, ldapschema.ClassRDSFarm, ldapschema.AttrCN)
	if err != nil {
		return ldapschema.Farm{}, err
	}
	return ldapschema.FarmFromEntry(e)
}

// Farms reads every farm, sorted by name.
func (s *Store) Farms() ([]ldapschema.Farm, error) {
	return findSorted(s, s.DIT.Pods(), ldap.ScopeWholeSubtree, ldapclient.ClassFilter(ldapschema.ClassRDSFarm), ldapschema.FarmFromEntry, func(x ldapschema.Farm) string { return x.Name })
}

// Host reads the named RDS host.
func (s *Store) Host(name string) (ldapschema.Host, error) {
	e, err := s.findNamed(objkind.Host, name, s.DIT.Pods(), ldap.ScopeWholeSubtree, ldapschema.ClassRDSHost, ldapschema.AttrCN)
	if err != nil {
		return ldapschema.Host{}, err
	}
	return ldapschema.HostFromEntry(e)
}

// Hosts reads the RDS hosts of one farm (farmDN), or of every farm when
// farmDN is "", sorted by name.
func (s *Store) Hosts(farmDN string) ([]ldapschema.Host, error) {
	base, scope := s.DIT.Pods(), ldap.ScopeWholeSubtree
	if farmDN != "" {
		base, scope = farmDN, ldap.ScopeSingleLevel
	}
	return findSorted(s, base, scope, ldapclient.ClassFilter(ldapschema.ClassRDSHost), ldapschema.HostFromEntry, func(x ldapschema.Host) string { return x.Name })
}

// Entitlement reads the named global entitlement.
func (s *Store) Entitlement(name string) (ldapschema.Entitlement, error) {
	e, err := s.findNamed(objkind.Entitlement, name, s.DIT.Entitlements(), ldap.ScopeSingleLevel,
		ldapschema.ClassGlobalEntitlement, ldapschema.AttrCN)
	if err != nil {
		return ldapschema.Entitlement{}, err
	}
	return ldapschema.EntitlementFromEntry(e)
}

// Entitlements reads every global entitlement, sorted by name.
func (s *Store) Entitlements() ([]ldapschema.Entitlement, error) {
	return findSorted(s, s.DIT.Entitlements(), ldap.ScopeSingleLevel, ldapclient.ClassFilter(ldapschema.ClassGlobalEntitlement), ldapschema.EntitlementFromEntry, func(x ldapschema.Entitlement) string { return x.Name })
}

// UserName is a parsed user argument: "uid", "DOMAIN\uid" or "uid@domain".
type UserName struct {
	UID    string
	Domain string // "" when the argument named none
}

// ParseUserName parses the three accepted forms of a user argument; any
// other is a *UserNameError.
func ParseUserName(arg string) (UserName, error) {
	arg = strings.TrimSpace(arg)
	var u UserName
	if d, uid, ok := strings.Cut(arg, `\`); ok {
		u = UserName{UID: uid, Domain: d}
	} else if i := strings.LastIndex(arg, "@"); i >= 0 {
		u = UserName{UID: arg[:i], Domain: arg[i+1:]}
	} else {
		u = UserName{UID: arg}
	}
	if u.UID == "" || (u.Domain == "" && arg != u.UID) {
		return UserName{}, &UserNameError{Arg: arg}
	}
	return u, nil
}

// User reads the user an argument names (uid, DOMAIN\uid or uid@domain).
// A given domain must match the user's domain when the entry has one; if it
// does not, no such user exists (a *UserDomainError, which is a
// *NotFoundError).
func (s *Store) User(arg string) (ldapschema.User, error) {
	n, err := ParseUserName(arg)
	if err != nil {
		return ldapschema.User{}, err
	}
	e, err := s.findNamed(objkind.User, n.UID, s.DIT.People(), ldap.ScopeSingleLevel, ldapschema.ClassInetOrgPerson,
		ldapschema.AttrUID)
	if err != nil {
		return ldapschema.User{}, err
	}
	u, err := ldapschema.UserFromEntry(e)
	if err != nil {
		return u, err
	}
	if n.Domain != "" && u.Domain != "" && !domainMatches(n.Domain, u.Domain) {
		return ldapschema.User{}, &UserDomainError{Arg: arg, UID: u.UID, Domain: u.Domain}
	}
	return u, nil
}

// domainMatches compares a NetBIOS or DNS domain name with the stored one:
// equal ignoring case, or the first DNS label equal to a NetBIOS name.
func domainMatches(given, stored string) bool {
	if strings.EqualFold(given, stored) {
		return true
	}
	first := func(d string) string { label, _, _ := strings.Cut(d, "."); return label }
	return strings.EqualFold(first(given), first(stored))
}

// Users reads every user, sorted by uid.
func (s *Store) Users() ([]ldapschema.User, error) {
	return findSorted(s, s.DIT.People(), ldap.ScopeSingleLevel, ldapclient.ClassFilter(ldapschema.ClassInetOrgPerson), ldapschema.UserFromEntry, func(x ldapschema.User) string { return x.UID })
}

// Group reads the named group.
func (s *Store) Group(name string) (ldapschema.Group, error) {
	e, err := s.findNamed(objkind.Group, name, s.DIT.Groups(), ldap.ScopeSingleLevel, ldapschema.ClassGroup, ldapschema.AttrCN)
	if err != nil {
		return ldapschema.Group{}, err
	}
	return ldapschema.GroupFromEntry(e)
}

// Groups reads every group, sorted by name.
func (s *Store) Groups() ([]ldapschema.Group, error) {
	return findSorted(s, s.DIT.Groups(), ldap.ScopeSingleLevel, ldapclient.ClassFilter(ldapschema.ClassGroup), ldapschema.GroupFromEntry, func(x ldapschema.Group) string { return x.Name })
}

// GroupsWithMember reads the groups whose member attribute holds any of
// dns (one search).
func (s *Store) GroupsWithMember(dns ...string) ([]ldapschema.Group, error) {
	if len(dns) == 0 {
		return nil, nil
	}
	var fs []string
	for _, dn := range dns {
		fs = append(fs, ldapclient.Filter(ldapschema.AttrMember, dn))
	}
	return findSorted(s, s.DIT.Groups(), ldap.ScopeSingleLevel, ldapclient.And(ldapclient.ClassFilter(ldapschema.ClassGroup), ldapclient.Or(fs...)), ldapschema.GroupFromEntry, func(x ldapschema.Group) string { return x.Name })
}

// Computer reads the named client computer.
func (s *Store) Computer(name string) (ldapschema.Computer, error) {
	e, err := s.findNamed(objkind.Computer, name, s.DIT.Computers(), ldap.ScopeSingleLevel, ldapschema.ClassDevice,
		ldapschema.AttrCN)
	if err != nil {
		return ldapschema.Computer{}, err
	}
	return ldapschema.ComputerFromEntry(e)
}

// Computers reads every client computer, sorted by name.
func (s *Store) Computers() ([]ldapschema.Computer, error) {
	return findSorted(s, s.DIT.Computers(), ldap.ScopeSingleLevel, ldapclient.ClassFilter(ldapschema.ClassDevice), ldapschema.ComputerFromEntry, func(x ldapschema.Computer) string { return x.Name })
}

// HomeSites reads home-site rows matching filter (nil: every row).
func (s *Store) HomeSites(filter string) ([]ldapschema.HomeSite, error) {
	f := ldapclient.ClassFilter(ldapschema.ClassHomeSite)
	if filter != "" {
		f = ldapclient.And(f, filter)
	}
	return findSorted(s, s.DIT.HomeSites(), ldap.ScopeSingleLevel, f, ldapschema.HomeSiteFromEntry, func(x ldapschema.HomeSite) string { return x.DN })
}

// Sessions reads session records matching filter ("" for all).
func (s *Store) Sessions(filter string) ([]ldapschema.Session, error) {
	f := ldapclient.ClassFilter(ldapschema.ClassSession)
	if filter != "" {
		f = ldapclient.And(f, filter)
	}
	return findSorted(s, s.DIT.Sessions(), ldap.ScopeSingleLevel, f, ldapschema.SessionFromEntry, func(x ldapschema.Session) string { return x.ID })
}

// Assignments reads pod assignments matching filter ("" for all).
func (s *Store) Assignments(filter string) ([]ldapschema.Assignment, error) {
	f := ldapclient.ClassFilter(ldapschema.ClassPodAssignment)
	if filter != "" {
		f = ldapclient.And(f, filter)
	}
	return findSorted(s, s.DIT.Assignments(), ldap.ScopeSingleLevel, f, ldapschema.AssignmentFromEntry, func(x ldapschema.Assignment) string { return x.DN })
}

// mapSorted maps entries to records and sorts them by key,
// case-insensitively (each key lowered once, not in the comparisons).
// findSorted maps the entries a search finds to records as they stream in
// (no entry is held), then sorts the records as mapSorted does.
func findSorted[T any](s *Store, base string, scope int, filter string, from func(*ldap.Entry) (T, error), key func(T) string) ([]T, error) {
	var sorter keyedSorter[T]
	err := s.Each(base, scope, filter, nil, func(e *ldap.Entry) error {
		r, err := from(e)
		if err != nil {
			return err
		}
		sorter.add(r, key(r))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return sorter.sorted(), nil
}

// keyedSorter collects records and returns them ordered by key,
// case-insensitively, then exactly, then in the order added. Records are
// kept in chunks (never copied as they grow, which at 250,000 sessions cost
// more than the sort) and only their keys are sorted: the records move
// once.
type keyedSorter[T any] struct {
	chunks [][]T
	keys   []recordKey
}

type recordKey struct {
	lower, key string
	i          int32
}

const sorterChunk = 4096

func (k *keyedSorter[T]) add(r T, key string) {
	n := len(k.keys)
	if n%sorterChunk == 0 {
		k.chunks = append(k.chunks, make([]T, 0, sorterChunk))
	}
	last := len(k.chunks) - 1
	k.chunks[last] = append(k.chunks[last], r)
	k.keys = append(k.keys, recordKey{strings.ToLower(key), key, int32(n)})
}

func (k *keyedSorter[T]) sorted() []T {
	slices.SortFunc(k.keys, func(a, b recordKey) int {
		if c := strings.Compare(a.lower, b.lower); c != 0 {
			return c
		}
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return int(a.i - b.i)
	})
	out := make([]T, len(k.keys))
	for j, rk := range k.keys {
		out[j] = k.chunks[rk.i/sorterChunk][rk.i%sorterChunk]
	}
	return out
}

func mapSorted[T any](entries []*ldap.Entry, from func(*ldap.Entry) (T, error), key func(T) string) ([]T, error) {
	var sorter keyedSorter[T]
	for _, e := range entries {
		r, err := from(e)
		if err != nil {
			return nil, err
		}
		sorter.add(r, key(r))
	}
	return sorter.sorted(), nil
}
