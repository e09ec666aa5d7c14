package directory

import (
	"errors"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/ldapschema"
)

// Inventory is every cpactl object under the base (ldapschema.Records).
type Inventory = ldapschema.Records

// Unreadable is an entry with a value that does not parse.
type Unreadable = ldapschema.Unreadable

// Inventory reads every object: one search per container.
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
	steps := []func() error{
		func() error {
			return lenient(s, inv, s.DIT.Sites(), one, ClassFilter(ldapschema.ClassSite), ldapschema.SiteFromEntry, &inv.Sites)
		},
		func() error {
			return lenient(s, inv, s.DIT.Pods(), one, ClassFilter(ldapschema.ClassPod), ldapschema.PodFromEntry, &inv.Pods)
		},
		func() error {
			return lenient(s, inv, s.DIT.Pods(), ldap.ScopeWholeSubtree, ClassFilter(ldapschema.ClassConnectionServer),
				ldapschema.ConnectionServerFromEntry, &inv.ConnectionServers)
		},
		func() error {
			return lenient(s, inv, s.DIT.Pods(), ldap.ScopeWholeSubtree, poolFilter(), ldapschema.PoolFromEntry, &inv.Pools)
		},
		func() error {
			return lenient(s, inv, s.DIT.Pods(), ldap.ScopeWholeSubtree, ClassFilter(ldapschema.ClassRDSFarm),
				ldapschema.FarmFromEntry, &inv.Farms)
		},
		func() error {
			return lenient(s, inv, s.DIT.Pods(), ldap.ScopeWholeSubtree, ClassFilter(ldapschema.ClassRDSHost),
				ldapschema.HostFromEntry, &inv.Hosts)
		},
		func() error {
			return lenient(s, inv, s.DIT.Entitlements(), one, ClassFilter(ldapschema.ClassGlobalEntitlement),
				ldapschema.EntitlementFromEntry, &inv.Entitlements)
		},
		func() error {
			return lenient(s, inv, s.DIT.HomeSites(), one, ClassFilter(ldapschema.ClassHomeSite),
				ldapschema.HomeSiteFromEntry, &inv.HomeSites)
		},
		func() error {
			return lenient(s, inv, s.DIT.People(), one, ClassFilter(ldapschema.ClassInetOrgPerson),
				ldapschema.UserFromEntry, &inv.Users)
		},
		func() error {
			return lenient(s, inv, s.DIT.Groups(), one, ClassFilter(ldapschema.ClassGroup), ldapschema.GroupFromEntry, &inv.Groups)
		},
		func() error {
			return lenient(s, inv, s.DIT.Computers(), one, ClassFilter(ldapschema.ClassDevice),
				ldapschema.ComputerFromEntry, &inv.Computers)
		},
		func() error {
			return lenient(s, inv, s.DIT.Sessions(), one, ClassFilter(ldapschema.ClassSession),
				ldapschema.SessionFromEntry, &inv.Sessions)
		},
		func() error {
			return lenient(s, inv, s.DIT.Assignments(), one, ClassFilter(ldapschema.ClassPodAssignment),
				ldapschema.AssignmentFromEntry, &inv.Assignments)
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return inv, nil
}

// lenient maps the entries a search finds, keeping records whose values
// only partly decode and noting why.
func lenient[T any](s *Store, inv *Inventory, base string, scope int, filter string, from func(*ldap.Entry) (T, error), out *[]T) error {
	entries, err := s.Find(base, scope, filter)
	if err != nil {
		return err
	}
	SortEntries(entries)
	for _, e := range entries {
		rec, err := from(e)
		if err != nil {
			inv.Unreadable = append(inv.Unreadable, Unreadable{DN: e.DN, Reason: err.Error()})
			if errors.Is(err, ldapschema.ErrWrongClass) {
				continue
			}
		}
		*out = append(*out, rec)
	}
	return nil
}
