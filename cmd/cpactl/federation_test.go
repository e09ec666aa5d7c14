package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/commands"
	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/ldapschema"
)

// federationLDIF returns a federation of about entries entries under the
// default base, valid under cpactl's schema and lint (base, containers,
// cn=Common, then sites, pods with Connection Servers and desktop pools,
// entitlements, groups, users, home-site rows and sessions), as LDIF that
// both `cpactl apply` and ldapadd load.
func federationLDIF(entries int) string {
	dit := ldapschema.DIT{Base: ldapschema.DefaultBase}
	var raw bytes.Buffer
	lw := directory.NewLDIFWriter(&raw)
	add := func(dn string, a ldapschema.Attrs) { _ = lw.WriteEntry(dn, a) }
	add(dit.Base, ldapschema.Attrs{ldapschema.AttrObjectClass: {ldapschema.ClassTop, "domain"}, "dc": {"vdiglobal"}})
	for _, dn := range dit.Containers() {
		add(dn, ldapschema.Attrs{ldapschema.AttrObjectClass: {ldapschema.ClassTop, ldapschema.ClassOrganizationalUnit},
			ldapschema.AttrOU: {ldapschema.NameOf(dn)}})
	}
	add(dit.Settings(), ldapschema.Attrs{ldapschema.AttrObjectClass: {ldapschema.ClassTop, ldapschema.ClassGlobalSettings},
		ldapschema.AttrCN: {"Common"}})

	// Per 100 entries: 60 users, 30 sessions, 5 home-site rows, 2 groups,
	// and a share of the sites, pods, servers, pools and entitlements.
	units := max(entries/100, 1)
	sites := max(units/5, 2)
	const podsPerSite, serversPerPod, poolsPerPod = 2, 2, 3
	var siteNames []string
	for s := range sites {
		siteNames = append(siteNames, fmt.Sprintf("site-%03d", s))
	}
	type pool struct{ dn, pod string }
	var pools []pool
	for s, name := range siteNames {
		preferred := []string{siteNames[(s+1)%sites]}
		add(dit.Site(name), ldapschema.Site{Name: name, Description: "generated site " + name,
			PreferredSites: preferred}.Attrs())
		for p := range podsPerSite {
			pod := fmt.Sprintf("%s-pod%d", name, p)
			add(dit.Pod(pod), ldapschema.Pod{Name: pod, SiteDN: dit.Site(name), Online: true}.Attrs())
			for c := range serversPerPod {
				cs := fmt.Sprintf("%s-cs%d", pod, c)
				add(dit.ConnectionServer(pod, cs), ldapschema.ConnectionServer{Name: cs}.Attrs())
			}
			for q := range poolsPerPod {
				name := fmt.Sprintf("%s-pool%d", pod, q)
				dn := dit.Pool(pod, name)
				add(dn, ldapschema.Pool{Name: name, Kind: ldapschema.KindDesktop, Capacity: 500, Enabled: true}.Attrs())
				pools = append(pools, pool{dn: dn, pod: dit.Pod(pod)})
			}
		}
	}
	// One entitlement per site, holding that site's pools (a pool belongs
	// to at most one entitlement).
	groups := 2 * units
	perSite := podsPerSite * poolsPerPod
	var ges []string
	for s, name := range siteNames {
		ge := "desktops-" + name
		g := ldapschema.Entitlement{Name: ge, Type: ldapschema.TypeDesktop, Scope: ldapschema.ScopeAny,
			UseHomeSite: true, LoadDistribution: ldapschema.PolicyNone, Enabled: true,
			DefaultProtocol: ldapschema.ProtocolBlast}
		for _, p := range pools[s*perSite : (s+1)*perSite] {
			g.PoolDNs = append(g.PoolDNs, p.dn)
		}
		for k := s; k < groups; k += sites {
			g.Members = append(g.Members, dit.Group(fmt.Sprintf("group-%04d", k)))
		}
		add(dit.Entitlement(ge), g.Attrs())
		ges = append(ges, dit.Entitlement(ge))
	}
	users := 60 * units
	members := make([][]string, groups)
	for u := range users {
		uid := fmt.Sprintf("user%05d", u)
		add(dit.User(uid), ldapschema.User{UID: uid, Domain: "CORP", FullName: "User " + strings.ToUpper(uid)}.Attrs())
		members[u%groups] = append(members[u%groups], dit.User(uid))
	}
	for k := range groups {
		name := fmt.Sprintf("group-%04d", k)
		add(dit.Group(name), ldapschema.Group{Name: name, Description: "generated", Members: members[k]}.Attrs())
	}
	// Home-site rows: a global one for every twelfth user.
	for u := 0; u < users; u += 12 {
		user := dit.User(fmt.Sprintf("user%05d", u))
		dn := dit.HomeSite(user, "")
		add(dn, ldapschema.HomeSite{DN: dn, UserDN: user, SiteDN: dit.Site(siteNames[u%sites])}.Attrs())
	}
	// Sessions: every other user has one, on a pool of an entitlement it
	// holds through its group.
	for u := 0; u < users; u += 2 {
		s := (u % groups) % sites
		p := pools[s*perSite+(u/2)%perSite]
		id := fmt.Sprintf("session-%05d", u)
		add(dit.Session(id), ldapschema.Session{ID: id, UserDN: dit.User(fmt.Sprintf("user%05d", u)),
			EntitlementDN: ges[s], PodDN: p.pod, BrokeringPodDN: p.pod, PoolDN: p.dn,
			State: ldapschema.StateConnected}.Attrs())
	}
	_ = lw.Close()
	// Written again as `cpactl export` writes it: parents first, then by DN.
	snap, err := snapshot.ReadSnapshot(&raw)
	if err != nil {
		panic(err)
	}
	var b strings.Builder
	_, _ = directory.NewStore(snap, dit.Base).Export(&b, func(e *ldap.Entry, _ string) *ldap.Entry { return e })
	return b.String()
}

// TestFederationLDIFIsValid: the benchmark's federation passes lint (and
// so apply's checks). With CPACTL_FEDERATION_LDIF=FILE it also checks the
// 10,000-entry one the benchmark uses (lint takes seconds there) and
// writes it to FILE.
func TestFederationLDIFIsValid(t *testing.T) {
	sizes := []int{300}
	if os.Getenv("CPACTL_FEDERATION_LDIF") != "" {
		sizes = append(sizes, 10000)
	}
	for _, n := range sizes {
		file := filepath.Join(t.TempDir(), "federation.ldif")
		text := federationLDIF(n)
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if out := os.Getenv("CPACTL_FEDERATION_LDIF"); out != "" && n == 10000 {
			if err := os.WriteFile(out, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var stdout, stderr bytes.Buffer
		if code := commands.Main([]string{"lint", "--from", file}, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("%d entries: lint exit %d: %s%s", n, code, stdout.String(), stderr.String())
		}
		if got := strings.Count(text, "\ndn: ") + 1; n >= 10000 && (got < n*99/100 || got > n*101/100) {
			t.Errorf("%d entries asked, %d made", n, got)
		}
	}
}
