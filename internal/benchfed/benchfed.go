// Package benchfed generates synthetic federations for benchmarks: the
// records of a federation of about n entries with the proportions of a
// Cloud Pod Architecture federation at its documented maximum (at 358,000
// entries: 15 sites, 50 pods, 350 Connection Servers, 1,000 global
// entitlements, 5,000 pools, 1,000 farms with 20,000 RDS hosts, 50,000
// users in 5,000 nested groups, 250,000 sessions, 20,000 pod assignments,
// 5,000 home-site rows and 500 client computers), and their LDAP entries.
//
// The data is deterministic and mostly clean, with a few of each problem
// lint looks for (disabled pools and hosts, offline pods, restriction tags
// no server holds, dangling references, group cycles, home-site overrides
// of principals not entitled), so that benchmarks exercise the reporting
// paths too. It is for tests and benchmarks only; `cpactl generate` is the
// tool for administrators.
package benchfed

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/ldapschema"
)

// MaxEntries is the size of a federation at the CPA maximum.
const MaxEntries = 358_000

// counts at the CPA maximum (MaxEntries entries with the layout).
var maxCounts = counts{sites: 15, pods: 50, servers: 350, entitlements: 1000, pools: 5000, farms: 1000,
	hosts: 20000, users: 50000, groups: 5000, sessions: 250000, assignments: 20000, homeSites: 5000, computers: 500}

type counts struct {
	sites, pods, servers, entitlements, pools, farms, hosts, users, groups, sessions, assignments, homeSites, computers int
}

func (c counts) scaled(n int) counts {
	f := float64(n) / MaxEntries
	s := func(v, min int) int { return max(min, int(float64(v)*f+0.5)) }
	return counts{sites: s(c.sites, 2), pods: s(c.pods, 2), servers: s(c.servers, 2), entitlements: s(c.entitlements, 5),
		pools: s(c.pools, 5), farms: s(c.farms, 2), hosts: s(c.hosts, 2), users: s(c.users, 10), groups: s(c.groups, 10),
		sessions: s(c.sessions, 1), assignments: s(c.assignments, 1), homeSites: s(c.homeSites, 1),
		computers: s(c.computers, 1)}
}

// Federation returns the records of a federation of about n entries under
// dit's base.
func Federation(dit ldapschema.DIT, n int) ldapschema.Records {
	c := maxCounts.scaled(n)
	r := rand.New(rand.NewPCG(uint64(n), 358))
	d := ldapschema.Records{Settings: ldapschema.SettingsRecord{DN: dit.Settings(), Stored: map[string]int{}}}

	for i := range c.sites {
		name := fmt.Sprintf("site-%02d", i)
		var pref []string
		for k := 1; k <= 2 && k < c.sites; k++ {
			pref = append(pref, fmt.Sprintf("site-%02d", (i+k)%c.sites))
		}
		d.Sites = append(d.Sites, ldapschema.Site{DN: dit.Site(name), Name: name, PreferredSites: pref,
			PreferredRaw: ldapschema.EncodePreferredSites(pref)})
	}
	for i := range c.pods {
		site := d.Sites[i%c.sites]
		name := fmt.Sprintf("pod-%03d", i)
		d.Pods = append(d.Pods, ldapschema.Pod{DN: dit.Pod(name), Name: name, SiteDN: site.DN, Site: site.Name,
			Online: i%20 != 19})
	}
	for i := range c.servers {
		pod := d.Pods[i%c.pods]
		name := fmt.Sprintf("cs-%04d", i)
		var tags []string
		if i%3 == 0 {
			tags = append(tags, "internal")
		}
		if i%7 == 0 {
			tags = append(tags, "dmz")
		}
		d.ConnectionServers = append(d.ConnectionServers, ldapschema.ConnectionServer{DN: dit.ConnectionServer(pod.Name, name),
			Name: name, Pod: pod.Name, Tags: tags})
	}
	farmsOfPod := make([][]int, c.pods)
	for i := range c.farms {
		farmsOfPod[i%c.pods] = append(farmsOfPod[i%c.pods], i)
		pod := d.Pods[i%c.pods]
		name := fmt.Sprintf("farm-%04d", i)
		d.Farms = append(d.Farms, ldapschema.Farm{DN: dit.Farm(pod.Name, name), Name: name, Pod: pod.Name,
			MaxSessionsPerHost: 50})
	}
	hostsOfFarm := map[string][]int{}
	for i := range c.hosts {
		farm := d.Farms[i%c.farms]
		hostsOfFarm[farm.Name] = append(hostsOfFarm[farm.Name], i)
		name := fmt.Sprintf("rds-%05d", i)
		d.Hosts = append(d.Hosts, ldapschema.Host{DN: dit.Host(farm.Pod, farm.Name, name), Name: name, Farm: farm.Name,
			Pod: farm.Pod, LoadIndex: r.IntN(101), Sessions: r.IntN(40), Features: ldapschema.AllFeatures,
			Enabled: i%50 != 49})
	}

	// Entitlement j has the pools i with i % entitlements == j, of its kind.
	type geKind struct {
		typ       string
		dedicated bool
		pool      string // the pools' kind
	}
	kinds := []geKind{{ldapschema.TypeDesktop, false, ldapschema.KindDesktop}, {ldapschema.TypeDesktop, false, ldapschema.KindRDSDesktop},
		{ldapschema.TypeDesktop, true, ldapschema.KindDesktop}, {ldapschema.TypeApplication, false, ldapschema.KindApplication},
		{ldapschema.TypeDesktop, false, ldapschema.KindDesktop}}
	geOf := func(j int) geKind { return kinds[j%len(kinds)] }
	poolsOf := make([][]int, c.entitlements)
	for i := range c.pools {
		j := i % c.entitlements
		k := geOf(j)
		podIndex := r.IntN(c.pods)
		if len(farmsOfPod[podIndex]) == 0 && k.pool != ldapschema.KindDesktop {
			podIndex = 0
		}
		pod := d.Pods[podIndex]
		name := fmt.Sprintf("pool-%04d", i)
		p := ldapschema.Pool{DN: dit.Pool(pod.Name, name), Name: name, Pod: pod.Name, Kind: k.pool,
			Enabled: r.IntN(20) != 0 && j%50 != 7}
		if k.pool == ldapschema.KindDesktop {
			p.Dedicated, p.Capacity, p.Sessions = k.dedicated, 100+r.IntN(400), r.IntN(100)
			if p.Dedicated {
				p.Assigned = r.IntN(100)
			}
		} else {
			farms := farmsOfPod[podIndex]
			farm := d.Farms[farms[r.IntN(len(farms))]]
			p.FarmDN, p.Farm = farm.DN, farm.Name
		}
		d.Pools = append(d.Pools, p)
		poolsOf[j] = append(poolsOf[j], i)
	}

	for i := range c.users {
		uid := fmt.Sprintf("user%05d", i)
		d.Users = append(d.Users, ldapschema.User{DN: dit.User(uid), UID: uid, FullName: "User " + uid})
	}
	for i := range c.computers {
		name := fmt.Sprintf("pc-%04d", i)
		d.Computers = append(d.Computers, ldapschema.Computer{DN: dit.Computer(name), Name: name})
	}
	// Groups nest as a tree (group g is in group g/10), every user is in
	// group u % groups and a fifth of them in a second one; one group in
	// 500 also contains its grand-parent (a cycle).
	groupMembers := make([][]string, c.groups)
	for i, u := range d.Users {
		groupMembers[i%c.groups] = append(groupMembers[i%c.groups], u.DN)
		if i%5 == 0 {
			g := r.IntN(c.groups)
			groupMembers[g] = append(groupMembers[g], u.DN)
		}
	}
	for g := 1; g < c.groups; g++ {
		groupMembers[g/10] = append(groupMembers[g/10], dit.Group(groupName(g)))
		if g%500 == 499 && g/100 != g {
			groupMembers[g] = append(groupMembers[g], dit.Group(groupName(g/100)))
		}
	}
	for i, pc := range d.Computers {
		g := (i * 10) % c.groups
		groupMembers[g] = append(groupMembers[g], pc.DN)
	}
	for g := range c.groups {
		d.Groups = append(d.Groups, ldapschema.Group{DN: dit.Group(groupName(g)), Name: groupName(g),
			Members: dedupe(groupMembers[g])})
	}

	var dedicatedGEs []int
	for j := range c.entitlements {
		k := geOf(j)
		name := fmt.Sprintf("ge-%04d", j)
		ge := ldapschema.Entitlement{DN: dit.Entitlement(name), Name: name, Type: k.typ, Dedicated: k.dedicated,
			Scope: ldapschema.ScopeAny, LoadDistribution: ldapschema.PolicyNone, Enabled: j%97 != 3,
			DefaultProtocol: ldapschema.ProtocolBlast}
		if j%3 == 0 {
			ge.Tags = []string{"internal"}
		}
		if j%100 == 11 {
			ge.Tags = []string{"nowhere"}
		}
		// Three groups from the upper levels of the tree, two users, and
		// now and then a member spelled in upper case or one that is gone.
		for range 3 {
			ge.Members = append(ge.Members, dit.Group(groupName(r.IntN(min(c.groups, 600)))))
		}
		for range 2 {
			ge.Members = append(ge.Members, d.Users[r.IntN(c.users)].DN)
		}
		if j%10 == 0 {
			ge.Members = append(ge.Members, strings.ToUpper(d.Users[r.IntN(c.users)].DN))
		}
		if j%250 == 5 {
			ge.Members = append(ge.Members, dit.User("gone"))
		}
		ge.Members = dedupe(ge.Members)
		for _, i := range poolsOf[j] {
			ge.PoolDNs = append(ge.PoolDNs, d.Pools[i].DN)
		}
		if k.dedicated {
			dedicatedGEs = append(dedicatedGEs, j)
		}
		d.Entitlements = append(d.Entitlements, ge)
	}

	rows := map[string]bool{}
	for i := 0; len(d.HomeSites) < c.homeSites && i < 4*c.homeSites; i++ {
		h := ldapschema.HomeSite{SiteDN: d.Sites[r.IntN(c.sites)].DN}
		principal := d.Users[r.IntN(c.users)].DN
		if i%5 == 1 {
			principal = d.Groups[r.IntN(c.groups)].DN
			h.GroupDN = principal
		} else {
			h.UserDN = principal
		}
		if i%5 >= 3 {
			h.EntitlementDN = d.Entitlements[r.IntN(c.entitlements)].DN
		}
		h.DN = dit.HomeSite(principal, h.EntitlementDN)
		if rows[h.DN] {
			continue
		}
		rows[h.DN] = true
		d.HomeSites = append(d.HomeSites, h)
	}

	for i := range c.sessions {
		u := d.Users[r.IntN(c.users)]
		ge := d.Entitlements[r.IntN(c.entitlements)]
		s := ldapschema.Session{DN: dit.Session(fmt.Sprintf("s%06d", i)), ID: fmt.Sprintf("s%06d", i), UserDN: u.DN,
			EntitlementDN: ge.DN, BrokeringPodDN: d.Pods[r.IntN(c.pods)].DN, State: ldapschema.StateConnected}
		if i%3 == 0 {
			s.State = ldapschema.StateDisconnected
		}
		if len(ge.PoolDNs) > 0 {
			p := d.Pools[poolIndex(ge.PoolDNs[r.IntN(len(ge.PoolDNs))])]
			s.PoolDN, s.PodDN = p.DN, dit.Pod(p.Pod)
			if hosts := hostsOfFarm[p.Farm]; len(hosts) > 0 {
				s.HostDN = d.Hosts[hosts[r.IntN(len(hosts))]].DN
			}
		}
		if i%10 == 0 {
			s.ClientDN = d.Computers[r.IntN(c.computers)].DN
		}
		if i%50000 == 17 {
			s.HostDN = dit.Host("pod-000", "farm-0000", "gone")
		}
		d.Sessions = append(d.Sessions, s)
	}
	if len(dedicatedGEs) > 0 {
		for i := range c.assignments {
			u := d.Users[i%c.users]
			ge := d.Entitlements[dedicatedGEs[(i/c.users+r.IntN(len(dedicatedGEs)))%len(dedicatedGEs)]]
			dn := dit.Assignment(u.DN, ge.DN)
			if rows[dn] {
				continue
			}
			rows[dn] = true
			d.Assignments = append(d.Assignments, ldapschema.Assignment{DN: dn, UserDN: u.DN, EntitlementDN: ge.DN,
				PodDN: d.Pods[r.IntN(c.pods)].DN, Machine: fmt.Sprintf("vm-%05d", i)})
		}
	}
	return d
}

func groupName(g int) string { return fmt.Sprintf("group-%04d", g) }

// poolIndex reads the index back from a generated pool's DN.
func poolIndex(dn string) int {
	var i int
	fmt.Sscanf(ldapschema.NameOf(dn), "pool-%d", &i)
	return i
}

func dedupe(dns []string) []string {
	seen := map[string]bool{}
	out := dns[:0]
	for _, dn := range dns {
		if k := ldapschema.NormalizeDN(dn); !seen[k] {
			seen[k] = true
			out = append(out, dn)
		}
	}
	return out
}

// Entries returns the entries of d as a directory holds them, the layout
// (base entry, containers, cn=Common) first.
func Entries(dit ldapschema.DIT, d ldapschema.Records) []*ldap.Entry {
	var out []*ldap.Entry
	add := func(dn string, a ldapschema.Attrs) {
		e := &ldap.Entry{DN: dn}
		for _, name := range sortedNames(a) {
			e.Attributes = append(e.Attributes, &ldap.EntryAttribute{Name: name, Values: a[name]})
		}
		out = append(out, e)
	}
	add(dit.Base, ldapschema.Attrs{ldapschema.AttrObjectClass: {"top", "domain"}, "dc": {ldapschema.NameOf(dit.Base)}})
	for _, dn := range dit.Containers() {
		add(dn, ldapschema.Attrs{ldapschema.AttrObjectClass: {"top", ldapschema.ClassOrganizationalUnit},
			ldapschema.AttrOU: {ldapschema.NameOf(dn)}})
	}
	add(dit.Settings(), ldapschema.Attrs{ldapschema.AttrObjectClass: {"top", ldapschema.ClassGlobalSettings},
		ldapschema.AttrCN: {"Common"}})
	for _, x := range d.Sites {
		add(x.DN, x.Attrs())
	}
	for _, x := range d.Pods {
		add(x.DN, x.Attrs())
	}
	for _, x := range d.ConnectionServers {
		add(x.DN, x.Attrs())
	}
	for _, x := range d.Farms {
		add(x.DN, x.Attrs())
	}
	for _, x := range d.Hosts {
		add(x.DN, x.Attrs())
	}
	for _, x := range d.Pools {
		add(x.DN, x.Attrs())
	}
	for _, x := range d.Users {
		add(x.DN, x.Attrs())
	}
	for _, x := range d.Computers {
		add(x.DN, x.Attrs())
	}
	for _, x := range d.Groups {
		add(x.DN, x.Attrs())
	}
	for _, x := range d.Entitlements {
		add(x.DN, x.Attrs())
	}
	for _, x := range d.HomeSites {
		add(x.DN, x.Attrs())
	}
	for _, x := range d.Sessions {
		add(x.DN, x.Attrs())
	}
	for _, x := range d.Assignments {
		add(x.DN, x.Attrs())
	}
	return out
}

func sortedNames(a ldapschema.Attrs) []string {
	names := make([]string, 0, len(a))
	for n := range a {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Size returns the number of entries of d, with the layout Entries adds.
func Size(dit ldapschema.DIT, d ldapschema.Records) int {
	return 2 + len(dit.Containers()) + len(d.Sites) + len(d.Pods) + len(d.ConnectionServers) + len(d.Farms) +
		len(d.Hosts) + len(d.Pools) + len(d.Users) + len(d.Computers) + len(d.Groups) + len(d.Entitlements) +
		len(d.HomeSites) + len(d.Sessions) + len(d.Assignments)
}

// Sizes are the federation sizes benchmarks measure: 10k, 100k and the CPA
// maximum.
var Sizes = []int{10_000, 100_000, MaxEntries}
