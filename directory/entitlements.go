package directory

import (
	"errors"
	"fmt"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/internal/nesting"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
)

// NamedEntry reads the raw entry of the named entitlement, pool, farm or
// RDS host (what an update compares against and a delete removes). A
// missing object is a *NotFoundError.
func (s *Store) NamedEntry(kind, name string) (*ldap.Entry, error) {
	switch kind {
	case objkind.Entitlement:
		return s.findNamed(kind, name, s.DIT.Entitlements(), ldap.ScopeSingleLevel, ldapschema.ClassGlobalEntitlement,
			ldapschema.AttrCN)
	case objkind.Pool:
		e, err := s.FindOne(kind, name, s.DIT.Pods(), ldap.ScopeWholeSubtree, ldapclient.And(poolFilter(), ldapclient.Filter(ldapschema.AttrCN, name)))
		if err == nil && e == nil {
			err = s.notFound(kind, name)
		}
		return e, err
	case objkind.Farm:
		return s.findNamed(kind, name, s.DIT.Pods(), ldap.ScopeWholeSubtree, ldapschema.ClassRDSFarm, ldapschema.AttrCN)
	case objkind.Host:
		return s.findNamed(kind, name, s.DIT.Pods(), ldap.ScopeWholeSubtree, ldapschema.ClassRDSHost, ldapschema.AttrCN)
	}
	return nil, fmt.Errorf("directory: NamedEntry does not know kind %q", kind)
}

// IsNotFound reports whether err says a named object does not exist.
func IsNotFound(err error) bool {
	var nf *ldapclient.NotFoundError
	return errors.As(err, &nf)
}

// EntitlementsMatching reads the global entitlements that also match filter,
// sorted by name.
func (s *Store) EntitlementsMatching(filter string) ([]ldapschema.Entitlement, error) {
	return findSorted(s, s.DIT.Entitlements(), ldap.ScopeSingleLevel,
		ldapclient.And(ldapclient.ClassFilter(ldapschema.ClassGlobalEntitlement), filter), ldapschema.EntitlementFromEntry, func(x ldapschema.Entitlement) string { return x.Name })
}

// EntitlementsWithMember reads the global entitlements whose members
// include any of dns (users or groups), in one search.
func (s *Store) EntitlementsWithMember(dns ...string) ([]ldapschema.Entitlement, error) {
	if len(dns) == 0 {
		return nil, nil
	}
	fs := make([]string, len(dns))
	for i, dn := range dns {
		fs[i] = ldapclient.Filter(ldapschema.AttrMember, dn)
	}
	return s.EntitlementsMatching(ldapclient.Or(fs...))
}

// EntitlementsWithPool reads the global entitlements that list the pool.
func (s *Store) EntitlementsWithPool(poolDN string) ([]ldapschema.Entitlement, error) {
	return s.EntitlementsMatching(ldapclient.Filter(ldapschema.AttrEntitlementPoolDN, poolDN))
}

// PoolsOfFarm reads the farm-backed pools a farm serves, sorted by name.
func (s *Store) PoolsOfFarm(farmDN string) ([]ldapschema.Pool, error) {
	return findSorted(s, s.DIT.Pods(), ldap.ScopeWholeSubtree,
		ldapclient.And(ldapclient.ClassFilter(ldapschema.ClassFarmPool), ldapclient.Filter(ldapschema.AttrFarmDN, farmDN)), ldapschema.PoolFromEntry, func(x ldapschema.Pool) string { return x.Name })
}

// GroupsAbove reads the groups dn is in, directly or through nested
// groups: one search per level of nesting, each group read once (cycles
// tolerated; nesting.Levels).
func (s *Store) GroupsAbove(dn string) ([]ldapschema.Group, error) {
	var all []ldapschema.Group // the levels walked, dn's own first
	err := nesting.Levels([]ldapschema.Group{{DN: dn}}, func(level []ldapschema.Group) ([]ldapschema.Group, bool, error) {
		all = append(all, level...)
		dns := make([]string, len(level))
		for i, g := range level {
			dns[i] = g.DN
		}
		up, err := s.GroupsWithMember(dns...)
		return up, false, err
	}, nesting.Once(func(g ldapschema.Group) string { return ldapschema.NormalizeDN(g.DN) }))
	if err != nil || len(all) == 1 {
		return nil, err
	}
	return all[1:], nil
}

// EntitlementsBackedUpBy reads the global entitlements that name the one at
// dn as their backup (docs/resolve.md "Backup global entitlements"), in name
// order: one search.
func (s *Store) EntitlementsBackedUpBy(dn string) ([]ldapschema.Entitlement, error) {
	return s.EntitlementsMatching(ldapclient.Filter(ldapschema.AttrBackupEntitlementDN, dn))
}

// EntitlementByDN reads the global entitlement at dn (a backup reference).
func (s *Store) EntitlementByDN(dn string) (ldapschema.Entitlement, error) {
	return s.Entitlement(ldapschema.NameOf(dn))
}
