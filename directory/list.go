package directory

import (
	"container/heap"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/internal/glob"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
)

// Selection narrows what a list reads: `cpactl pod list --site S --name
// 'lon-*' --limit 50`. The zero Selection selects every object.
//
// What can be decided from an entry's name and DN is decided before the
// entry is mapped to a record, while the search streams: an object that
// is not selected, or that falls past the limit, is never mapped and
// never held.
type Selection struct {
	// Name keeps the objects whose name matches the pattern (nil: every
	// name). The directory is asked for a superset (an equality or
	// substring filter on the naming attribute) and each name is then
	// matched exactly.
	Name *glob.Pattern
	// Filter is an LDAP filter (Filter, And, ...) the objects must also
	// match; "" for none.
	Filter string
	// Under keeps the objects below this DN (a pod's pools, a farm's
	// hosts): the search starts there. "" for all.
	Under string
	// Keep, when set, keeps the objects whose DN (normalized:
	// ldapschema.NormalizeDN) it accepts: a set of members, of parents.
	Keep func(normalizedDN string) bool
	// Limit keeps the first Limit objects in the list's order (by name,
	// as the full list is sorted), 0 for all. The others are counted, not
	// held: a list of 250,000 sessions cut to 50 holds 50 records.
	Limit int
}

// Selected is what a selected list read returns: the records, in order,
// and how many objects the selection matched before Limit cut them.
type Selected[T any] struct {
	Items []T
	Total int
}

// Cut reports whether Limit left objects out.
func (s Selected[T]) Cut() bool { return s.Total > len(s.Items) }

// listing is how one kind's records are listed: where they live, which
// attribute names them, and how an entry becomes a record.
type listing[T any] struct {
	kind string
	from func(*ldap.Entry) (T, error)
	// name is the record's name read from its entry, without mapping it:
	// what the list sorts by and a pattern is matched with (the key of
	// the record findSorted sorts by).
	name func(*ldap.Entry) string
}

// rdnName is the name of objects named by their RDN's value.
func rdnName(e *ldap.Entry) string { return ldapschema.NameOf(e.DN) }

// userName is a user's name as UserFromEntry reads it: its uid, else its
// RDN's value.
func userName(e *ldap.Entry) string {
	if uid := e.GetEqualFoldAttributeValue(ldapschema.AttrUID); uid != "" {
		return uid
	}
	return ldapschema.NameOf(e.DN)
}

// SelectSites reads the sites sel selects, sorted by name.
func (s *Store) SelectSites(sel Selection) (Selected[ldapschema.Site], error) {
	return selectSorted(s, listing[ldapschema.Site]{objkind.Site, ldapschema.SiteFromEntry, rdnName}, sel)
}

// SelectPods reads the pods sel selects, sorted by name.
func (s *Store) SelectPods(sel Selection) (Selected[ldapschema.Pod], error) {
	return selectSorted(s, listing[ldapschema.Pod]{objkind.Pod, ldapschema.PodFromEntry, rdnName}, sel)
}

// SelectConnectionServers reads the Connection Servers sel selects,
// sorted by name.
func (s *Store) SelectConnectionServers(sel Selection) (Selected[ldapschema.ConnectionServer], error) {
	return selectSorted(s, listing[ldapschema.ConnectionServer]{objkind.ConnectionServer, ldapschema.ConnectionServerFromEntry, rdnName}, sel)
}

// SelectPools reads the pools sel selects, sorted by name.
func (s *Store) SelectPools(sel Selection) (Selected[ldapschema.Pool], error) {
	return selectSorted(s, listing[ldapschema.Pool]{objkind.Pool, ldapschema.PoolFromEntry, rdnName}, sel)
}

// SelectFarms reads the RDS farms sel selects, sorted by name.
func (s *Store) SelectFarms(sel Selection) (Selected[ldapschema.Farm], error) {
	return selectSorted(s, listing[ldapschema.Farm]{objkind.Farm, ldapschema.FarmFromEntry, rdnName}, sel)
}

// SelectHosts reads the RDS hosts sel selects, sorted by name.
func (s *Store) SelectHosts(sel Selection) (Selected[ldapschema.Host], error) {
	return selectSorted(s, listing[ldapschema.Host]{objkind.Host, ldapschema.HostFromEntry, rdnName}, sel)
}

// SelectEntitlements reads the global entitlements sel selects, sorted by
// name.
func (s *Store) SelectEntitlements(sel Selection) (Selected[ldapschema.Entitlement], error) {
	return selectSorted(s, listing[ldapschema.Entitlement]{objkind.Entitlement, ldapschema.EntitlementFromEntry, rdnName}, sel)
}

// SelectUsers reads the users sel selects, sorted by uid.
func (s *Store) SelectUsers(sel Selection) (Selected[ldapschema.User], error) {
	return selectSorted(s, listing[ldapschema.User]{objkind.User, ldapschema.UserFromEntry, userName}, sel)
}

// SelectGroups reads the groups sel selects, sorted by name.
func (s *Store) SelectGroups(sel Selection) (Selected[ldapschema.Group], error) {
	return selectSorted(s, listing[ldapschema.Group]{objkind.Group, ldapschema.GroupFromEntry, rdnName}, sel)
}

// SelectComputers reads the client computers sel selects, sorted by name.
func (s *Store) SelectComputers(sel Selection) (Selected[ldapschema.Computer], error) {
	return selectSorted(s, listing[ldapschema.Computer]{objkind.Computer, ldapschema.ComputerFromEntry, rdnName}, sel)
}

// SelectSessions reads the session records sel selects, sorted by ID.
func (s *Store) SelectSessions(sel Selection) (Selected[ldapschema.Session], error) {
	return selectSorted(s, listing[ldapschema.Session]{objkind.Session, ldapschema.SessionFromEntry, rdnName}, sel)
}

// nameFilter is the LDAP filter that finds a superset of the objects
// whose naming attribute attr matches p: equality for a pattern with no
// wildcard, a substring filter of its literal runs otherwise, "" when any
// name can match ("*").
func nameFilter(attr string, p *glob.Pattern) string {
	if name, ok := p.Literal(); ok {
		return ldapclient.Filter(attr, name)
	}
	initial, any, final := p.Literals()
	if initial == "" && len(any) == 0 && final == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString("(" + attr + "=" + ldap.EscapeFilter(initial))
	for _, a := range any {
		b.WriteString("*" + ldap.EscapeFilter(a))
	}
	b.WriteString("*" + ldap.EscapeFilter(final) + ")")
	return b.String()
}

// selectSorted is findSorted with a selection: the same search, narrowed
// by sel's filters, each entry's name and DN checked before it is mapped,
// and with a limit only the first Limit records by name kept (a bounded
// heap: the sort still sees every name, but holds Limit records).
func selectSorted[T any](s *Store, l listing[T], sel Selection) (Selected[T], error) {
	ns := nameSearches[l.kind]
	base, scope := ns.base(s.DIT), ns.scope
	if sel.Under != "" {
		base, scope = sel.Under, ldap.ScopeWholeSubtree
	}
	filters := []string{ns.filter}
	if sel.Filter != "" {
		filters = append(filters, sel.Filter)
	}
	if sel.Name != nil {
		if f := nameFilter(ns.attr, sel.Name); f != "" {
			filters = append(filters, f)
		}
	}
	filter := filters[0]
	if len(filters) > 1 {
		filter = ldapclient.And(filters...)
	}
	var out Selected[T]
	var sorter keyedSorter[T]
	top := &topRecords[T]{}
	err := s.Each(base, scope, filter, nil, func(e *ldap.Entry) error {
		name := l.name(e)
		if sel.Name != nil && !sel.Name.Match(name) {
			return nil
		}
		if sel.Keep != nil && !sel.Keep(ldapschema.NormalizeDN(e.DN)) {
			return nil
		}
		out.Total++
		if sel.Limit <= 0 {
			r, err := l.from(e)
			if err != nil {
				return err
			}
			sorter.add(r, name)
			return nil
		}
		k := recordKey{lower: strings.ToLower(name), key: name, i: int32(out.Total)}
		if len(top.items) == sel.Limit && !keyLess(k, top.items[0].key) {
			return nil // past the limit: not mapped
		}
		r, err := l.from(e)
		if err != nil {
			return err
		}
		heap.Push(top, keyed[T]{k, r})
		if len(top.items) > sel.Limit {
			heap.Pop(top)
		}
		return nil
	})
	if err != nil {
		return out, err
	}
	if sel.Limit <= 0 {
		out.Items = sorter.sorted()
		return out, nil
	}
	out.Items = make([]T, len(top.items))
	for i := len(top.items) - 1; i >= 0; i-- {
		out.Items[i] = heap.Pop(top).(keyed[T]).r
	}
	return out, nil
}

// keyLess orders record keys as keyedSorter does: case-insensitively,
// then exactly, then in the order read.
func keyLess(a, b recordKey) bool {
	if a.lower != b.lower {
		return a.lower < b.lower
	}
	if a.key != b.key {
		return a.key < b.key
	}
	return a.i < b.i
}

type keyed[T any] struct {
	key recordKey
	r   T
}

// topRecords is a max-heap of records by key: the first records of a
// list, its last one on top, to be replaced by a record that comes
// before it.
type topRecords[T any] struct{ items []keyed[T] }

func (h *topRecords[T]) Len() int           { return len(h.items) }
func (h *topRecords[T]) Less(i, j int) bool { return keyLess(h.items[j].key, h.items[i].key) }
func (h *topRecords[T]) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *topRecords[T]) Push(x any)         { h.items = append(h.items, x.(keyed[T])) }
func (h *topRecords[T]) Pop() any {
	n := len(h.items) - 1
	x := h.items[n]
	h.items = h.items[:n]
	return x
}
