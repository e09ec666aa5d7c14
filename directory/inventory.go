package directory

import (
	"errors"
	"slices"
	"sort"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/ldapschema"
)

// containerSearch is one search of a whole-federation read: the objects
// of one class in one container, each handed to each as it arrives.
type containerSearch struct {
	base   string
	scope  int
	filter string
	each   func(*ldap.Entry) error
}

// eachContainer runs the searches one at a time: slapd keeps one paged
// search per connection (a second one on the same connection invalidates
// the first's cookie); the client still decodes while the server sends. A
// container missing under an existing base holds nothing; all of them
// missing is a *LayoutError (the base holds no federation).
func (s *Store) eachContainer(searches []containerSearch) error {
	missing := make([]bool, len(searches))
	enclosing := ""
	for i, q := range searches {
		err := s.Each(q.base, q.scope, q.filter, nil, q.each)
		var layout *ldapconn.LayoutError
		if errors.As(err, &layout) && layout.BaseExists {
			err, missing[i], enclosing = nil, true, layout.Enclosing
		}
		if err != nil {
			return err
		}
	}
	if !slices.Contains(missing, false) {
		return &ldapconn.LayoutError{Base: s.DIT.Base, DN: s.DIT.Sites(), BaseExists: true, Enclosing: enclosing}
	}
	return nil
}

// Inventory is every cpactl object under the base (ldapschema.Records).
type Inventory = ldapschema.Records

// Unreadable is an entry with a value that does not parse.
type Unreadable = ldapschema.Unreadable

// Inventory reads every object: one streamed search per container (one for
// everything below the pods). A base
// that does not exist is a *LayoutError; so is a base without any of the
// containers `cpactl init` creates; a single missing container holds
// nothing (an older or hand-made layout). Entries
// are mapped to records as they arrive and never held, so memory grows
// with the records, not with the entries' wire form; each list is sorted
// by DN, its key computed once per record.
func (s *Store) Inventory() (*Inventory, error) {
	inv := &Inventory{}
	e, err := s.Entry(s.DIT.Settings())
	if err != nil {
		return nil, err
	}
	inv.Settings, err = ldapschema.SettingsFromEntry(e)
	if err != nil {
		inv.Unreadable = append(inv.Unreadable, Unreadable{DN: s.DIT.Settings(), Reason: err.Error()})
	}
	one := ldap.ScopeSingleLevel
	var unreadable []Unreadable
	note := func(dn string, err error) {
		unreadable = append(unreadable, Unreadable{DN: dn, Reason: err.Error()})
	}
	sites := records(note, ldapschema.SiteFromEntry)
	pods := records(note, ldapschema.PodFromEntry)
	servers := records(note, ldapschema.ConnectionServerFromEntry)
	pools := records(note, ldapschema.PoolFromEntry)
	farms := records(note, ldapschema.FarmFromEntry)
	hosts := records(note, ldapschema.HostFromEntry)
	ges := records(note, ldapschema.EntitlementFromEntry)
	homeSites := records(note, ldapschema.HomeSiteFromEntry)
	users := records(note, ldapschema.UserFromEntry)
	groups := records(note, ldapschema.GroupFromEntry)
	computers := records(note, ldapschema.ComputerFromEntry)
	sessions := records(note, ldapschema.SessionFromEntry)
	assignments := records(note, ldapschema.AssignmentFromEntry)

	// What lies below the pods (Connection Servers, pools, farms and RDS
	// hosts) comes in one subtree search, each entry handed to every kind
	// whose class it carries.
	belowPods := func(e *ldap.Entry) error {
		if ldapschema.HasClass(e, ldapschema.ClassConnectionServer) {
			servers.add(e)
		}
		if ldapschema.IsPool(e) {
			pools.add(e)
		}
		if ldapschema.HasClass(e, ldapschema.ClassRDSFarm) {
			farms.add(e)
		}
		if ldapschema.HasClass(e, ldapschema.ClassRDSHost) {
			hosts.add(e)
		}
		return nil
	}
	searches := []containerSearch{
		{s.DIT.Sessions(), one, ldapclient.ClassFilter(ldapschema.ClassSession), sessions.add},
		{s.DIT.Pods(), ldap.ScopeWholeSubtree, ldapclient.Or(ldapclient.ClassFilter(ldapschema.ClassConnectionServer), poolFilter(),
			ldapclient.ClassFilter(ldapschema.ClassRDSFarm), ldapclient.ClassFilter(ldapschema.ClassRDSHost)), belowPods},
		{s.DIT.People(), one, ldapclient.ClassFilter(ldapschema.ClassInetOrgPerson), users.add},
		{s.DIT.Groups(), one, ldapclient.ClassFilter(ldapschema.ClassGroup), groups.add},
		{s.DIT.Assignments(), one, ldapclient.ClassFilter(ldapschema.ClassPodAssignment), assignments.add},
		{s.DIT.HomeSites(), one, ldapclient.ClassFilter(ldapschema.ClassHomeSite), homeSites.add},
		{s.DIT.Entitlements(), one, ldapclient.ClassFilter(ldapschema.ClassGlobalEntitlement), ges.add},
		{s.DIT.Computers(), one, ldapclient.ClassFilter(ldapschema.ClassDevice), computers.add},
		{s.DIT.Sites(), one, ldapclient.ClassFilter(ldapschema.ClassSite), sites.add},
		{s.DIT.Pods(), one, ldapclient.ClassFilter(ldapschema.ClassPod), pods.add},
	}
	if err := s.eachContainer(searches); err != nil {
		return nil, err
	}
	inv.Sites, inv.Pods, inv.ConnectionServers = sites.sorted(), pods.sorted(), servers.sorted()
	inv.Pools, inv.Farms, inv.Hosts = pools.sorted(), farms.sorted(), hosts.sorted()
	inv.Entitlements, inv.HomeSites = ges.sorted(), homeSites.sorted()
	inv.Users, inv.Groups, inv.Computers = users.sorted(), groups.sorted(), computers.sorted()
	inv.Sessions, inv.Assignments = sessions.sorted(), assignments.sorted()
	sort.SliceStable(unreadable, func(i, j int) bool {
		return ldapschema.NormalizeDN(unreadable[i].DN) < ldapschema.NormalizeDN(unreadable[j].DN)
	})
	inv.Unreadable = append(inv.Unreadable, unreadable...)
	return inv, nil
}

// recordList maps entries of one kind to records as a search streams them,
// leniently: a record whose values only partly decode is kept and noted.
type recordList[T any] struct {
	from func(*ldap.Entry) (T, error)
	note func(dn string, err error)
	keys []string // normalized DNs, computed once
	recs []T
}

func records[T any](note func(string, error), from func(*ldap.Entry) (T, error)) *recordList[T] {
	return &recordList[T]{from: from, note: note}
}

func (l *recordList[T]) add(e *ldap.Entry) error {
	rec, err := l.from(e)
	if err != nil {
		l.note(e.DN, err)
		if errors.Is(err, ldapschema.ErrWrongClass) {
			return nil
		}
	}
	l.keys = append(l.keys, ldapschema.NormalizeDN(e.DN))
	l.recs = append(l.recs, rec)
	return nil
}

// sorted returns the records ordered by DN.
func (l *recordList[T]) sorted() []T {
	idx := make([]int, len(l.recs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return l.keys[idx[a]] < l.keys[idx[b]] })
	out := make([]T, len(idx))
	for i, j := range idx {
		out[i] = l.recs[j]
	}
	return out
}
