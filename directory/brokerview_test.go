package directory

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/directory/internal/dirtest"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

// Tests of ResolveFederation: what one resolve reads, on a real slapd and
// on an LDIF snapshot of the same entries.

// countingClient counts the searches made through it, with the entries
// each one returned.
type countingClient struct {
	ldapclient.Client
	searches []searchRecord
}

type searchRecord struct {
	base    string
	scope   int
	filter  string
	entries int
}

func (s searchRecord) String() string {
	return fmt.Sprintf("%s (scope %d) %s: %d entries", s.base, s.scope, s.filter, s.entries)
}

func (c *countingClient) Search(req *ldap.SearchRequest) (*ldap.SearchResult, error) {
	res, err := c.Client.Search(req)
	n := 0
	if res != nil {
		n = len(res.Entries)
	}
	c.searches = append(c.searches, searchRecord{base: ldapschema.NormalizeDN(req.BaseDN), scope: req.Scope, filter: req.Filter, entries: n})
	return res, err
}

func (c *countingClient) SearchEach(req *ldap.SearchRequest, each func(*ldap.Entry) error) error {
	n := 0
	err := c.Client.SearchEach(req, func(e *ldap.Entry) error {
		n++
		return each(e)
	})
	c.searches = append(c.searches, searchRecord{base: ldapschema.NormalizeDN(req.BaseDN), scope: req.Scope, filter: req.Filter, entries: n})
	return err
}

// ldifText builds LDIF content entries, every value base64-encoded so that
// any character survives.
type ldifText struct{ b strings.Builder }

func (l *ldifText) add(dn string, a ldapschema.Attrs) {
	l.b.WriteString("dn:: " + dirtest.B64(dn) + "\n")
	names := make([]string, 0, len(a))
	for name := range a {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, v := range a[name] {
			l.b.WriteString(name + ":: " + dirtest.B64(v) + "\n")
		}
	}
	l.b.WriteString("\n")
}

func (l *ldifText) layout(settings ldapschema.Attrs) {
	l.add(dit.Base, ldapschema.Attrs{ldapschema.AttrObjectClass: {"top", "domain"}, ldapschema.AttrDC: {"vdiglobal"}})
	for _, c := range dit.Containers() {
		l.add(c, ldapschema.Attrs{ldapschema.AttrObjectClass: {"top", ldapschema.ClassOrganizationalUnit},
			ldapschema.AttrOU: {ldapschema.NameOf(c)}})
	}
	a := ldapschema.Attrs{ldapschema.AttrObjectClass: {"top", ldapschema.ClassGlobalSettings}, ldapschema.AttrCN: {"Common"}}
	for k, v := range settings {
		a[k] = v
	}
	l.add(dit.Settings(), a)
}

func (l *ldifText) site(name string, preferred ...string) {
	l.add(dit.Site(name), ldapschema.Site{Name: name, PreferredSites: preferred}.Attrs())
}

func (l *ldifText) pod(name, site string) {
	l.add(dit.Pod(name), ldapschema.Pod{Name: name, SiteDN: dit.Site(site), Online: true}.Attrs())
}

func (l *ldifText) cs(name, pod string, tags ...string) {
	l.add(dit.ConnectionServer(pod, name), ldapschema.ConnectionServer{Name: name, Tags: tags}.Attrs())
}

func (l *ldifText) desktopPool(name, pod string, capacity, sessions int) {
	l.add(dit.Pool(pod, name), ldapschema.Pool{Name: name, Kind: ldapschema.KindDesktop, Capacity: capacity,
		Sessions: sessions, Enabled: true}.Attrs())
}

func (l *ldifText) farmPool(name, pod, kind, farm string) {
	l.add(dit.Pool(pod, name), ldapschema.Pool{Name: name, Kind: kind, FarmDN: dit.Farm(pod, farm), Enabled: true}.Attrs())
}

func (l *ldifText) farm(name, pod string, hosts ...ldapschema.Host) {
	l.add(dit.Farm(pod, name), ldapschema.Farm{Name: name, MaxSessionsPerHost: 10}.Attrs())
	for _, h := range hosts {
		if h.Features == nil {
			h.Features = ldapschema.AllFeatures
		}
		h.Enabled = true
		l.add(dit.Host(pod, name, h.Name), h.Attrs())
	}
}

func (l *ldifText) user(uid, domain string) {
	l.add(dit.User(uid), ldapschema.User{UID: uid, Domain: domain}.Attrs())
}

func (l *ldifText) group(name string, memberDNs ...string) {
	l.add(dit.Group(name), ldapschema.Group{Name: name, Members: memberDNs}.Attrs())
}

func (l *ldifText) computer(name string) {
	l.add(dit.Computer(name), ldapschema.Computer{Name: name}.Attrs())
}

func (l *ldifText) entitlement(g ldapschema.Entitlement) { l.add(dit.Entitlement(g.Name), g.Attrs()) }

// homeSite adds a row for principalDN (a user or group DN), for ge ("" for
// the global home site).
func (l *ldifText) homeSite(principalDN, ge, site string) {
	geDN := ""
	if ge != "" {
		geDN = dit.Entitlement(ge)
	}
	row := ldapschema.HomeSite{DN: dit.HomeSite(principalDN, geDN), EntitlementDN: geDN, SiteDN: dit.Site(site)}
	if ldapschema.IsUnder(principalDN, dit.People()) {
		row.UserDN = principalDN
	} else {
		row.GroupDN = principalDN
	}
	l.add(row.DN, row.Attrs())
}

func (l *ldifText) session(s ldapschema.Session) { l.add(dit.Session(s.ID), s.Attrs()) }

func (l *ldifText) assignment(uid, ge, pod string) {
	a := ldapschema.Assignment{DN: dit.Assignment(dit.User(uid), dit.Entitlement(ge)), UserDN: dit.User(uid),
		EntitlementDN: dit.Entitlement(ge), PodDN: dit.Pod(pod)}
	l.add(a.DN, a.Attrs())
}

// scaledFederation is a federation built around one request (alice asks
// for "Sales Desktops" through india-pod1-cs from client laptop-1) plus
// scale times a crowd of objects the request does not involve: 5 sites
// with 2 pods and a Connection Server each, 5 other GEs with 2 pools each
// (one in three farm-backed), 20 users, 10 groups, 10 computers, and their
// home-site rows, sessions and assignments. What the request involves is
// the same at every scale: alice's groups nest three deep with a cycle, the
// client computer's groups two deep, the GE has three desktop pools and one
// farm-backed pool.
func scaledFederation(scale int) (text string, sites, pods int) {
	var l ldifText
	l.layout(nil)
	siteNames := []string{"India", "UK", "US", "Japan", "Brazil"}
	for i := len(siteNames); i < 5*scale; i++ {
		siteNames = append(siteNames, fmt.Sprintf("Site %03d", i))
	}
	podName := func(site string, n int) string {
		return fmt.Sprintf("%s-pod%d", strings.ReplaceAll(strings.ToLower(site), " ", "-"), n)
	}
	for _, s := range siteNames {
		if s == "India" {
			l.site(s, "UK", "US")
		} else {
			l.site(s)
		}
		for n := 1; n <= 2; n++ {
			l.pod(podName(s, n), s)
			l.cs(podName(s, n)+"-cs", podName(s, n))
		}
	}

	// The request's GE and what it involves.
	l.desktopPool("india-desk1", "india-pod1", 10, 10)
	l.desktopPool("india-desk2", "india-pod2", 10, 10)
	l.desktopPool("uk-desk", "uk-pod1", 10, 4)
	l.farm("us-farm", "us-pod1", ldapschema.Host{Name: "us-h1", LoadIndex: 10}, ldapschema.Host{Name: "us-h2", LoadIndex: 50})
	l.farmPool("us-rds", "us-pod1", ldapschema.KindRDSDesktop, "us-farm")
	l.user("alice", "CORP")
	// alice → Sales Team → Sales → All Staff → Sales Team: a cycle.
	l.group("Sales Team", dit.User("alice"), dit.Group("All Staff"))
	l.group("Sales", dit.Group("Sales Team"))
	l.group("All Staff", dit.Group("Sales"))
	l.group("Everyone", dit.User("alice"))
	l.entitlement(ldapschema.Entitlement{Name: "Sales Desktops", Type: ldapschema.TypeDesktop,
		Scope: ldapschema.ScopeAny, UseHomeSite: true, UsePreferredSites: true, IgnoreHighLoad: true,
		LoadDistribution: ldapschema.PolicyLoad, ClientRestrictions: true, Enabled: true,
		DefaultProtocol: ldapschema.ProtocolBlast,
		Members:         []string{dit.Group("Sales"), dit.Group("Managed Devices")},
		PoolDNs: []string{dit.Pool("india-pod1", "india-desk1"), dit.Pool("india-pod2", "india-desk2"),
			dit.Pool("uk-pod1", "uk-desk"), dit.Pool("us-pod1", "us-rds")}})
	l.computer("laptop-1")
	l.group("Laptops", dit.Computer("laptop-1"))
	l.group("Managed Devices", dit.Group("Laptops"))
	l.homeSite(dit.User("alice"), "", "India")
	l.homeSite(dit.Group("Sales Team"), "", "UK")
	l.homeSite(dit.Group("Everyone"), "", "US")

	// The crowd.
	for i := 0; i < 5*scale; i++ {
		ge := fmt.Sprintf("GE %03d", i)
		site := siteNames[i%len(siteNames)]
		pools := []string{dit.Pool(podName(site, 1), fmt.Sprintf("ge%03d-desk", i))}
		l.desktopPool(fmt.Sprintf("ge%03d-desk", i), podName(site, 1), 100, i)
		if i%3 == 0 {
			farm := fmt.Sprintf("ge%03d-farm", i)
			l.farm(farm, podName(site, 2), ldapschema.Host{Name: farm + "-h1"}, ldapschema.Host{Name: farm + "-h2"})
			l.farmPool(fmt.Sprintf("ge%03d-rds", i), podName(site, 2), ldapschema.KindRDSDesktop, farm)
			pools = append(pools, dit.Pool(podName(site, 2), fmt.Sprintf("ge%03d-rds", i)))
		} else {
			l.desktopPool(fmt.Sprintf("ge%03d-desk2", i), podName(site, 2), 100, 0)
			pools = append(pools, dit.Pool(podName(site, 2), fmt.Sprintf("ge%03d-desk2", i)))
		}
		var members []string
		for j := i * 2; j < i*2+2; j++ {
			members = append(members, dit.Group(fmt.Sprintf("Group %03d", j)))
		}
		for j := i * 2; j < i*2+2; j++ {
			var groupMembers []string
			for k := j * 2; k < j*2+2; k++ {
				uid := fmt.Sprintf("user%04d", k)
				l.user(uid, "CORP")
				l.computer(fmt.Sprintf("pc-%04d", k))
				groupMembers = append(groupMembers, dit.User(uid), dit.Computer(fmt.Sprintf("pc-%04d", k)))
				l.homeSite(dit.User(uid), "", siteNames[k%len(siteNames)])
				l.session(ldapschema.Session{ID: fmt.Sprintf("s-%04d", k), UserDN: dit.User(uid),
					EntitlementDN: dit.Entitlement("Sales Desktops"), PodDN: dit.Pod(podName(site, 1)),
					PoolDN: dit.Pool(podName(site, 1), fmt.Sprintf("ge%03d-desk", i)), State: ldapschema.StateConnected})
			}
			if j > 0 {
				groupMembers = append(groupMembers, dit.Group(fmt.Sprintf("Group %03d", j-1)))
			}
			l.group(fmt.Sprintf("Group %03d", j), groupMembers...)
			l.homeSite(dit.Group(fmt.Sprintf("Group %03d", j)), "Sales Desktops", site)
		}
		members = append(members, dit.Group("Everyone"))
		l.entitlement(ldapschema.Entitlement{Name: ge, Type: ldapschema.TypeDesktop, Scope: ldapschema.ScopeAny,
			LoadDistribution: ldapschema.PolicyNone, Enabled: true, DefaultProtocol: ldapschema.ProtocolBlast,
			Members: members, PoolDNs: pools})
		for k := i * 4; k < i*4+4; k++ {
			l.assignment(fmt.Sprintf("user%04d", k), ge, podName(site, 1))
		}
	}
	// alice's own records of another GE.
	l.homeSite(dit.User("alice"), "GE 001", "Japan")
	l.session(ldapschema.Session{ID: "alice-ge001", UserDN: dit.User("alice"), EntitlementDN: dit.Entitlement("GE 001"),
		PodDN: dit.Pod("uk-pod1"), PoolDN: dit.Pool("uk-pod1", "ge001-desk"), State: ldapschema.StateDisconnected})
	return l.b.String(), len(siteNames), 2 * len(siteNames)
}

// resolveOn reads and resolves alice's request through store st.
func resolveOn(t *testing.T, st *Store) *broker.Decision {
	t.Helper()
	data, err := st.ResolveFederation(ResolveQuery{User: `CORP\alice`, Entitlement: "Sales Desktops",
		ConnectionServer: "india-pod1-cs", Client: "laptop-1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(data.Warnings) > 0 {
		t.Errorf("warnings reading a clean directory: %q", data.Warnings)
	}
	d, err := broker.Resolve(data.Federation, broker.Request{User: data.UID, Entitlement: "Sales Desktops",
		ConnectionServer: "india-pod1-cs", Client: "laptop-1"})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func decisionJSON(t *testing.T, d *broker.Decision) string {
	t.Helper()
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestResolveReadsAreBoundedByTheRequest resolves the same request on a
// federation and on one ten times larger (sites, pods, other GEs and their
// pools, users, groups, computers, home-site rows, sessions, assignments),
// through a client that counts searches. Both runs must make the same
// searches, and every search must return as many entries in both, except
// the listings of every site and every pod that docs/resolve.md "Reads" asks for:
// a loader that searched once per site, or listed every user or group,
// would fail here.
func TestResolveReadsAreBoundedByTheRequest(t *testing.T) {
	type run struct {
		searches    []searchRecord
		decision    string
		sites, pods int
	}
	runs := map[int]run{}
	for _, scale := range []int{1, 10} {
		text, sites, pods := scaledFederation(scale)
		s := slapdtest.Start(t, slapdtest.Config{LDIF: text})
		conn, err := ldapconn.Dial(ldapconn.Options{URLs: []string{s.URL}, BindDN: s.AdminDN(), Password: slapdtest.AdminPassword})
		if err != nil {
			t.Fatal(err)
		}
		counter := &countingClient{Client: conn}
		d := resolveOn(t, NewStore(counter, dit.Base))
		conn.Close()
		if d.Outcome != broker.OutcomePlaced || d.Placement.Site != "UK" || d.Placement.Pool != "uk-desk" {
			t.Fatalf("scale %d: %s %+v, want PLACED on uk-desk: %s", scale, d.Outcome, d.Placement, d.Reason)
		}
		// The snapshot of the same entries answers the same searches.
		snap, err := ParseSnapshot(text)
		if err != nil {
			t.Fatal(err)
		}
		snapCounter := &countingClient{Client: snap}
		if got, want := decisionJSON(t, resolveOn(t, NewStore(snapCounter, dit.Base))), decisionJSON(t, d); got != want {
			t.Errorf("scale %d: the snapshot decides differently from slapd:\nsnapshot %s\nslapd %s", scale, got, want)
		}
		if fmt.Sprint(snapCounter.searches) != fmt.Sprint(counter.searches) {
			t.Errorf("scale %d: snapshot searches %v, slapd %v", scale, snapCounter.searches, counter.searches)
		}
		runs[scale] = run{searches: counter.searches, decision: decisionJSON(t, d), sites: sites, pods: pods}
	}
	small, large := runs[1], runs[10]
	if large.sites != 10*small.sites || large.pods != 10*small.pods {
		t.Fatalf("the large federation is not ten times larger: %d/%d sites, %d/%d pods", large.sites, small.sites, large.pods, small.pods)
	}
	if small.decision != large.decision {
		t.Errorf("the decision depends on objects the request does not involve:\nsmall %s\nlarge %s", small.decision, large.decision)
	}
	if len(small.searches) != len(large.searches) {
		t.Fatalf("%d searches on the small federation, %d on the large one:\nsmall:\n%s\nlarge:\n%s",
			len(small.searches), len(large.searches), lines(small.searches), lines(large.searches))
	}
	listings := map[string]int{}
	for i, a := range small.searches {
		b := large.searches[i]
		if a.base != b.base || a.scope != b.scope || a.filter != b.filter {
			t.Errorf("search %d differs: %s, then %s", i+1, a, b)
			continue
		}
		switch {
		case a.base == ldapschema.NormalizeDN(dit.Sites()) && a.scope == ldap.ScopeSingleLevel && a.filter == ldapclient.ClassFilter(ldapschema.ClassSite):
			listings["sites"]++
			if a.entries != small.sites || b.entries != large.sites {
				t.Errorf("site listing returned %d and %d entries, want %d and %d", a.entries, b.entries, small.sites, large.sites)
			}
		case a.base == ldapschema.NormalizeDN(dit.Pods()) && a.scope == ldap.ScopeSingleLevel && a.filter == ldapclient.ClassFilter(ldapschema.ClassPod):
			listings["pods"]++
			if a.entries != small.pods || b.entries != large.pods {
				t.Errorf("pod listing returned %d and %d entries, want %d and %d", a.entries, b.entries, small.pods, large.pods)
			}
		case a.entries != b.entries:
			t.Errorf("search %d returns %d entries on the small federation and %d on the large one: %s", i+1, a.entries, b.entries, b)
		}
	}
	if listings["sites"] != 1 || listings["pods"] != 1 {
		t.Errorf("want one listing of sites and one of pods, got %v:\n%s", listings, lines(small.searches))
	}
	// The count itself, so that a change is a decision: settings, sites,
	// pods, connection server, GE, pools, farms, 1 farm's hosts, user,
	// 4 group levels (Sales Team and Everyone; Sales; All Staff; the
	// cycle back to Sales Team ends it), home-site rows, sessions, the
	// entitlements of the user's sessions of other GEs (docs/resolve.md
	// "Applications in an existing RDS session"), assignments, computer, 3
	// group levels (Laptops; Managed Devices; none).
	if want := 3 + 1 + 3 + 1 + 1 + 4 + 4 + 1 + 3; len(small.searches) != want {
		t.Errorf("%d searches, want %d:\n%s", len(small.searches), want, lines(small.searches))
	}
}

func lines(searches []searchRecord) string {
	var b strings.Builder
	for i, s := range searches {
		fmt.Fprintf(&b, "%2d. %s\n", i+1, s)
	}
	return b.String()
}

// liveAndSnapshot loads text into a slapd and into a snapshot, and returns
// a store on each.
func liveAndSnapshot(t *testing.T, text string) map[string]*Store {
	t.Helper()
	s := slapdtest.Start(t, slapdtest.Config{LDIF: text})
	conn, err := ldapconn.Dial(ldapconn.Options{URLs: []string{s.URL}, BindDN: s.AdminDN(), Password: slapdtest.AdminPassword})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	snap, err := ParseSnapshot(text)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*Store{"slapd": NewStore(conn, dit.Base), "snapshot": NewStore(snap, dit.Base)}
}

// awkward holds every character docs/schema.md names, and non-ASCII letters.
const awkward = `R&D, "West" <1>+;=*()\ Zürich#`

// TestResolveFederationWithAwkwardNames resolves through names holding
// every special character, with references written in another case:
// membership through nested groups with a cycle, a client computer in a
// nested group, pools and a farm referenced by DN, home-site rows and
// sessions referenced by DN.
func TestResolveFederationWithAwkwardNames(t *testing.T) {
	site, pod, cs := "Site "+awkward, "pod "+awkward, "cs "+awkward
	user, ge := "o'brien, "+awkward, "GE "+awkward
	inner, outer := "Team "+awkward, "Dept "+awkward
	pool, farm := "pool "+awkward, "farm "+awkward
	var l ldifText
	l.layout(nil)
	l.site(site)
	l.site("Other")
	l.pod(pod, site)
	l.pod("other-pod", "Other")
	l.cs(cs, pod)
	l.desktopPool(pool, pod, 5, 5)
	l.farm(farm, pod, ldapschema.Host{Name: "h " + awkward, LoadIndex: 5}, ldapschema.Host{Name: "h2", LoadIndex: 50})
	l.farmPool("rds "+awkward, pod, ldapschema.KindRDSDesktop, farm)
	l.user(user, "corp.example.com")
	l.computer("pc " + awkward)
	// user → inner → outer → inner (cycle); outer is entitled. The
	// computer is in outer through inner too.
	l.group(inner, strings.ToUpper(dit.User(user)), dit.Group(outer), dit.Computer("pc "+awkward))
	l.group(outer, dit.Group(inner))
	upper := func(dn string) string { return strings.ToUpper(dn) }
	l.entitlement(ldapschema.Entitlement{Name: ge, Type: ldapschema.TypeDesktop, Scope: ldapschema.ScopeAny,
		UseHomeSite: true, RequireHomeSite: true, ClientRestrictions: true, LoadDistribution: ldapschema.PolicyNone,
		Enabled: true, DefaultProtocol: ldapschema.ProtocolBlast, Members: []string{upper(dit.Group(outer))},
		PoolDNs: []string{upper(dit.Pool(pod, pool)), dit.Pool(pod, "rds "+awkward)}})
	l.homeSite(dit.Group(inner), ge, site)
	l.session(ldapschema.Session{ID: "other", UserDN: upper(dit.User(user)), EntitlementDN: dit.Entitlement("nope"),
		PodDN: dit.Pod(pod), State: ldapschema.StateConnected})

	for name, st := range liveAndSnapshot(t, l.b.String()) {
		t.Run(name, func(t *testing.T) {
			data, err := st.ResolveFederation(ResolveQuery{User: "CORP\\" + user, Entitlement: strings.ToLower(ge),
				ConnectionServer: strings.ToUpper(cs), Client: "PC " + awkward})
			if err != nil {
				t.Fatal(err)
			}
			if len(data.Warnings) > 0 {
				t.Errorf("warnings: %q", data.Warnings)
			}
			if data.UID != user {
				t.Errorf("uid %q, want %q", data.UID, user)
			}
			f := data.Federation
			if len(f.Pools) != 2 || len(f.Farms) != 1 || len(f.Hosts) != 2 || len(f.Sessions) != 1 || len(f.HomeSites) != 1 {
				t.Errorf("read %d pools, %d farms, %d hosts, %d sessions, %d home-site rows; want 2, 1, 2, 1, 1",
					len(f.Pools), len(f.Farms), len(f.Hosts), len(f.Sessions), len(f.HomeSites))
			}
			d, err := broker.Resolve(f, broker.Request{User: data.UID, Entitlement: ge, ConnectionServer: cs, Client: "pc " + awkward})
			if err != nil {
				t.Fatal(err)
			}
			if d.Outcome != broker.OutcomePlaced || d.Placement.Pool != "rds "+awkward || d.Placement.Host != "h "+awkward {
				t.Fatalf("%s %+v: %s\n%s", d.Outcome, d.Placement, d.Reason, decisionJSON(t, d))
			}
			for _, c := range d.Checks {
				if !c.Passed {
					t.Errorf("check %s failed: %s", c.Check, c.Detail)
				}
			}
			if d.HomeSite.Site == nil || *d.HomeSite.Site != site || d.HomeSite.Source != broker.SourceGroupOverride {
				t.Errorf("home site %+v", d.HomeSite)
			}
		})
	}
}

// TestResolveFederationMemberKinds: an entitlement's members are users
// (under ou=People) and groups (under ou=Groups); a client computer listed
// as a member is not a group, even when a group has its name.
func TestResolveFederationMemberKinds(t *testing.T) {
	var l ldifText
	l.layout(nil)
	l.site("UK")
	l.pod("uk-pod", "UK")
	l.desktopPool("desk", "uk-pod", 5, 0)
	l.user("alice", "")
	l.computer("Sales")
	l.group("Sales", dit.User("alice"))
	l.entitlement(ldapschema.Entitlement{Name: "GE", Type: ldapschema.TypeDesktop, Enabled: true,
		Members: []string{dit.Computer("Sales")}, PoolDNs: []string{dit.Pool("uk-pod", "desk")}})
	for name, st := range liveAndSnapshot(t, l.b.String()) {
		t.Run(name, func(t *testing.T) {
			data, err := st.ResolveFederation(ResolveQuery{User: "alice", Entitlement: "GE"})
			if err != nil {
				t.Fatal(err)
			}
			if len(data.Federation.Entitlements[0].Members) != 0 {
				t.Errorf("members %+v, want none", data.Federation.Entitlements[0].Members)
			}
			if len(data.Warnings) != 1 || !strings.Contains(data.Warnings[0], "neither a user") {
				t.Errorf("warnings %q", data.Warnings)
			}
			d, err := broker.Resolve(data.Federation, broker.Request{User: "alice", Entitlement: "GE", Pod: "uk-pod"})
			if err != nil {
				t.Fatal(err)
			}
			if d.Outcome != broker.OutcomeDenied {
				t.Errorf("%s, want DENIED: %s", d.Outcome, d.Reason)
			}
		})
	}
}

// TestResolveFederationOtherSessions: the user's sessions of other GEs, and
// those GEs, are read, so that an application opens in the user's RDS
// session of another application GE on a farm serving it.
func TestResolveFederationOtherSessions(t *testing.T) {
	var l ldifText
	l.layout(nil)
	l.site("UK")
	l.pod("uk-pod", "UK")
	l.farm("apps", "uk-pod", ldapschema.Host{Name: "h1"})
	l.farmPool("calc", "uk-pod", ldapschema.KindApplication, "apps")
	l.farmPool("word", "uk-pod", ldapschema.KindApplication, "apps")
	l.user("alice", "")
	for _, name := range []string{"Calc", "Word"} {
		l.entitlement(ldapschema.Entitlement{Name: name, Type: ldapschema.TypeApplication, Enabled: true,
			Members: []string{dit.User("alice")}, PoolDNs: []string{dit.Pool("uk-pod", strings.ToLower(name))}})
	}
	l.session(ldapschema.Session{ID: "s1", UserDN: dit.User("alice"), EntitlementDN: dit.Entitlement("Calc"),
		PodDN: dit.Pod("uk-pod"), PoolDN: dit.Pool("uk-pod", "calc"), HostDN: dit.Host("uk-pod", "apps", "h1"),
		State: ldapschema.StateConnected})
	for name, st := range liveAndSnapshot(t, l.b.String()) {
		t.Run(name, func(t *testing.T) {
			data, err := st.ResolveFederation(ResolveQuery{User: "alice", Entitlement: "Word"})
			if err != nil {
				t.Fatal(err)
			}
			d, err := broker.Resolve(data.Federation, broker.Request{User: "alice", Entitlement: "Word", Pod: "uk-pod"})
			if err != nil {
				t.Fatal(err)
			}
			if d.Outcome != broker.OutcomeReconnect || d.SharedSession == nil || d.SharedSession.Entitlement != "Calc" ||
				d.SharedSession.Session != "s1" || d.Placement.Pool != "word" || d.Placement.Host != "h1" {
				t.Fatalf("%s: %s\n%s", d.Outcome, d.Reason, decisionJSON(t, d))
			}
			if len(d.Sessions) != 0 {
				t.Errorf("a session of another GE is listed as this GE's: %+v", d.Sessions)
			}
		})
	}
}

// TestResolveFederationDomain: DOMAIN\uid and uid@domain must match the
// user's stored domain (a NetBIOS name matches the first DNS label);
// another domain names a user that does not exist.
func TestResolveFederationDomain(t *testing.T) {
	var l ldifText
	l.layout(nil)
	l.user("alice", "corp.example.com")
	st := NewStore(mustSnapshot(t, l.b.String()), dit.Base)
	for _, arg := range []string{"alice", `CORP\alice`, "alice@corp.example.com", `corp.example.com\alice`} {
		data, err := st.ResolveFederation(ResolveQuery{User: arg, Entitlement: "GE"})
		if err != nil || data.UID != "alice" || len(data.Federation.Users) != 1 {
			t.Errorf("%s: %v, %+v", arg, err, data)
		}
	}
	_, err := st.ResolveFederation(ResolveQuery{User: `OTHER\alice`, Entitlement: "GE"})
	var nf *ldapclient.NotFoundError
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), `user OTHER\alice does not exist: alice is in domain corp.example.com`) {
		t.Errorf("OTHER\\alice: %v, want a not-found error naming the stored domain", err)
	}
	data, err := st.ResolveFederation(ResolveQuery{User: "bob", Entitlement: "GE"})
	if err != nil || data.UID != "bob" || len(data.Federation.Users) != 0 {
		t.Errorf("bob: %v %+v, want no user and no error (the broker reports it)", err, data)
	}
}

func mustSnapshot(t *testing.T, text string) *snapshot.Snapshot {
	t.Helper()
	s, err := ParseSnapshot(text)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestResolveFederationReadsLeniently: values cpactl's schema does not
// allow (which a snapshot or a schema-less edit can hold) are read as far
// as they decode and named in a warning, and the GE's unknown enumerations
// reach the broker as stored, so that it warns and applies the default.
func TestResolveFederationReadsLeniently(t *testing.T) {
	var l ldifText
	l.layout(ldapschema.Attrs{ldapschema.AttrLoadThresholdForSite: {"lots"}})
	l.site("UK")
	l.add(dit.Site("Broken"), ldapschema.Attrs{ldapschema.AttrObjectClass: {"top", ldapschema.ClassSite},
		ldapschema.AttrCN: {"Broken"}, ldapschema.AttrPreferredSite: {"UK"}})
	l.pod("uk-pod", "UK")
	l.add(dit.Pod("odd-pod"), ldapschema.Attrs{ldapschema.AttrObjectClass: {"top", ldapschema.ClassPod},
		ldapschema.AttrCN: {"odd-pod"}, ldapschema.AttrSiteDN: {dit.Site("UK")}, ldapschema.AttrPodStatus: {"MAINTENANCE"}})
	l.desktopPool("desk", "uk-pod", 5, 0)
	l.user("alice", "")
	g := ldapschema.Entitlement{Name: "GE", Type: ldapschema.TypeDesktop, Enabled: true, Members: []string{dit.User("alice")},
		PoolDNs: []string{dit.Pool("uk-pod", "desk")}}.Attrs()
	g[ldapschema.AttrScope] = []string{"GALAXY"}
	g[ldapschema.AttrLoadDistribution] = []string{"luck"}
	l.add(dit.Entitlement("GE"), g)
	st := NewStore(mustSnapshot(t, l.b.String()), dit.Base)
	data, err := st.ResolveFederation(ResolveQuery{User: "alice", Entitlement: "GE"})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(data.Warnings, "\n")
	for _, want := range []string{"pae-LoadThresholdForSite", "Broken", "MAINTENANCE"} {
		if !strings.Contains(text, want) {
			t.Errorf("no warning names %s:\n%s", want, text)
		}
	}
	if strings.Contains(text, "GALAXY") {
		t.Errorf("the directory warns about the GE's scope, which is the broker's to report:\n%s", text)
	}
	if len(data.Federation.Sites) != 2 || len(data.Federation.Pods) != 2 {
		t.Errorf("%d sites and %d pods read, want 2 and 2", len(data.Federation.Sites), len(data.Federation.Pods))
	}
	d, err := broker.Resolve(data.Federation, broker.Request{User: "alice", Entitlement: "GE", Pod: "uk-pod"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Outcome != broker.OutcomePlaced {
		t.Errorf("%s: %s", d.Outcome, d.Reason)
	}
	warned := strings.Join(d.Warnings, "\n")
	if !strings.Contains(warned, `unknown scope "GALAXY"; treated as ANY`) || !strings.Contains(warned, `"luck"; treated as NONE`) {
		t.Errorf("the broker does not warn about the unknown scope and policy: %q", d.Warnings)
	}
}

// farmsFederation is a federation whose application GE has one pool on
// each of n farms (hosts named awkwardly, all full but one of the last
// farm's),
// plus farms and hosts outside the GE.
func farmsFederation(n int) string {
	var l ldifText
	l.layout(nil)
	l.site("UK")
	l.pod("pod 1, UK", "UK")
	l.cs("cs-1", "pod 1, UK")
	l.user("alice", "CORP")
	var pools []string
	for i := 0; i < n; i++ {
		farm := fmt.Sprintf("farm %d+%d", i, i)
		sessions := 10 // the farm's limit: full
		if i == n-1 {
			sessions = 0
		}
		l.farm(farm, "pod 1, UK", ldapschema.Host{Name: fmt.Sprintf("host-%d-a", i), LoadIndex: 5, Sessions: sessions},
			ldapschema.Host{Name: fmt.Sprintf(`host-%d-b "x"`, i), LoadIndex: 5, Sessions: 10})
		pool := fmt.Sprintf("apps-%d", i)
		l.farmPool(pool, "pod 1, UK", ldapschema.KindApplication, farm)
		pools = append(pools, dit.Pool("pod 1, UK", pool))
		l.farm("other "+farm, "pod 1, UK", ldapschema.Host{Name: fmt.Sprintf("other-host-%d", i)})
	}
	l.entitlement(ldapschema.Entitlement{Name: "Apps", Type: ldapschema.TypeApplication, Scope: ldapschema.ScopeAny,
		LoadDistribution: ldapschema.PolicyNone, Enabled: true, DefaultProtocol: ldapschema.ProtocolBlast,
		Members: []string{dit.User("alice")}, PoolDNs: pools})
	return l.b.String()
}

// TestResolveReadsHostsOfAllFarmsInOneSearch: a GE whose pools sit on 1 or
// 12 farms costs the same number of searches, live and on a snapshot, and
// reads exactly the hosts of its farms.
func TestResolveReadsHostsOfAllFarmsInOneSearch(t *testing.T) {
	counts := map[int]int{}
	for _, n := range []int{1, 12} {
		text := farmsFederation(n)
		for name, st := range liveAndSnapshot(t, text) {
			counter := &countingClient{Client: st.Client}
			data, err := NewStore(counter, dit.Base).ResolveFederation(ResolveQuery{User: "alice", Entitlement: "Apps", ConnectionServer: "cs-1"})
			if err != nil {
				t.Fatal(err)
			}
			f := data.Federation
			if len(f.Farms) != n || len(f.Hosts) != 2*n {
				t.Errorf("%s, %d farms: read %d farms and %d hosts, want %d and %d", name, n, len(f.Farms), len(f.Hosts), n, 2*n)
			}
			for _, h := range f.Hosts {
				if strings.HasPrefix(h.Name, "other") {
					t.Errorf("%s: read host %s of a farm outside the GE", name, h.Name)
				}
			}
			d, err := broker.Resolve(f, broker.Request{User: data.UID, Entitlement: "Apps", ConnectionServer: "cs-1"})
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("host-%d-a", n-1); d.Placement == nil || d.Placement.Host != want {
				t.Errorf("%s, %d farms: %s %+v, want a session on %s", name, n, d.Outcome, d.Placement, want)
			}
			if c, ok := counts[n]; ok && c != len(counter.searches) {
				t.Errorf("%d farms: %d searches live, %d on the snapshot", n, c, len(counter.searches))
			}
			counts[n] = len(counter.searches)
		}
	}
	if counts[1] != counts[12] {
		t.Errorf("%d searches for 1 farm, %d for 12: hosts must come in one search", counts[1], counts[12])
	}
}

// TestResolveFederationBackup: the backup GE and its pools are read with the
// GE's (live and from a snapshot alike), and a backup that breaks a rule
// reaches the broker as ignored, with the rule's message.
func TestResolveFederationBackup(t *testing.T) {
	build := func(backupMembers []string, withBackup bool) string {
		var l ldifText
		l.layout(nil)
		l.site("UK")
		l.pod("uk-pod", "UK")
		l.desktopPool("full", "uk-pod", 1, 1)
		l.desktopPool("spare", "uk-pod", 5, 0)
		l.user("alice", "")
		l.entitlement(ldapschema.Entitlement{Name: "Main", Type: ldapschema.TypeDesktop, Enabled: true,
			Members: []string{dit.User("alice")}, PoolDNs: []string{dit.Pool("uk-pod", "full")},
			BackupDN: map[bool]string{true: dit.Entitlement("Overflow")}[withBackup]})
		l.entitlement(ldapschema.Entitlement{Name: "Overflow", Type: ldapschema.TypeDesktop, Enabled: true,
			Members: backupMembers, PoolDNs: []string{dit.Pool("uk-pod", "spare")}})
		return l.b.String()
	}
	for _, tc := range []struct {
		name    string
		members []string
		want    broker.Outcome
	}{
		{"a valid backup places", nil, broker.OutcomePlaced},
		{"a backup with members is ignored", []string{dit.User("alice")}, broker.OutcomeNoCapacity},
	} {
		for name, st := range liveAndSnapshot(t, build(tc.members, true)) {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				data, err := st.ResolveFederation(ResolveQuery{User: "alice", Entitlement: "Main"})
				if err != nil {
					t.Fatal(err)
				}
				d, err := broker.Resolve(data.Federation, broker.Request{User: "alice", Entitlement: "Main", Pod: "uk-pod"})
				if err != nil {
					t.Fatal(err)
				}
				if d.Outcome != tc.want {
					t.Fatalf("%s: %s", d.Outcome, d.Reason)
				}
				if tc.want == broker.OutcomePlaced && (d.Backup == nil || d.Backup.Entitlement != "Overflow" || d.Placement.Pool != "spare") {
					t.Fatalf("%s", decisionJSON(t, d))
				}
				if tc.want == broker.OutcomeNoCapacity && !strings.Contains(strings.Join(d.Warnings, "\n"), "has 1 member(s)") {
					t.Fatalf("warnings %q", d.Warnings)
				}
			})
		}
	}
	// The backup costs two searches (the backup, the GEs naming the GE as
	// theirs): its pools are read in the GE's pool search.
	count := func(text string) int {
		snap, err := ParseSnapshot(text)
		if err != nil {
			t.Fatal(err)
		}
		counter := &countingClient{Client: snap}
		if _, err := NewStore(counter, dit.Base).ResolveFederation(ResolveQuery{User: "alice", Entitlement: "Main"}); err != nil {
			t.Fatal(err)
		}
		return len(counter.searches)
	}
	if with, base := count(build(nil, true)), count(build(nil, false)); with != base+2 {
		t.Errorf("%d searches with a backup, %d without: want two more", with, base)
	}
}
