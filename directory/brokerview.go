package directory

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/internal/fold"
	"github.com/cpactl/cpactl/internal/nesting"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
)

// This file turns directory records into the broker's plain values, and
// reads exactly what one resolve needs (docs/resolve.md "Reads").

// BrokerSettings returns the effective settings (defaults where cn=Common
// stores nothing).
func BrokerSettings(rec ldapschema.SettingsRecord) broker.Settings {
	v := func(attr string) int {
		set, _ := ldapschema.LookupSetting(attr)
		n, _ := rec.Value(set)
		return n
	}
	source := func(attr string) broker.ThresholdSource {
		if _, ok := rec.Stored[attr]; ok {
			return broker.SourceFederation
		}
		return broker.SourceDefault
	}
	return broker.Settings{
		LoadThresholdForSite:          v(ldapschema.AttrLoadThresholdForSite),
		RDSLoadIndexThreshold:         v(ldapschema.AttrRDSLoadIndexThreshold),
		RDSConnectingSessionThreshold: v(ldapschema.AttrRDSConnectingSessionThreshold),
		MinRDSServersInLBQueue:        v(ldapschema.AttrMinRDSServersInLBQueue),
		EnableSiteRedirection:         v(ldapschema.AttrEnableSiteRedirection) == 1,
		RDSSources: broker.ThresholdSources{LIT: source(ldapschema.AttrRDSLoadIndexThreshold),
			CST: source(ldapschema.AttrRDSConnectingSessionThreshold), MIN: source(ldapschema.AttrMinRDSServersInLBQueue)},
	}
}

// BrokerSite converts a site.
func BrokerSite(s ldapschema.Site) broker.Site {
	return broker.Site{Name: s.Name, PreferredSites: s.PreferredSites}
}

// BrokerPod converts a pod.
func BrokerPod(p ldapschema.Pod) broker.Pod {
	own := func(attr string) *int {
		if v, ok := p.RDS[attr]; ok {
			return &v
		}
		return nil
	}
	return broker.Pod{Name: p.Name, Site: p.Site, Online: p.Online, RDS: broker.PodRDS{
		LoadIndexThreshold:         own(ldapschema.AttrRDSLoadIndexThreshold),
		ConnectingSessionThreshold: own(ldapschema.AttrRDSConnectingSessionThreshold),
		MinServersInLBQueue:        own(ldapschema.AttrMinRDSServersInLBQueue)}}
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
		Connecting: h.Connecting, Features: f, Enabled: h.Enabled,
		PolicyLoadIndexThreshold: h.PolicyLoadIndexThreshold, PolicyConnectingSessionThreshold: h.PolicyConnectingSessionThreshold}
}

// brokerEntitlement converts a global entitlement. Members under ou=People
// are users, members under ou=Groups groups; any other member DN (a client
// computer, an entry outside cpactl's layout) is left out, and returned in
// ignored: an entitlement is given to users and groups only.
func (s *Store) brokerEntitlement(g ldapschema.Entitlement) (out broker.Entitlement, ignored []string) {
	out = broker.Entitlement{Name: g.Name, Type: broker.EntitlementType(g.Type), Scope: broker.Scope(g.Scope),
		Dedicated: g.Dedicated, UseHomeSite: g.UseHomeSite, RequireHomeSite: g.RequireHomeSite,
		UsePreferredSites: g.UsePreferredSites, IgnoreHighLoad: g.IgnoreHighLoad,
		Policy: broker.Policy(g.LoadDistribution), AutoClean: g.AutoClean,
		MultipleSessionsPerUser: g.MultipleSessionsPerUser, Tags: g.Tags, ClientRestrictions: g.ClientRestrictions,
		Enabled: g.Enabled, DefaultProtocol: broker.Protocol(g.DefaultProtocol),
		BackupNamed: ldapschema.NameOf(g.BackupDN)}
	for _, dn := range g.Members {
		var kind broker.MemberKind
		switch {
		case ldapschema.IsUnder(dn, s.DIT.People()):
			kind = broker.MemberUser
		case ldapschema.IsUnder(dn, s.DIT.Groups()):
			kind = broker.MemberGroup
		default:
			ignored = append(ignored, dn)
			continue
		}
		out.Members = append(out.Members, broker.Member{Kind: kind, Name: ldapschema.NameOf(dn)})
	}
	for _, dn := range g.PoolDNs {
		out.Pools = append(out.Pools, ldapschema.NameOf(dn))
	}
	return out, ignored
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
	ConnectionServer string // "" when connecting through a pod
	Client           string // "" when no client computer is given
}

// ResolveData is what ResolveFederation read for one request.
type ResolveData struct {
	// Federation holds what the request needs. Objects the request names
	// that do not exist are absent: broker.Resolve reports them as not
	// found.
	Federation *broker.Federation
	// UID is the user's uid as stored, or as given when no such user
	// exists.
	UID string
	// Warnings name entries read only as far as they decode (a value
	// cpactl's schema does not allow, which an LDIF snapshot or a hand edit
	// can hold) and references left out; `cpactl lint` reports the same
	// problems.
	Warnings []string
}

// UserDomainError says a user argument named a domain (DOMAIN\uid or
// uid@domain) that the stored user is not in. DOMAIN\uid names one
// principal, so no such user exists: it unwraps to a *NotFoundError (exit
// code 3).
type UserDomainError struct {
	Arg    string // the argument as given
	UID    string // the stored user with that uid
	Domain string // that user's stored domain
}

func (e *UserDomainError) Error() string {
	// Not %q: it would double the backslash of DOMAIN\uid.
	return fmt.Sprintf("user %s does not exist: %s is in domain %s", e.Arg, e.UID, e.Domain)
}

// Unwrap makes the error a not-found error.
func (e *UserDomainError) Unwrap() error {
	return &ldapclient.NotFoundError{Kind: objkind.User, Name: e.Arg}
}

// ResolveFederation reads what one resolve needs, and nothing more (docs/resolve.md
// "Reads"), in a number of searches that does not depend on the size of the
// directory:
//
//   - the settings entry (1), every site (1) and every pod (1);
//   - the Connection Server (1, when given);
//   - the GE (1), its pools (1), their farms (1) and each of those farms'
//     hosts (one search for the children of all of them);
//   - when the GE names a backup: the backup (1) and the entitlements that
//     name the GE as theirs (1, for the no-chain rule); the backup's pools
//     are read with the GE's, in the same searches;
//   - the user (1), its groups up the nesting (1 per level, the last one
//     finding nothing), the home-site rows of the user and its immediate
//     groups (1), the user's sessions (1: of every GE, so that an
//     application can open in an RDS session of another application GE),
//     those sessions' entitlements (1, when any) and the user's
//     assignments for the GE (1);
//   - the client computer (1, when given) and its groups up the nesting.
//
// Every search is a one-level or subtree search of one container with an
// equality filter on names or DNs: no search lists users, groups,
// entitlements, pools, farms, hosts, home sites, sessions or assignments
// that the request does not involve.
//
// Entries with values cpactl's schema does not allow are read as far as
// they decode and named in Warnings, so one bad entry elsewhere does not
// stop a resolve. The GE's type, scope, load distribution policy and
// default protocol are passed to the broker as stored, so that it can warn
// about an unknown value and apply the default.
func (s *Store) ResolveFederation(q ResolveQuery) (*ResolveData, error) {
	r := &resolveReader{s: s, f: &broker.Federation{}, groups: map[string]int{}}
	uid, err := r.read(q)
	if err != nil {
		return nil, err
	}
	return &ResolveData{Federation: r.f, UID: uid, Warnings: r.warnings}, nil
}

// resolveReader carries one ResolveFederation call.
type resolveReader struct {
	s        *Store
	f        *broker.Federation
	warnings []string
	groups   map[string]int // normalized group DN -> index in f.Groups
}

func (r *resolveReader) warn(format string, args ...any) {
	r.warnings = append(r.warnings, fmt.Sprintf(format, args...))
}

// unreadable notes an entry that did not decode cleanly.
func (r *resolveReader) unreadable(err error, what string) {
	r.warn("%s; %s (run `cpactl lint`)", err, what)
}

// LoadsFederation reads what `cpactl loads` needs for one GE: the
// settings, every site and pod, the GE and its pools, their farms and
// hosts (TopologyFederation's searches: those of ResolveFederation
// without the user's). A GE that does not exist is a *NotFoundError.
func (s *Store) LoadsFederation(entitlement string) (*ResolveData, error) {
	if entitlement == "" {
		return nil, s.notFound(objkind.Entitlement, entitlement)
	}
	t, err := s.TopologyFederation(entitlement)
	if err != nil {
		return nil, err
	}
	return &ResolveData{Federation: t.Federation, Warnings: t.Warnings}, nil
}

func (r *resolveReader) read(q ResolveQuery) (string, error) {
	s, f := r.s, r.f
	if err := r.readTopology(); err != nil {
		return "", err
	}
	if q.ConnectionServer != "" {
		e, err := s.findNamed(objkind.ConnectionServer, q.ConnectionServer, s.DIT.Pods(), ldap.ScopeWholeSubtree,
			ldapschema.ClassConnectionServer, ldapschema.AttrCN)
		switch {
		case err == nil:
			for _, cs := range lenientRecords(r, []*ldap.Entry{e}, ldapschema.ConnectionServerFromEntry, nil) {
				f.ConnectionServers = append(f.ConnectionServers, BrokerConnectionServer(cs))
			}
		case !isNotFound(err):
			return "", err
		}
	}

	geDN, err := r.readEntitlement(q.Entitlement)
	if err != nil {
		return "", err
	}

	uid, userDN, err := r.readUser(q.User)
	if err != nil {
		return "", err
	}
	if userDN != "" {
		immediate, err := r.readGroups(userDN)
		if err != nil {
			return "", err
		}
		u := broker.User{Name: uid}
		for _, g := range immediate {
			u.Groups = append(u.Groups, g.Name)
		}
		f.Users = append(f.Users, u)
		if err := r.readUserRecords(userDN, geDN, immediate); err != nil {
			return "", err
		}
	}

	if q.Client != "" {
		e, err := s.findNamed(objkind.Computer, q.Client, s.DIT.Computers(), ldap.ScopeSingleLevel, ldapschema.ClassDevice,
			ldapschema.AttrCN)
		switch {
		case err == nil:
			c, cerr := ldapschema.ComputerFromEntry(e)
			if cerr != nil {
				r.unreadable(cerr, "read as far as it decodes")
			}
			immediate, err := r.readGroups(e.DN)
			if err != nil {
				return "", err
			}
			bc := broker.Computer{Name: c.Name}
			for _, g := range immediate {
				bc.Groups = append(bc.Groups, g.Name)
			}
			f.Computers = append(f.Computers, bc)
		case !isNotFound(err):
			return "", err
		}
	}
	return uid, nil
}

// readTopology reads the settings, every site and every pod (three
// searches).
func (r *resolveReader) readTopology() error {
	s, f := r.s, r.f
	e, err := s.Entry(s.DIT.Settings())
	if err != nil {
		return err
	}
	settings, err := ldapschema.SettingsFromEntry(e)
	if err != nil {
		r.unreadable(err, "the default is used for that setting")
	}
	f.Settings = BrokerSettings(settings)

	entries, err := s.Find(s.DIT.Sites(), ldap.ScopeSingleLevel, ldapclient.ClassFilter(ldapschema.ClassSite))
	if err != nil {
		return err
	}
	for _, x := range lenientRecords(r, entries, ldapschema.SiteFromEntry, func(x ldapschema.Site) string { return x.Name }) {
		f.Sites = append(f.Sites, BrokerSite(x))
	}
	entries, err = s.Find(s.DIT.Pods(), ldap.ScopeSingleLevel, ldapclient.ClassFilter(ldapschema.ClassPod))
	if err != nil {
		return err
	}
	for _, x := range lenientRecords(r, entries, ldapschema.PodFromEntry, func(x ldapschema.Pod) string { return x.Name }) {
		f.Pods = append(f.Pods, BrokerPod(x))
	}
	return nil
}

// TopologyData is what TopologyFederation read.
type TopologyData struct {
	// Federation holds the settings, every site and every pod and, when an
	// entitlement was named, that entitlement with its pools, their farms
	// and those farms' hosts.
	Federation *broker.Federation
	// Warnings name entries read only as far as they decode, as for
	// ResolveFederation.
	Warnings []string
}

// TopologyFederation reads the federation's sites and pods and, when
// entitlement is not "", that global entitlement's pools, their farms and
// hosts: what `cpactl site graph` draws, in at most nine searches (two
// of them for a backup GE) whatever the size of the directory: no user,
// group, session or other entitlement is read. An entitlement that does
// not exist is a *NotFoundError.
func (s *Store) TopologyFederation(entitlement string) (*TopologyData, error) {
	r := &resolveReader{s: s, f: &broker.Federation{}, groups: map[string]int{}}
	if err := r.readTopology(); err != nil {
		return nil, err
	}
	if entitlement != "" {
		dn, err := r.readEntitlement(entitlement)
		if err != nil {
			return nil, err
		}
		if dn == "" {
			return nil, s.notFound(objkind.Entitlement, entitlement)
		}
	}
	return &TopologyData{Federation: r.f, Warnings: r.warnings}, nil
}

// geEnumAttrs are the GE's enumerations the broker interprets itself, with
// a warning and the default for a value it does not know.
var geEnumAttrs = []string{ldapschema.AttrEntitlementType, ldapschema.AttrScope, ldapschema.AttrLoadDistribution,
	ldapschema.AttrDefaultProtocol}

// readEntitlement reads the GE and its pools; it returns the GE's DN, ""
// when it does not exist.
func (r *resolveReader) readEntitlement(name string) (string, error) {
	s := r.s
	e, err := s.findNamed(objkind.Entitlement, name, s.DIT.Entitlements(), ldap.ScopeSingleLevel,
		ldapschema.ClassGlobalEntitlement, ldapschema.AttrCN)
	if isNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	g, ge, ignored, rest := s.entitlementFromEntry(e)
	if rest != nil {
		r.unreadable(rest, "read as far as it decodes")
	}
	for _, dn := range ignored {
		r.warn("entitlement %s lists member %s, which is neither a user (under %s) nor a group (under %s); ignored",
			g.Name, dn, s.DIT.People(), s.DIT.Groups())
	}
	poolDNs := g.PoolDNs
	if g.BackupDN != "" {
		backup, err := r.readBackup(g, &ge)
		if err != nil {
			return "", err
		}
		if backup != nil {
			poolDNs = append(append([]string(nil), poolDNs...), backup.PoolDNs...)
		}
	}
	r.f.Entitlements = append(r.f.Entitlements, ge)
	return g.DN, r.readPools(poolDNs)
}

// entitlementFromEntry maps a GE entry to its record and its broker value.
// The GE's type, scope, load distribution policy and default protocol are
// passed to the broker as stored (an unknown enumeration is the broker's to
// report, with a warning and the default); rest is an error of any other
// value that does not decode; ignored are the member DNs that are neither
// users nor groups.
func (s *Store) entitlementFromEntry(e *ldap.Entry) (g ldapschema.Entitlement, ge broker.Entitlement, ignored []string, rest error) {
	g, err := ldapschema.EntitlementFromEntry(e)
	if err != nil {
		_, rest = ldapschema.EntitlementFromEntry(withoutAttrs(e, geEnumAttrs...))
	}
	ge, ignored = s.brokerEntitlement(g)
	stored := func(attr string) string { return strings.TrimSpace(e.GetEqualFoldAttributeValue(attr)) }
	if v := stored(ldapschema.AttrEntitlementType); v != "" {
		ge.Type = broker.EntitlementType(v)
	}
	if v := stored(ldapschema.AttrScope); v != "" {
		ge.Scope = broker.Scope(v)
	}
	if v := stored(ldapschema.AttrLoadDistribution); v != "" {
		ge.Policy = broker.Policy(v)
	}
	if v := stored(ldapschema.AttrDefaultProtocol); v != "" {
		ge.DefaultProtocol = broker.Protocol(v)
	}
	return g, ge, ignored, rest
}

// readBackup reads the backup global entitlement g names (one search) and
// the entitlements naming g as their backup (one search: ge.BackedUpBy,
// for the broker's backup rule), names the backup on ge and adds it to the
// federation. It returns the backup, nil when it does not exist.
func (r *resolveReader) readBackup(g ldapschema.Entitlement, ge *broker.Entitlement) (*ldapschema.Entitlement, error) {
	s := r.s
	ge.Backup = ldapschema.NameOf(g.BackupDN)
	e, err := s.findNamed(objkind.Entitlement, ge.Backup, s.DIT.Entitlements(), ldap.ScopeSingleLevel,
		ldapschema.ClassGlobalEntitlement, ldapschema.AttrCN)
	if isNotFound(err) || (err == nil && !ldapschema.EqualDN(e.DN, g.BackupDN)) {
		r.warn("entitlement %s names backup %s, which does not exist; ignored (run `cpactl lint`)", g.Name, g.BackupDN)
		ge.Backup = ""
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	backup, err := ldapschema.EntitlementFromEntry(e)
	if err != nil {
		r.unreadable(err, "read as far as it decodes")
	}
	users, err := s.EntitlementsBackedUpBy(g.DN)
	if err != nil {
		return nil, err
	}
	for _, u := range users {
		ge.BackedUpBy = append(ge.BackedUpBy, u.Name)
	}
	b, _ := s.brokerEntitlement(backup)
	r.f.Entitlements = append(r.f.Entitlements, b)
	return &backup, nil
}

// withoutAttrs returns a copy of e without the named attributes.
func withoutAttrs(e *ldap.Entry, names ...string) *ldap.Entry {
	out := ldap.NewEntry(e.DN, nil)
	for _, a := range e.Attributes {
		drop := false
		for _, n := range names {
			if strings.EqualFold(a.Name, n) {
				drop = true
			}
		}
		if !drop {
			out.Attributes = append(out.Attributes, a)
		}
	}
	return out
}

// readPools reads the GE's pools (one search by name, kept by DN, since the
// GE references them by DN), their farms (one search, kept by DN) and the
// hosts of all those farms (one search for the farms' children): three
// searches whatever the number of pools and farms.
func (r *resolveReader) readPools(poolDNs []string) error {
	if len(poolDNs) == 0 {
		return nil
	}
	s := r.s
	want := map[string]bool{}
	var names []string
	for _, dn := range poolDNs {
		want[ldapschema.NormalizeDN(dn)] = true
		names = append(names, ldapclient.Filter(ldapschema.AttrCN, ldapschema.NameOf(dn)))
	}
	entries, err := s.Find(s.DIT.Pods(), ldap.ScopeWholeSubtree, ldapclient.And(poolFilter(), ldapclient.Or(names...)))
	if err != nil {
		return err
	}
	entries = keepDNs(entries, want)
	farmDNs := map[string]bool{}
	var farmNames []string
	for _, p := range lenientRecords(r, entries, ldapschema.PoolFromEntry, func(x ldapschema.Pool) string { return x.Name }) {
		r.f.Pools = append(r.f.Pools, BrokerPool(p))
		if key := ldapschema.NormalizeDN(p.FarmDN); p.FarmDN != "" && !farmDNs[key] {
			farmDNs[key] = true
			farmNames = append(farmNames, ldapclient.Filter(ldapschema.AttrCN, p.Farm))
		}
	}
	if len(farmNames) == 0 {
		return nil
	}
	farmEntries, err := s.Find(s.DIT.Pods(), ldap.ScopeWholeSubtree, ldapclient.And(ldapclient.ClassFilter(ldapschema.ClassRDSFarm), ldapclient.Or(farmNames...)))
	if err != nil {
		return err
	}
	farms := lenientRecords(r, keepDNs(farmEntries, farmDNs), ldapschema.FarmFromEntry, func(x ldapschema.Farm) string { return x.Name })
	if len(farms) == 0 {
		return nil
	}
	children := make([]string, len(farms))
	for i, farm := range farms {
		children[i] = ldapclient.ChildrenFilter(farm.DN)
	}
	hostEntries, err := s.Find(s.DIT.Pods(), ldap.ScopeWholeSubtree, ldapclient.And(ldapclient.ClassFilter(ldapschema.ClassRDSHost), ldapclient.Or(children...)))
	if err != nil {
		return err
	}
	byFarm := map[string][]*ldap.Entry{}
	for _, e := range hostEntries {
		key := ldapschema.NormalizeDN(ldapschema.ParentOf(e.DN))
		byFarm[key] = append(byFarm[key], e)
	}
	for _, farm := range farms {
		r.f.Farms = append(r.f.Farms, BrokerFarm(farm))
		hosts := byFarm[ldapschema.NormalizeDN(farm.DN)]
		for _, h := range lenientRecords(r, hosts, ldapschema.HostFromEntry, func(x ldapschema.Host) string { return x.Name }) {
			r.f.Hosts = append(r.f.Hosts, BrokerHost(h))
		}
	}
	return nil
}

// keepDNs keeps the entries whose normalized DN is in want: a search by
// name may find a same-named entry elsewhere, which is not the one
// referenced.
func keepDNs(entries []*ldap.Entry, want map[string]bool) []*ldap.Entry {
	var out []*ldap.Entry
	for _, e := range entries {
		if want[ldapschema.NormalizeDN(e.DN)] {
			out = append(out, e)
		}
	}
	return out
}

// readUser finds the user an argument names. It returns the uid to resolve
// and the user's DN ("" when no such user exists). A domain that does not
// match the stored one is a *UserDomainError.
func (r *resolveReader) readUser(arg string) (uid, dn string, err error) {
	n, err := ParseUserName(arg)
	if err != nil {
		return "", "", err
	}
	s := r.s
	e, err := s.findNamed(objkind.User, n.UID, s.DIT.People(), ldap.ScopeSingleLevel, ldapschema.ClassInetOrgPerson,
		ldapschema.AttrUID)
	if isNotFound(err) {
		return n.UID, "", nil
	}
	if err != nil {
		return "", "", err
	}
	u, err := ldapschema.UserFromEntry(e)
	if err != nil {
		r.unreadable(err, "read as far as it decodes")
	}
	if n.Domain != "" && u.Domain != "" && !domainMatches(n.Domain, u.Domain) {
		return "", "", &UserDomainError{Arg: arg, UID: u.UID, Domain: u.Domain}
	}
	return u.UID, e.DN, nil
}

// readGroups walks up the group nesting from member (a user or computer
// DN), one search per level (nesting.Levels), adding each group found, with
// the groups it is an immediate member of, to the federation once. Cycles
// end the walk: a group is searched for once. It returns member's immediate
// groups.
func (r *resolveReader) readGroups(member string) ([]ldapschema.Group, error) {
	var immediate []ldapschema.Group
	depth := 0
	err := nesting.Levels([]string{member}, func(level []string) ([]string, bool, error) {
		defer func() { depth++ }()
		inLevel := map[string]bool{}
		var fs []string
		for _, dn := range level {
			inLevel[ldapschema.NormalizeDN(dn)] = true
			fs = append(fs, ldapclient.Filter(ldapschema.AttrMember, dn))
		}
		entries, err := r.s.Find(r.s.DIT.Groups(), ldap.ScopeSingleLevel, ldapclient.And(ldapclient.ClassFilter(ldapschema.ClassGroup), ldapclient.Or(fs...)))
		if err != nil {
			return nil, false, err
		}
		var next []string
		for _, g := range lenientRecords(r, entries, ldapschema.GroupFromEntry, func(x ldapschema.Group) string { return x.Name }) {
			key := ldapschema.NormalizeDN(g.DN)
			if _, known := r.groups[key]; !known {
				r.groups[key] = len(r.f.Groups)
				r.f.Groups = append(r.f.Groups, broker.Group{Name: g.Name})
			}
			for _, m := range g.Members {
				child := ldapschema.NormalizeDN(m)
				if !inLevel[child] {
					continue
				}
				if depth == 0 {
					immediate = appendGroupOnce(immediate, g)
				} else if i, ok := r.groups[child]; ok {
					r.f.Groups[i].Groups = appendOnce(r.f.Groups[i].Groups, g.Name)
				}
			}
			next = append(next, g.DN)
		}
		return next, false, nil
	}, nesting.Once(ldapschema.NormalizeDN))
	if err != nil {
		return nil, err
	}
	return immediate, nil
}

func appendGroupOnce(list []ldapschema.Group, g ldapschema.Group) []ldapschema.Group {
	for _, x := range list {
		if ldapschema.EqualDN(x.DN, g.DN) {
			return list
		}
	}
	return append(list, g)
}

func appendOnce(list []string, name string) []string {
	if fold.Contains(list, name) {
		return list
	}
	return append(list, name)
}

// readUserRecords reads the home-site rows of the user and its immediate
// groups (for every GE: the broker keeps the global rows and this GE's
// overrides), the user's sessions of every GE, and its assignments for the
// GE (geDN, "" when the GE does not exist).
func (r *resolveReader) readUserRecords(userDN, geDN string, immediate []ldapschema.Group) error {
	s, f := r.s, r.f
	principals := []string{ldapclient.Filter(ldapschema.AttrUserDN, userDN)}
	for _, g := range immediate {
		principals = append(principals, ldapclient.Filter(ldapschema.AttrGroupDN, g.DN))
	}
	entries, err := s.Find(s.DIT.HomeSites(), ldap.ScopeSingleLevel, ldapclient.And(ldapclient.ClassFilter(ldapschema.ClassHomeSite), ldapclient.Or(principals...)))
	if err != nil {
		return err
	}
	snapshot.SortEntries(entries)
	for _, e := range entries {
		row, err := ldapschema.HomeSiteFromEntry(e)
		if err != nil {
			r.unreadable(err, "the row is ignored")
			continue
		}
		f.HomeSites = append(f.HomeSites, BrokerHomeSite(row))
	}

	entries, err = s.Find(s.DIT.Sessions(), ldap.ScopeSingleLevel, ldapclient.And(ldapclient.ClassFilter(ldapschema.ClassSession),
		ldapclient.Filter(ldapschema.AttrUserDN, userDN)))
	if err != nil {
		return err
	}
	sessions := lenientRecords(r, entries, ldapschema.SessionFromEntry, func(x ldapschema.Session) string { return x.ID })
	for _, x := range sessions {
		f.Sessions = append(f.Sessions, BrokerSession(x))
	}
	if err := r.readSessionEntitlements(sessions); err != nil {
		return err
	}
	if geDN == "" {
		return nil
	}
	entries, err = s.Find(s.DIT.Assignments(), ldap.ScopeSingleLevel, ldapclient.And(ldapclient.ClassFilter(ldapschema.ClassPodAssignment),
		ldapclient.Filter(ldapschema.AttrUserDN, userDN), ldapclient.Filter(ldapschema.AttrEntitlementDN, geDN)))
	if err != nil {
		return err
	}
	for _, a := range lenientRecords(r, entries, ldapschema.AssignmentFromEntry, func(x ldapschema.Assignment) string { return x.DN }) {
		f.Assignments = append(f.Assignments, BrokerAssignment(a))
	}
	return nil
}

// readSessionEntitlements reads the entitlements of the user's sessions
// that the federation does not hold yet (one search), so that the broker
// knows which are application entitlements (docs/resolve.md "Applications
// in an existing RDS session"). Their pools are not read: a shared session
// is placed on a pool of the GE resolved.
func (r *resolveReader) readSessionEntitlements(sessions []ldapschema.Session) error {
	known := map[string]bool{}
	for _, g := range r.f.Entitlements {
		known[fold.Key(g.Name)] = true
	}
	want := map[string]bool{}
	var names []string
	for _, x := range sessions {
		name := ldapschema.NameOf(x.EntitlementDN)
		if x.EntitlementDN == "" || known[fold.Key(name)] {
			continue
		}
		known[fold.Key(name)] = true
		want[ldapschema.NormalizeDN(x.EntitlementDN)] = true
		names = append(names, ldapclient.Filter(ldapschema.AttrCN, name))
	}
	if len(names) == 0 {
		return nil
	}
	s := r.s
	entries, err := s.Find(s.DIT.Entitlements(), ldap.ScopeSingleLevel, ldapclient.And(ldapclient.ClassFilter(ldapschema.ClassGlobalEntitlement), ldapclient.Or(names...)))
	if err != nil {
		return err
	}
	for _, g := range lenientRecords(r, keepDNs(entries, want), ldapschema.EntitlementFromEntry, func(x ldapschema.Entitlement) string { return x.Name }) {
		b, _ := s.brokerEntitlement(g)
		b.Members, b.Pools = nil, nil
		r.f.Entitlements = append(r.f.Entitlements, b)
	}
	return nil
}

// lenientRecords maps entries to records sorted by key (as mapSorted does;
// nil key: entry order), keeping a record whose values only partly decode
// with a warning, and leaving out an entry of the wrong class.
func lenientRecords[T any](r *resolveReader, entries []*ldap.Entry, from func(*ldap.Entry) (T, error), key func(T) string) []T {
	var kept []*ldap.Entry
	for _, e := range entries {
		if _, err := from(e); err != nil {
			if errors.Is(err, ldapschema.ErrWrongClass) {
				r.unreadable(err, "left out")
				continue
			}
			r.unreadable(err, "read as far as it decodes")
		}
		kept = append(kept, e)
	}
	lenient := func(e *ldap.Entry) (T, error) { rec, _ := from(e); return rec, nil }
	if key == nil {
		key = func(T) string { return "" }
	}
	out, _ := mapSorted(kept, lenient, key)
	return out
}

func isNotFound(err error) bool {
	var nf *ldapclient.NotFoundError
	return errors.As(err, &nf)
}
