package lint

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/cpactl/cpactl/internal/benchfed"
	"github.com/cpactl/cpactl/ldapschema"
)

// TestSameFindingsAsBefore runs the lint and the reference (the lint before
// its indexes) on random federations full of traps (names equal but for
// case, DNs spelled otherwise, dangling references, group cycles, disabled
// and offline objects) and wants the same findings in the same order.
func TestSameFindingsAsBefore(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 3))
	rounds := 3000
	if testing.Short() {
		rounds = 300
	}
	for round := range rounds {
		d := randomFederation(r)
		if got, want := withoutNewChecks(Run(d)), referenceRun(d); !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: findings differ:\n%s\nwant\n%s\nfederation %+v", round, dump(got), dump(want), d)
		}
	}
}

func TestSameFindingsAsBeforeOnAGeneratedFederation(t *testing.T) {
	if testing.Short() {
		t.Skip("a federation of 10,000 entries")
	}
	dit := ldapschema.DIT{Base: ldapschema.DefaultBase}
	d := benchfed.Federation(dit, 10_000)
	got, want := withoutNewChecks(Run(d)), referenceRun(d)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("findings differ:\n%s\nwant\n%s", dump(got), dump(want))
	}
	if len(got) == 0 {
		t.Fatal("the generated federation has no findings to compare")
	}
	// Every pool disabled and every entitlement given the root group: each
	// entitlement is reported, with every user.
	for i := range d.Pools {
		d.Pools[i].Enabled = false
	}
	for i := range d.Entitlements {
		d.Entitlements[i].Members = append(d.Entitlements[i].Members, dit.Group("group-0000"))
	}
	if got, want := withoutNewChecks(Run(d)), referenceRun(d); !reflect.DeepEqual(got, want) {
		t.Fatalf("findings differ when every entitlement is reported:\n%s\nwant\n%s", dump(got), dump(want))
	}
}

// randomFederation builds a small federation whose names collide (p1, P1),
// whose DNs are spelled in several ways and whose references often dangle.
func randomFederation(r *rand.Rand) Data {
	pick := func(list []string) string { return list[r.IntN(len(list))] }
	some := func(list []string) []string {
		var out []string
		for range r.IntN(4) {
			out = append(out, pick(list))
		}
		return out
	}
	spell := func(dn string) string { // the same DN, spelled otherwise now and then
		switch r.IntN(6) {
		case 0:
			return strings.ToUpper(dn)
		case 1:
			return strings.ReplaceAll(dn, ",", ", ")
		}
		return dn
	}
	var d Data
	siteNames := []string{"UK", "uk", "US", "Zürich", "R&D, West"}
	podNames := []string{"p1", "P1", "p2", "pé", "PÉ"}
	farmNames := []string{"f1", "F1", "f2"}
	tags := []string{"a", "A", "b", "ſ", "S", "s"}
	for range r.IntN(4) {
		name := pick(siteNames)
		d.Sites = append(d.Sites, ldapschema.Site{DN: dit.Site(name), Name: name,
			PreferredRaw: append(ldapschema.EncodePreferredSites(some(siteNames)), some([]string{"{5}UK", "bogus", "{0}us"})...)})
	}
	var siteDNs, podDNs, farmDNs, poolDNs, userDNs, groupDNs, computerDNs, geDNs, hostDNs []string
	for _, s := range d.Sites {
		siteDNs = append(siteDNs, s.DN)
	}
	siteDNs = append(siteDNs, dit.Site("Mars"), "")
	for range 1 + r.IntN(4) {
		name := pick(podNames)
		d.Pods = append(d.Pods, ldapschema.Pod{DN: dit.Pod(name), Name: name, SiteDN: spell(pick(siteDNs)), Online: r.IntN(3) > 0})
		podDNs = append(podDNs, d.Pods[len(d.Pods)-1].DN)
	}
	for i := range r.IntN(4) {
		pod := pick(podNames)
		name := fmt.Sprintf("cs%d", i%3)
		d.ConnectionServers = append(d.ConnectionServers, ldapschema.ConnectionServer{DN: dit.ConnectionServer(pod, name), Name: name,
			Pod: pod, Tags: some(tags)})
	}
	for range r.IntN(4) {
		pod, name := pick(podNames), pick(farmNames)
		d.Farms = append(d.Farms, ldapschema.Farm{DN: dit.Farm(pod, name), Name: name, Pod: pod, LoadIndexThreshold: r.IntN(102)})
		farmDNs = append(farmDNs, d.Farms[len(d.Farms)-1].DN)
	}
	for i := range r.IntN(8) {
		farm, pod := pick(farmNames), pick(podNames)
		name := fmt.Sprintf("h%d", i%4)
		d.Hosts = append(d.Hosts, ldapschema.Host{DN: dit.Host(pod, farm, name), Name: name, Farm: farm, Pod: pod,
			LoadIndex: r.IntN(104) - 2, Enabled: r.IntN(3) > 0, Features: ldapschema.AllFeatures})
		hostDNs = append(hostDNs, d.Hosts[len(d.Hosts)-1].DN)
	}
	kinds := []string{ldapschema.KindDesktop, ldapschema.KindRDSDesktop, ldapschema.KindApplication}
	for i := range r.IntN(8) {
		pod := pick(podNames)
		name := fmt.Sprintf("pool%d", i%5)
		p := ldapschema.Pool{DN: dit.Pool(pod, name), Name: name, Pod: pod, Kind: pick(kinds), Dedicated: r.IntN(3) == 0,
			Capacity: r.IntN(4) - 1, Enabled: r.IntN(4) > 0}
		if p.Kind != ldapschema.KindDesktop && r.IntN(5) > 0 {
			p.FarmDN = spell(pick(append(farmDNs, dit.Farm(pod, "gone"), dit.Pod(pod))))
			p.Farm = ldapschema.NameOf(p.FarmDN)
		}
		d.Pools = append(d.Pools, p)
		poolDNs = append(poolDNs, p.DN)
	}
	for i := range r.IntN(8) {
		uid := fmt.Sprintf("u%d", i)
		d.Users = append(d.Users, ldapschema.User{DN: spell(dit.User(uid)), UID: uid})
		userDNs = append(userDNs, dit.User(uid))
	}
	for i := range r.IntN(3) {
		name := fmt.Sprintf("pc%d", i)
		d.Computers = append(d.Computers, ldapschema.Computer{DN: dit.Computer(name), Name: name})
		computerDNs = append(computerDNs, dit.Computer(name))
	}
	nGroups := r.IntN(6)
	for i := range nGroups {
		groupDNs = append(groupDNs, dit.Group(fmt.Sprintf("g%d", i)))
	}
	principals := append(append(append([]string{dit.User("ghost")}, userDNs...), groupDNs...), computerDNs...)
	for i := range nGroups {
		var members []string
		for range r.IntN(5) {
			members = append(members, spell(pick(principals)))
		}
		d.Groups = append(d.Groups, ldapschema.Group{DN: groupDNs[i], Name: pick([]string{"Sales", "sales", "EMEA", "All"}),
			Members: members})
	}
	geNames := []string{"Desk", "desk", "Apps", "Ded"}
	for range r.IntN(5) {
		name := pick(geNames)
		ge := ldapschema.Entitlement{DN: dit.Entitlement(name), Name: name,
			Type: pick([]string{ldapschema.TypeDesktop, ldapschema.TypeApplication}), Dedicated: r.IntN(3) == 0,
			Scope: ldapschema.ScopeAny, LoadDistribution: ldapschema.PolicyNone, Enabled: r.IntN(5) > 0, Tags: some(tags)}
		for range r.IntN(4) {
			ge.Members = append(ge.Members, spell(pick(principals)))
		}
		for range r.IntN(4) {
			ge.PoolDNs = append(ge.PoolDNs, spell(pick(append(append([]string{dit.Pool("p1", "gone")}, poolDNs...), farmDNs...))))
		}
		d.Entitlements = append(d.Entitlements, ge)
		geDNs = append(geDNs, ge.DN)
	}
	geDNs = append(geDNs, dit.Entitlement("gone"))
	for range r.IntN(6) {
		h := ldapschema.HomeSite{SiteDN: spell(pick(siteDNs))}
		if r.IntN(2) == 0 {
			h.UserDN = spell(pick(append(userDNs, dit.User("ghost"))))
		} else {
			h.GroupDN = spell(pick(append(groupDNs, dit.Group("ghost"))))
		}
		if r.IntN(3) > 0 {
			h.EntitlementDN = spell(pick(append(geDNs, dit.Pool("p1", "pool1"))))
		}
		h.DN = dit.HomeSite(h.UserDN+h.GroupDN, h.EntitlementDN)
		d.HomeSites = append(d.HomeSites, h)
	}
	refs := func(list []string) string { return spell(pick(append(list, "", dit.User("ghost")))) }
	for i := range r.IntN(4) {
		id := fmt.Sprintf("s%d", i)
		d.Sessions = append(d.Sessions, ldapschema.Session{DN: dit.Session(id), ID: id, UserDN: refs(userDNs),
			EntitlementDN: refs(geDNs), PodDN: refs(podDNs), BrokeringPodDN: refs(podDNs), PoolDN: refs(poolDNs),
			HostDN: refs(hostDNs), ClientDN: refs(computerDNs)})
	}
	for range r.IntN(3) {
		a := ldapschema.Assignment{UserDN: refs(userDNs), EntitlementDN: refs(geDNs), PodDN: refs(podDNs)}
		a.DN = dit.Assignment(a.UserDN, a.EntitlementDN)
		d.Assignments = append(d.Assignments, a)
	}
	for range r.IntN(2) {
		d.Unreadable = append(d.Unreadable, Unreadable{DN: pick(append(poolDNs, dit.Site("x"))), Reason: "bad value"})
	}
	return d
}

// TestSameTiesAsBefore holds a pool in many entitlements whose names differ
// only by case: the list in the message keeps its order among equals.
func TestSameTiesAsBefore(t *testing.T) {
	d := clean()
	spellings := []string{"Desk", "desk", "DESK", "dEsk", "deSk", "desK"}
	for i := range 40 {
		name := spellings[i%len(spellings)]
		d.Entitlements = append(d.Entitlements, ldapschema.Entitlement{DN: dit.Entitlement(fmt.Sprintf("%s%d", name, i)), Name: name,
			Type: ldapschema.TypeDesktop, Enabled: i%2 == 0, PoolDNs: []string{dit.Pool("uk-pod", "uk-desk")},
			Members: []string{dit.User("alice")}})
	}
	if got, want := withoutNewChecks(Run(d)), referenceRun(d); !reflect.DeepEqual(got, want) {
		t.Fatalf("findings differ:\n%s\nwant\n%s", dump(got), dump(want))
	}
}

// withoutNewChecks drops the findings of classes the reference (lint as it
// was before it was made n log n) did not have: over-capacity,
// entitled-users-without-home-site and client-restrictions-without-computer
// have their own tests.
func withoutNewChecks(fs []Finding) []Finding {
	out := fs[:0:0]
	for _, f := range fs {
		if f.Check != CheckOverCapacity && f.Check != CheckEntitledUsersWithoutHome && f.Check != CheckClientRestrictionsNoClient {
			out = append(out, f)
		}
	}
	return out
}
