package directory

import (
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/ldapschema"
)

// This file turns directory records into the broker's plain values, and
// reads exactly what one resolve needs (SPEC §3 "Reads").

// BrokerSettings returns the effective settings (defaults where cn=Common
// stores nothing).
func BrokerSettings(rec ldapschema.SettingsRecord) broker.Settings {
	v := func(attr string) int {
		set, _ := ldapschema.LookupSetting(attr)
		n, _ := rec.Value(set)
		return n
	}
	return broker.Settings{
		LoadThresholdForSite:          v(ldapschema.AttrLoadThresholdForSite),
		RDSLoadIndexThreshold:         v(ldapschema.AttrRDSLoadIndexThreshold),
		RDSConnectingSessionThreshold: v(ldapschema.AttrRDSConnectingSessionThreshold),
		MinRDSServersInLBQueue:        v(ldapschema.AttrMinRDSServersInLBQueue),
		EnableSiteRedirection:         v(ldapschema.AttrEnableSiteRedirection) == 1,
	}
}

// BrokerSite converts a site.
func BrokerSite(s ldapschema.Site) broker.Site {
	return broker.Site{Name: s.Name, PreferredSites: s.PreferredSites}
}

// BrokerPod converts a pod.
func BrokerPod(p ldapschema.Pod) broker.Pod {
	return broker.Pod{Name: p.Name, Site: p.Site, Online: p.Online}
}

// BrokerConnectionServer converts a Connection Server.
func BrokerConnectionServer(c ldapschema.ConnectionServer) broker.ConnectionServer {
	return broker.ConnectionServer{Name: c.Name, Pod: c.Pod, Tags: c.Tags}
}

// BrokerPool converts a pool.
func BrokerPool(p ldapschema.Pool) broker.Pool {
	return broker.Pool{Name: p.Name, Pod: p.Pod, Kind: broker.PoolKind(p.Kind), Dedicated: p.Dedicated,
		Capacity: p.Capacity, Sessions: p.Sessions, Assigned: p.Assigned, Farm: p.Farm, Enabled: p.Enabled}
}

// BrokerFarm converts a farm.
func BrokerFarm(f ldapschema.Farm) broker.Farm {
	return broker.Farm{Name: f.Name, Pod: f.Pod, MaxSessionsPerHost: f.MaxSessionsPerHost,
		LoadIndexThreshold: f.LoadIndexThreshold, ConnectingSessionThreshold: f.ConnectingSessionThreshold}
}

// BrokerHost converts an RDS host.
func BrokerHost(h ldapschema.Host) broker.Host {
	var f broker.Features
	for _, name := range h.Features {
		switch strings.ToUpper(name) {
		case ldapschema.FeatureMultiSession:
			f.MultiSession = true
		case ldapschema.FeatureUnauthenticated:
			f.Unauthenticated = true
		case ldapschema.FeatureRDP:
			f.RDP = true
		case ldapschema.FeaturePCoIP:
			f.PCoIP = true
		case ldapschema.FeatureBlast:
			f.Blast = true
		}
	}
	return broker.Host{Name: h.Name, Farm: h.Farm, LoadIndex: h.LoadIndex, Sessions: h.Sessions,
		Connecting: h.Connecting, Features: f, Enabled: h.Enabled}
}

// BrokerEntitlement converts a global entitlement; members under ou=People
// are users, the others groups.
func (s *Store) BrokerEntitlement(g ldapschema.Entitlement) broker.Entitlement {
	out := broker.Entitlement{Name: g.Name, Type: broker.EntitlementType(g.Type), Scope: broker.Scope(g.Scope),
		Dedicated: g.Dedicated, UseHomeSite: g.UseHomeSite, RequireHomeSite: g.RequireHomeSite,
		UsePreferredSites: g.UsePreferredSites, IgnoreHighLoad: g.IgnoreHighLoad,
		Policy: broker.Policy(g.LoadDistribution), AutoClean: g.AutoClean,
		MultipleSessionsPerUser: g.MultipleSessionsPerUser, Tags: g.Tags, ClientRestrictions: g.ClientRestrictions,
		Enabled: g.Enabled, DefaultProtocol: broker.Protocol(g.DefaultProtocol)}
	for _, dn := range g.Members {
		kind := broker.MemberGroup
		if ldapschema.IsUnder(dn, s.DIT.People()) {
			kind = broker.MemberUser
		}
		out.Members = append(out.Members, broker.Member{Kind: kind, Name: ldapschema.NameOf(dn)})
	}
	for _, dn := range g.PoolDNs {
		out.Pools = append(out.Pools, ldapschema.NameOf(dn))
	}
	return out
}

// BrokerHomeSite converts a home-site row.
func BrokerHomeSite(h ldapschema.HomeSite) broker.HomeSite {
	return broker.HomeSite{User: ldapschema.NameOf(h.UserDN), Group: ldapschema.NameOf(h.GroupDN),
		Entitlement: ldapschema.NameOf(h.EntitlementDN), Site: ldapschema.NameOf(h.SiteDN)}
}

// BrokerSession converts a session record.
func BrokerSession(x ldapschema.Session) broker.Session {
	return broker.Session{ID: x.ID, User: ldapschema.NameOf(x.UserDN), Entitlement: ldapschema.NameOf(x.EntitlementDN),
		Pod: ldapschema.NameOf(x.PodDN), BrokeringPod: ldapschema.NameOf(x.BrokeringPodDN),
		Pool: ldapschema.NameOf(x.PoolDN), Host: ldapschema.NameOf(x.HostDN),
		State: broker.SessionState(x.State), Client: ldapschema.NameOf(x.ClientDN)}
}

// BrokerAssignment converts a pod assignment.
func BrokerAssignment(a ldapschema.Assignment) broker.Assignment {
	return broker.Assignment{User: ldapschema.NameOf(a.UserDN), Entitlement: ldapschema.NameOf(a.EntitlementDN),
		Pod: ldapschema.NameOf(a.PodDN), Machine: a.Machine}
}

// ResolveQuery names what one resolve is about.
type ResolveQuery struct {
	User             string // uid, DOMAIN\uid or uid@domain
	Entitlement      string
	ConnectionServer string
	Client           string
}

// ResolveFederation reads what one resolve needs, and nothing more (SPEC §3
// "Reads"): the settings, every site and pod (one search each), the GE, its
// pools, their farms and those farms' hosts (one search per farm), the
// Connection Server, the user and its groups up the nesting (one search per
// level), the client computer and its groups, the home-site rows of the
// user and its immediate groups, and the user's sessions and assignment for
// the GE. The number of searches does not grow with the size of the
// directory. Objects that do not exist are left out: broker.Resolve reports
// them as not found. It returns the user's uid as stored.
func (s *Store) ResolveFederation(q ResolveQuery) (*broker.Federation, string, error) {
	f := &broker.Federation{}
	settings, err := s.Settings()
	if err != nil {
		return nil, "", err
	}
	f.Settings = BrokerSettings(settings)

	sites, err := s.Sites()
	if err != nil {
		return nil, "", err
	}
	for _, x := range sites {
		f.Sites = append(f.Sites, BrokerSite(x))
	}
	pods, err := s.Pods()
	if err != nil {
		return nil, "", err
	}
	for _, x := range pods {
		f.Pods = append(f.Pods, BrokerPod(x))
	}
	if q.ConnectionServer != "" {
		cs, err := s.ConnectionServer(q.ConnectionServer)
		if err != nil && !isNotFound(err) {
			return nil, "", err
		}
		if err == nil {
			f.ConnectionServers = append(f.ConnectionServers, BrokerConnectionServer(cs))
		}
	}

	var geDN string
	ge, err := s.Entitlement(q.Entitlement)
	switch {
	case err == nil:
		geDN = ge.DN
		f.Entitlements = append(f.Entitlements, s.BrokerEntitlement(ge))
		if err := s.loadPools(f, ge.PoolDNs); err != nil {
			return nil, "", err
		}
	case !isNotFound(err):
		return nil, "", err
	}

	uid := q.User
	user, err := s.User(q.User)
	switch {
	case err == nil:
		uid = user.UID
		immediate, err := s.loadGroups(f, user.DN)
		if err != nil {
			return nil, "", err
		}
		f.Users = append(f.Users, broker.User{Name: user.UID, Groups: immediate})
		if err := s.loadUserRecords(f, user.DN, geDN, immediate); err != nil {
			return nil, "", err
		}
	case isNotFound(err):
		if n, perr := ParseUserName(q.User); perr == nil {
			uid = n.UID
		}
	default:
		return nil, "", err
	}

	if q.Client != "" {
		c, err := s.Computer(q.Client)
		switch {
		case err == nil:
			groups, err := s.loadGroups(f, c.DN)
			if err != nil {
				return nil, "", err
			}
			f.Computers = append(f.Computers, broker.Computer{Name: c.Name, Groups: groups})
		case !isNotFound(err):
			return nil, "", err
		}
	}
	return f, uid, nil
}

func isNotFound(err error) bool {
	_, ok := err.(*NotFoundError)
	return ok
}

// loadPools reads the GE's pools (one search by name, kept by DN), their
// farms (one search) and each farm's hosts (one one-level search per farm).
func (s *Store) loadPools(f *broker.Federation, poolDNs []string) error {
	if len(poolDNs) == 0 {
		return nil
	}
	want := map[string]bool{}
	var names []string
	for _, dn := range poolDNs {
		want[ldapschema.NormalizeDN(dn)] = true
		names = append(names, Filter(ldapschema.AttrCN, ldapschema.NameOf(dn)))
	}
	entries, err := s.Find(s.DIT.Pods(), ldap.ScopeWholeSubtree, And(poolFilter(), Or(names...)))
	if err != nil {
		return err
	}
	farmDNs := map[string]string{}
	var farmNames []string
	for _, e := range entries {
		if !want[ldapschema.NormalizeDN(e.DN)] {
			continue
		}
		p, err := ldapschema.PoolFromEntry(e)
		if err != nil {
			return err
		}
		f.Pools = append(f.Pools, BrokerPool(p))
		if p.FarmDN != "" {
			key := ldapschema.NormalizeDN(p.FarmDN)
			if _, seen := farmDNs[key]; !seen {
				farmDNs[key] = p.FarmDN
				farmNames = append(farmNames, Filter(ldapschema.AttrCN, p.Farm))
			}
		}
	}
	if len(farmNames) == 0 {
		return nil
	}
	farms, err := s.Find(s.DIT.Pods(), ldap.ScopeWholeSubtree, And(ClassFilter(ldapschema.ClassRDSFarm), Or(farmNames...)))
	if err != nil {
		return err
	}
	for _, e := range farms {
		if _, ok := farmDNs[ldapschema.NormalizeDN(e.DN)]; !ok {
			continue
		}
		farm, err := ldapschema.FarmFromEntry(e)
		if err != nil {
			return err
		}
		f.Farms = append(f.Farms, BrokerFarm(farm))
		hosts, err := s.Hosts(e.DN)
		if err != nil {
			return err
		}
		for _, h := range hosts {
			f.Hosts = append(f.Hosts, BrokerHost(h))
		}
	}
	return nil
}

// loadGroups walks up the group nesting from member (a user or computer
// DN), one search per level, adding each group with its parents to f once.
// It returns the names of member's immediate groups.
func (s *Store) loadGroups(f *broker.Federation, member string) ([]string, error) {
	known := map[string]int{} // normalized group DN -> index in f.Groups
	for i, g := range f.Groups {
		known[ldapschema.NormalizeDN(s.DIT.Group(g.Name))] = i
	}
	var immediate []string
	level := []string{member}
	seen := map[string]bool{ldapschema.NormalizeDN(member): true}
	for depth := 0; len(level) > 0; depth++ {
		groups, err := s.GroupsWithMember(level...)
		if err != nil {
			return nil, err
		}
		inLevel := map[string]string{}
		for _, dn := range level {
			inLevel[ldapschema.NormalizeDN(dn)] = dn
		}
		var next []string
		for _, g := range groups {
			key := ldapschema.NormalizeDN(g.DN)
			for _, m := range g.Members {
				child, ok := inLevel[ldapschema.NormalizeDN(m)]
				if !ok {
					continue
				}
				if depth == 0 {
					immediate = append(immediate, g.Name)
				} else if i, ok := known[ldapschema.NormalizeDN(child)]; ok {
					f.Groups[i].Groups = appendOnce(f.Groups[i].Groups, g.Name)
				}
			}
			if _, ok := known[key]; !ok {
				known[key] = len(f.Groups)
				f.Groups = append(f.Groups, broker.Group{Name: g.Name})
			}
			if !seen[key] {
				seen[key] = true
				next = append(next, g.DN)
			}
		}
		level = next
	}
	return immediate, nil
}

func appendOnce(list []string, name string) []string {
	for _, n := range list {
		if strings.EqualFold(n, name) {
			return list
		}
	}
	return append(list, name)
}

// loadUserRecords reads the home-site rows of the user and its immediate
// groups, and the user's sessions and assignment for the GE.
func (s *Store) loadUserRecords(f *broker.Federation, userDN, geDN string, immediate []string) error {
	principals := []string{Filter(ldapschema.AttrUserDN, userDN)}
	for _, g := range immediate {
		principals = append(principals, Filter(ldapschema.AttrGroupDN, s.DIT.Group(g)))
	}
	rows, err := s.HomeSites(Or(principals...))
	if err != nil {
		return err
	}
	for _, r := range rows {
		f.HomeSites = append(f.HomeSites, BrokerHomeSite(r))
	}
	if geDN == "" {
		return nil
	}
	mine := And(Filter(ldapschema.AttrUserDN, userDN), Filter(ldapschema.AttrEntitlementDN, geDN))
	sessions, err := s.Sessions(mine)
	if err != nil {
		return err
	}
	for _, x := range sessions {
		f.Sessions = append(f.Sessions, BrokerSession(x))
	}
	assignments, err := s.Assignments(mine)
	if err != nil {
		return err
	}
	for _, a := range assignments {
		f.Assignments = append(f.Assignments, BrokerAssignment(a))
	}
	return nil
}
