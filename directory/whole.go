package directory

import (
	"errors"
	"fmt"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/internal/fold"
	"github.com/cpactl/cpactl/ldapschema"
)

// WholeFederation is every object of the federation as the broker sees it,
// read by Federation.
type WholeFederation struct {
	Federation *broker.Federation
	// Warnings name entries read only as far as they decode and references
	// left out, as ResolveFederation words them.
	Warnings []string
}

// Federation reads the whole federation into the broker's plain values,
// with the same conversions as ResolveFederation (so that resolving a
// request over it gives what resolve gives): one streamed search per
// container, as Inventory reads, each entry converted as it arrives and
// never held. Every DN is normalized once: an entry's own DN when it is
// an object others refer to (users, groups, computers, entitlements), and
// each member value of a group once.
//
// A base that does not exist, or holds none of the containers, is a
// *LayoutError; a single missing container holds nothing.
func (s *Store) Federation() (*WholeFederation, error) {
	out := &WholeFederation{Federation: &broker.Federation{}}
	f := out.Federation
	warn := func(format string, args ...any) { out.Warnings = append(out.Warnings, fmt.Sprintf(format, args...)) }
	e, err := s.Entry(s.DIT.Settings())
	if err != nil {
		return nil, err
	}
	settings, err := ldapschema.SettingsFromEntry(e)
	if err != nil {
		warn("%s; the default is used for that setting (run `cpactl lint`)", err)
	}
	f.Settings = BrokerSettings(settings)

	// lenient maps an entry to its record, keeping a record whose values
	// only partly decode (with a warning) and leaving out an entry of
	// another class.
	lenient := func(err error) bool {
		if err == nil {
			return true
		}
		if errors.Is(err, ldapschema.ErrWrongClass) {
			warn("%s; left out (run `cpactl lint`)", err)
			return false
		}
		warn("%s; read as far as it decodes (run `cpactl lint`)", err)
		return true
	}

	// Principals by normalized DN, for the group memberships.
	users := map[string]int{}     // -> index in f.Users
	computers := map[string]int{} // -> index in f.Computers
	groups := map[string]int{}    // -> index in f.Groups
	var groupRecs []ldapschema.Group
	var ges []ldapschema.Entitlement
	geKeys := map[string]int{} // normalized GE DN -> index in ges and f.Entitlements

	belowPods := func(e *ldap.Entry) error {
		if ldapschema.HasClass(e, ldapschema.ClassConnectionServer) {
			if x, err := ldapschema.ConnectionServerFromEntry(e); lenient(err) {
				f.ConnectionServers = append(f.ConnectionServers, BrokerConnectionServer(x))
			}
		}
		if ldapschema.IsPool(e) {
			if x, err := ldapschema.PoolFromEntry(e); lenient(err) {
				f.Pools = append(f.Pools, BrokerPool(x))
			}
		}
		if ldapschema.HasClass(e, ldapschema.ClassRDSFarm) {
			if x, err := ldapschema.FarmFromEntry(e); lenient(err) {
				f.Farms = append(f.Farms, BrokerFarm(x))
			}
		}
		if ldapschema.HasClass(e, ldapschema.ClassRDSHost) {
			if x, err := ldapschema.HostFromEntry(e); lenient(err) {
				f.Hosts = append(f.Hosts, BrokerHost(x))
			}
		}
		return nil
	}
	one := ldap.ScopeSingleLevel
	searches := []containerSearch{
		{s.DIT.Sites(), one, ldapclient.ClassFilter(ldapschema.ClassSite), func(e *ldap.Entry) error {
			if x, err := ldapschema.SiteFromEntry(e); lenient(err) {
				f.Sites = append(f.Sites, BrokerSite(x))
			}
			return nil
		}},
		{s.DIT.Pods(), one, ldapclient.ClassFilter(ldapschema.ClassPod), func(e *ldap.Entry) error {
			if x, err := ldapschema.PodFromEntry(e); lenient(err) {
				f.Pods = append(f.Pods, BrokerPod(x))
			}
			return nil
		}},
		{s.DIT.Pods(), ldap.ScopeWholeSubtree, ldapclient.Or(ldapclient.ClassFilter(ldapschema.ClassConnectionServer), poolFilter(),
			ldapclient.ClassFilter(ldapschema.ClassRDSFarm), ldapclient.ClassFilter(ldapschema.ClassRDSHost)), belowPods},
		{s.DIT.Entitlements(), one, ldapclient.ClassFilter(ldapschema.ClassGlobalEntitlement), func(e *ldap.Entry) error {
			if !ldapschema.HasClass(e, ldapschema.ClassGlobalEntitlement) {
				return nil
			}
			g, ge, ignored, rest := s.entitlementFromEntry(e)
			if rest != nil {
				warn("%s; read as far as it decodes (run `cpactl lint`)", rest)
			}
			for _, dn := range ignored {
				warn("entitlement %s lists member %s, which is neither a user (under %s) nor a group (under %s); ignored",
					g.Name, dn, s.DIT.People(), s.DIT.Groups())
			}
			geKeys[ldapschema.NormalizeDN(e.DN)] = len(ges)
			ges = append(ges, g)
			f.Entitlements = append(f.Entitlements, ge)
			return nil
		}},
		{s.DIT.People(), one, ldapclient.ClassFilter(ldapschema.ClassInetOrgPerson), func(e *ldap.Entry) error {
			if x, err := ldapschema.UserFromEntry(e); lenient(err) {
				users[ldapschema.NormalizeDN(e.DN)] = len(f.Users)
				f.Users = append(f.Users, broker.User{Name: x.UID})
			}
			return nil
		}},
		{s.DIT.Computers(), one, ldapclient.ClassFilter(ldapschema.ClassDevice), func(e *ldap.Entry) error {
			if x, err := ldapschema.ComputerFromEntry(e); lenient(err) {
				computers[ldapschema.NormalizeDN(e.DN)] = len(f.Computers)
				f.Computers = append(f.Computers, broker.Computer{Name: x.Name})
			}
			return nil
		}},
		{s.DIT.Groups(), one, ldapclient.ClassFilter(ldapschema.ClassGroup), func(e *ldap.Entry) error {
			if x, err := ldapschema.GroupFromEntry(e); lenient(err) {
				groups[ldapschema.NormalizeDN(e.DN)] = len(f.Groups)
				f.Groups = append(f.Groups, broker.Group{Name: x.Name})
				groupRecs = append(groupRecs, x)
			}
			return nil
		}},
		{s.DIT.HomeSites(), one, ldapclient.ClassFilter(ldapschema.ClassHomeSite), func(e *ldap.Entry) error {
			x, err := ldapschema.HomeSiteFromEntry(e)
			if err != nil {
				warn("%s; the row is ignored (run `cpactl lint`)", err)
				return nil
			}
			f.HomeSites = append(f.HomeSites, BrokerHomeSite(x))
			return nil
		}},
		{s.DIT.Sessions(), one, ldapclient.ClassFilter(ldapschema.ClassSession), func(e *ldap.Entry) error {
			if x, err := ldapschema.SessionFromEntry(e); lenient(err) {
				f.Sessions = append(f.Sessions, BrokerSession(x))
			}
			return nil
		}},
		{s.DIT.Assignments(), one, ldapclient.ClassFilter(ldapschema.ClassPodAssignment), func(e *ldap.Entry) error {
			if x, err := ldapschema.AssignmentFromEntry(e); lenient(err) {
				f.Assignments = append(f.Assignments, BrokerAssignment(x))
			}
			return nil
		}},
	}
	if err := s.eachContainer(searches); err != nil {
		return nil, err
	}

	// Memberships, as ResolveFederation's walk up the groups finds them: a
	// user's (or computer's) immediate groups once each by DN, a group's
	// parent groups once each by name.
	userSeen := map[[2]int]bool{}
	for gi, g := range groupRecs {
		for _, m := range g.Members {
			key := ldapschema.NormalizeDN(m)
			if i, ok := users[key]; ok && !userSeen[[2]int{i, gi}] {
				userSeen[[2]int{i, gi}] = true
				f.Users[i].Groups = append(f.Users[i].Groups, g.Name)
			}
			if i, ok := computers[key]; ok && !fold.Contains(f.Computers[i].Groups, g.Name) {
				f.Computers[i].Groups = append(f.Computers[i].Groups, g.Name)
			}
			if i, ok := groups[key]; ok && !fold.Contains(f.Groups[i].Groups, g.Name) {
				f.Groups[i].Groups = append(f.Groups[i].Groups, g.Name)
			}
		}
	}

	// Backups: the backup named by DN, and the GEs naming a primary as
	// their backup (counted once, here), for the broker's backup rule.
	backedUpBy := map[string][]string{} // normalized backup DN -> names of the GEs naming it
	for _, g := range ges {
		if g.BackupDN != "" {
			k := ldapschema.NormalizeDN(g.BackupDN)
			backedUpBy[k] = append(backedUpBy[k], g.Name)
		}
	}
	for i, g := range ges {
		if g.BackupDN == "" {
			continue
		}
		ge := &f.Entitlements[i]
		j, ok := geKeys[ldapschema.NormalizeDN(g.BackupDN)]
		if !ok {
			warn("entitlement %s names backup %s, which does not exist; ignored (run `cpactl lint`)", g.Name, g.BackupDN)
			continue
		}
		ge.Backup = f.Entitlements[j].Name
		ge.BackedUpBy = backedUpBy[ldapschema.NormalizeDN(g.DN)]
	}
	return out, nil
}
