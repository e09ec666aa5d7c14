package generate

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cpactl/cpactl/ldapschema"
)

// plan holds the small per-kind tables the output is written from: sites,
// pods, Connection Servers, farms, pools, entitlements and the group shape.
// Users, hosts, computers, home sites, assignments and sessions are not
// kept: they are computed from their index while they are written.
type plan struct {
	cfg    Config
	dit    ldapschema.DIT
	sites  []ldapschema.Site
	pods   []ldapschema.Pod
	podOf  []int   // pod -> site
	online []int   // online pods
	siteOn [][]int // site -> its online pods
	cs     []ldapschema.ConnectionServer
	tags   []string // tags some Connection Server carries
	farms  []ldapschema.Farm
	farmOf []int // farm -> pod
	pools  []ldapschema.Pool
	poolAt []poolPlace
	ges    []entitlementPlan
	groups *groupShape

	// Assignments: dedicated entitlements and the running count of their
	// assignments (assignment a belongs to ded[k] for the first k with
	// dedCum[k] > a).
	ded    []int
	dedCum []int
	// floating (and application) entitlements sessions are drawn from.
	sessionGEs []int

	podPools [][]int // pod -> its pools
	users    *rng    // reseeded per user
	assigned *rng    // reseeded per assignment
	hostWid  int
}

type poolPlace struct {
	pod, farm, ge int // farm and ge: -1 when none
}

type entitlementPlan struct {
	rec     ldapschema.Entitlement // without members and pools
	members []member
	pools   []int
}

// member is an entitlement's member: a group or a user, by index.
type member struct {
	group bool
	index int
}

// Kinds of entitlement, in the rotation every ten entitlements follow, so
// that even a handful of them has all three.
const (
	floatingDesktop = iota
	dedicatedDesktop
	application
)

var kindRotation = []int{floatingDesktop, dedicatedDesktop, application, floatingDesktop, dedicatedDesktop,
	application, floatingDesktop, floatingDesktop, application, dedicatedDesktop}

func newPlan(cfg Config) (*plan, error) {
	if cfg.Base == "" {
		cfg.Base = ldapschema.DefaultBase
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &plan{cfg: cfg, dit: ldapschema.DIT{Base: cfg.Base}, users: newRng(cfg.Seed, "users"),
		assigned: newRng(cfg.Seed, "assignments")}
	p.planSites()
	p.planPods()
	p.planConnectionServers()
	p.planFarms()
	p.groups = newGroupShape(cfg.Groups, cfg.Users, cfg.Computers)
	p.planEntitlementKinds()
	p.planPools()
	p.planEntitlements()
	if err := p.planAssignments(); err != nil {
		return nil, err
	}
	if err := p.planSessions(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *plan) planSites() {
	r := newRng(p.cfg.Seed, "sites")
	n := p.cfg.Sites
	for i := 0; i < n; i++ {
		name, code := siteName(i)
		p.sites = append(p.sites, ldapschema.Site{DN: p.dit.Site(name), Name: name,
			Description: name + " data centre", URL: "https://vdi-" + code + ".example.com"})
	}
	// Each site ranks up to four others, in a random order.
	for i := range p.sites {
		others := make([]int, 0, n-1)
		for j := 0; j < n; j++ {
			if j != i {
				others = append(others, j)
			}
		}
		r.shuffle(len(others), func(a, b int) { others[a], others[b] = others[b], others[a] })
		k := min(len(others), r.between(1, 4))
		for _, j := range others[:k] {
			p.sites[i].PreferredSites = append(p.sites[i].PreferredSites, p.sites[j].Name)
		}
	}
	p.siteOn = make([][]int, n)
}

func (p *plan) siteCode(i int) string {
	_, code := siteName(i)
	return code
}

func (p *plan) planPods() {
	n, s := p.cfg.Pods, p.cfg.Sites
	for i := 0; i < n; i++ {
		site := i % s
		name := fmt.Sprintf("%s-%d", p.siteCode(site), i/s+1)
		online := i < n-p.cfg.OfflinePods
		desc := "pod " + name + " of site " + p.sites[site].Name
		if !online {
			desc += " (down for maintenance)"
		}
		p.pods = append(p.pods, ldapschema.Pod{DN: p.dit.Pod(name), Name: name, Description: desc,
			SiteDN: p.sites[site].DN, Site: p.sites[site].Name, Online: online})
		p.podOf = append(p.podOf, site)
		if online {
			p.online = append(p.online, i)
			p.siteOn[site] = append(p.siteOn[site], i)
		}
	}
}

func (p *plan) planConnectionServers() {
	r := newRng(p.cfg.Seed, "connection-servers")
	n, pods := p.cfg.ConnectionServers, p.cfg.Pods
	used := map[string]bool{}
	for i := 0; i < n; i++ {
		pod := p.pods[i%pods]
		name := fmt.Sprintf("%s-cs%d", pod.Name, i/pods+1)
		cs := ldapschema.ConnectionServer{DN: p.dit.ConnectionServer(pod.Name, name), Name: name, Pod: pod.Name}
		// One in four carries restriction tags; the last one always does,
		// so that tagged entitlements have somewhere to go.
		if r.percent(25) || (i == n-1 && len(used) == 0) {
			cs.Tags = []string{pick(r, tagNames)}
			if r.percent(25) {
				if t := pick(r, tagNames); t != cs.Tags[0] {
					cs.Tags = append(cs.Tags, t)
				}
			}
			for _, t := range cs.Tags {
				used[t] = true
			}
			cs.Description = "restricted to " + strings.Join(cs.Tags, ", ") + " entitlements"
		}
		p.cs = append(p.cs, cs)
	}
	for t := range used {
		p.tags = append(p.tags, t)
	}
	sort.Strings(p.tags)
}

func (p *plan) planFarms() {
	r := newRng(p.cfg.Seed, "farms")
	n, pods := p.cfg.Farms, p.cfg.Pods
	perPod := width((n+pods-1)/max(pods, 1) + 1)
	for i := 0; i < n; i++ {
		pod := i % pods
		name := fmt.Sprintf("%s-farm%0*d", p.pods[pod].Name, perPod, i/pods+1)
		f := ldapschema.Farm{DN: p.dit.Farm(p.pods[pod].Name, name), Name: name, Pod: p.pods[pod].Name}
		if !r.percent(20) {
			f.MaxSessionsPerHost = pick(r, []int{25, 50, 50, 100, 150, 200})
		}
		if r.percent(30) {
			f.LoadIndexThreshold = r.between(70, 100)
		}
		if r.percent(30) {
			f.ConnectingSessionThreshold = r.between(30, 150)
		}
		p.farms = append(p.farms, f)
		p.farmOf = append(p.farmOf, pod)
	}
	if n > 0 {
		p.hostWid = width((p.cfg.Hosts+n-1)/n + 1)
	}
}

// hostsOf returns the number of hosts of farm f: hosts h = f, f+F, f+2F...
func (p *plan) hostsOf(f int) int {
	return (p.cfg.Hosts - f + p.cfg.Farms - 1) / p.cfg.Farms
}

// host returns the name and DN of the k-th host of farm f.
func (p *plan) host(f, k int) (name, dn string) {
	farm := p.farms[f]
	name = fmt.Sprintf("%s-rds%0*d", farm.Name, p.hostWid, k+1)
	return name, p.dit.Host(farm.Pod, farm.Name, name)
}

func (p *plan) planEntitlementKinds() {
	p.ges = make([]entitlementPlan, p.cfg.Entitlements)
	for e := range p.ges {
		kind := kindRotation[e%len(kindRotation)]
		if kind == application && p.cfg.Farms == 0 {
			kind = floatingDesktop // application pools need farms
		}
		ge := &p.ges[e].rec
		switch kind {
		case dedicatedDesktop:
			ge.Type, ge.Dedicated = ldapschema.TypeDesktop, true
		case floatingDesktop:
			ge.Type = ldapschema.TypeDesktop
		default:
			ge.Type = ldapschema.TypeApplication
		}
		theme := desktopThemes[e%len(desktopThemes)]
		if ge.Type == ldapschema.TypeApplication {
			theme = applicationThemes[e%len(applicationThemes)]
		}
		ge.Name = numbered(theme+" ", e+1, width(p.cfg.Entitlements+1))
		ge.DN = p.dit.Entitlement(ge.Name)
	}
}

// onlineFarms returns the farms in online pods (there is always one: farm
// 0 is in pod 0, and the offline pods are the last ones).
func (p *plan) onlineFarms() []int {
	var out []int
	for f, pod := range p.farmOf {
		if p.pods[pod].Online {
			out = append(out, f)
		}
	}
	return out
}

// planPools makes pool e the first pool of entitlement e, usable (enabled,
// in an online pod, with capacity or a farm whose first host is always
// enabled); the other pools go to random entitlements or to none, anywhere.
func (p *plan) planPools() {
	r := newRng(p.cfg.Seed, "pools")
	n := p.cfg.Pools
	w := width(n + 1)
	onlineFarms := p.onlineFarms()
	p.podPools = make([][]int, len(p.pods))
	for i := 0; i < n; i++ {
		anchor := i < len(p.ges)
		ge := -1
		switch {
		case anchor:
			ge = i
		case r.percent(85) && len(p.ges) > 0:
			ge = r.intn(len(p.ges))
		}
		var kind string
		var dedicated bool
		if ge >= 0 {
			g := p.ges[ge].rec
			switch {
			case g.Type == ldapschema.TypeApplication:
				kind = ldapschema.KindApplication
			case g.Dedicated:
				kind, dedicated = ldapschema.KindDesktop, true
			case p.cfg.Farms > 0 && (anchor && ge%len(kindRotation) == 3 || !anchor && r.percent(30)):
				// One floating entitlement in four starts on an RDS farm.
				kind = ldapschema.KindRDSDesktop
			default:
				kind = ldapschema.KindDesktop
			}
		} else {
			kind = ldapschema.KindDesktop
			dedicated = r.percent(30)
			if p.cfg.Farms > 0 && r.percent(40) {
				kind = pick(r, []string{ldapschema.KindRDSDesktop, ldapschema.KindApplication})
			}
		}
		place := poolPlace{farm: -1, ge: ge}
		// One other pool in sixteen (the first of them included) is disabled.
		pool := ldapschema.Pool{Kind: kind, Dedicated: dedicated, Enabled: anchor || (i-len(p.ges))%16 != 0}
		if kind == ldapschema.KindDesktop {
			if anchor {
				place.pod = pick(r, p.online)
			} else {
				place.pod = r.intn(len(p.pods))
			}
			p.desktopCounters(r, &pool)
		} else {
			if anchor {
				place.farm = pick(r, onlineFarms)
			} else {
				place.farm = r.intn(len(p.farms))
			}
			place.pod = p.farmOf[place.farm]
			pool.FarmDN, pool.Farm = p.farms[place.farm].DN, p.farms[place.farm].Name
		}
		pod := p.pods[place.pod]
		pool.Pod = pod.Name
		pool.Name = numbered(pod.Name+"-"+poolCode(kind, dedicated)+"-", i+1, w)
		pool.DN = p.dit.Pool(pod.Name, pool.Name)
		if !pool.Enabled {
			pool.Description = "disabled for image maintenance"
		}
		p.pools = append(p.pools, pool)
		p.poolAt = append(p.poolAt, place)
		p.podPools[place.pod] = append(p.podPools[place.pod], i)
		if ge >= 0 {
			p.ges[ge].pools = append(p.ges[ge].pools, i)
		}
	}
}

func poolCode(kind string, dedicated bool) string {
	switch {
	case kind == ldapschema.KindApplication:
		return "apps"
	case kind == ldapschema.KindRDSDesktop:
		return "rdsh"
	case dedicated:
		return "ded"
	}
	return "desk"
}

// desktopCounters fills capacity, sessions and (dedicated) assigned
// machines; about one pool in eight is full.
func (p *plan) desktopCounters(r *rng, pool *ldapschema.Pool) {
	pool.Capacity = 10 * r.between(1, 30)
	used := pool.Capacity
	if !r.percent(12) {
		used = r.intn(pool.Capacity + 1)
	}
	if pool.Dedicated {
		pool.Assigned = used
		pool.Sessions = r.intn(used + 1)
		return
	}
	pool.Sessions = used
}

var (
	scopeRotation = []string{ldapschema.ScopeAny, ldapschema.ScopeSite, ldapschema.ScopeAny, ldapschema.ScopeLocal,
		ldapschema.ScopeAny, ldapschema.ScopeSite}
	policyRotation = []string{ldapschema.PolicyNone, ldapschema.PolicyLoad, ldapschema.PolicySession,
		ldapschema.PolicyNone, ldapschema.PolicyLoad, ldapschema.PolicyNone}
)

// planEntitlements draws each entitlement's members and policy. Every
// combination of options respects lint's rules (EntitlementRules): no
// option where the spec does not allow it, tags that some Connection
// Server carries.
func (p *plan) planEntitlements() {
	r := newRng(p.cfg.Seed, "entitlements")
	g := p.groups
	// teamsWithComputers are teams that hold a computer and users: members
	// for entitlements with client restrictions.
	teamsWithComputers := min(g.n[0], p.cfg.Computers, p.cfg.Users)
	rot := [6]int{r.intn(6), r.intn(6), r.intn(5), r.intn(2), r.intn(8), r.intn(20)}
	// An entitlement that requires a home site has users as members, and
	// an override row for each, written first among the overrides
	// (writeHomeSites), so
	// that no entitled user is refused (lint's
	// entitled-users-without-home-site); the overrides' share of the rows
	// bounds how many such members there can be.
	required := p.cfg.HomeSites * 2 / 5
	rh := newRng(p.cfg.Seed, "home-site-members")
	for e := range p.ges {
		ge := &p.ges[e].rec
		floatingOrApp := ge.Type == ldapschema.TypeApplication || !ge.Dedicated
		ge.Enabled = (e+rot[5])%20 != 0 // one in twenty is disabled
		// Scope, policy, home and preferred sites rotate (from a random
		// start), so that any six entitlements in a row show every scope and
		// policy and both settings of the two options, even in a demo.
		ge.Scope = scopeRotation[(e+rot[0])%len(scopeRotation)]
		ge.LoadDistribution = policyRotation[(e+rot[1])%len(policyRotation)]
		ge.UseHomeSite = (e+rot[2])%5 < 2
		ge.RequireHomeSite = ge.UseHomeSite && r.percent(30)
		ge.UsePreferredSites = ge.Scope == ldapschema.ScopeAny && ((e+rot[0])/2+rot[3])%2 == 0
		ge.IgnoreHighLoad = ge.UsePreferredSites && ge.LoadDistribution != ldapschema.PolicyNone && r.percent(50)
		ge.AutoClean = floatingOrApp && r.percent(40)
		ge.MultipleSessionsPerUser = ge.Type == ldapschema.TypeDesktop && !ge.Dedicated && r.percent(15)
		ge.ClientRestrictions = floatingOrApp && teamsWithComputers > 0 && r.percent(10)
		// Client restrictions need teams (their computers) as members, and
		// a dedicated entitlement a large group (its users are assigned),
		// a required home site users: neither goes with it.
		ge.RequireHomeSite = ge.RequireHomeSite && !ge.ClientRestrictions && !ge.Dedicated
		ge.DefaultProtocol = pick(r, []string{ldapschema.ProtocolBlast, ldapschema.ProtocolBlast, ldapschema.ProtocolBlast,
			ldapschema.ProtocolPCoIP, ldapschema.ProtocolPCoIP, ldapschema.ProtocolRDP})
		if ge.Type == ldapschema.TypeApplication && ge.DefaultProtocol == ldapschema.ProtocolRDP {
			// Horizon's application entitlements take BLAST or PCOIP
			// (the REST API's enum), never RDP.
			ge.DefaultProtocol = ldapschema.ProtocolPCoIP
		}
		// One entitlement in eight is restricted to tagged Connection Servers.
		if len(p.tags) > 0 && (e+rot[4])%8 == 0 {
			ge.Tags = []string{pick(r, p.tags)}
		}
		if ge.ClientRestrictions {
			ge.Description = "only from registered client computers"
		}
		p.ges[e].members = p.drawMembers(r, ge, teamsWithComputers)
		if ge.RequireHomeSite && p.cfg.Users > 0 {
			// Users only, drawn apart (the other entitlements stay as
			// they were): a group's home-site row is the home site of its
			// own users, not of those of the groups nested in it.
			p.ges[e].members = homeSiteUsers(rh, p.cfg.Users)
		}
		if ge.RequireHomeSite {
			if n := len(p.ges[e].members); n <= required {
				required -= n
			} else {
				ge.RequireHomeSite = false
			}
		}
	}
}

// homeSiteUsers draws one to three users, the members of an entitlement
// that requires a home site.
func homeSiteUsers(r *rng, users int) []member {
	var out []member
	for k := r.between(1, 3); k > 0; k-- {
		if u := (member{index: r.intn(users)}); !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	return out
}

// drawMembers picks an entitlement's members: one to three groups of any
// level (two adjacent teams at times, whose shared users then have two
// groups in the entitlement), sometimes a user directly. A dedicated
// entitlement's first member is a large group: its users are the ones
// assigned. Entitlements with client restrictions take teams that hold
// computers (those that require a home site get users instead: homeSiteUsers).
func (p *plan) drawMembers(r *rng, ge *ldapschema.Entitlement, teamsWithComputers int) []member {
	g := p.groups
	if p.cfg.Users == 0 {
		return nil
	}
	var out []member
	seen := map[int]bool{}
	add := func(idx int) {
		if !seen[idx] && g.usersBelow(idx) > 0 {
			seen[idx] = true
			out = append(out, member{group: true, index: idx})
		}
	}
	// Groups of level l with users: j < users (team j sits below group j
	// of every level).
	withUsers := func(l int) int { return min(g.n[l], p.cfg.Users) }
	if g.n[0] > 0 {
		switch {
		case ge.ClientRestrictions:
			add(r.intn(teamsWithComputers))
		case ge.Dedicated:
			l := g.top
			add(g.offset[l] + r.intn(withUsers(l)))
		}
		for k := r.between(1, 3) - len(out); k > 0; k-- {
			l := pick(r, []int{0, 0, 0, 0, 1, 1, 1, 2, 2, 3})
			for l > 0 && g.n[l] == 0 {
				l--
			}
			if ge.ClientRestrictions {
				l = 0
			}
			n := withUsers(l)
			if ge.ClientRestrictions {
				n = teamsWithComputers
			}
			j := r.intn(n)
			add(g.offset[l] + j)
			if l == 0 && j+1 < n && r.percent(40) {
				add(j + 1)
			}
		}
	}
	if len(out) == 0 || r.percent(15) {
		out = append(out, member{index: r.intn(p.cfg.Users)})
	}
	return out
}

// usersOf returns how many distinct users member m stands for (the users
// userOf enumerates).
func (p *plan) usersOf(m member) int {
	if !m.group {
		return 1
	}
	return p.groups.usersBelow(m.index)
}

// userOf returns the r-th user of member m.
func (p *plan) userOf(m member, r int) int {
	if !m.group {
		return m.index
	}
	return p.groups.userAt(m.index, r)
}

// planAssignments spreads the assignments over the dedicated entitlements
// as evenly as their first member's users allow (a user is assigned once
// per entitlement).
func (p *plan) planAssignments() error {
	var caps []int
	for e, ge := range p.ges {
		if ge.rec.Dedicated && len(ge.members) > 0 && len(ge.pools) > 0 {
			p.ded = append(p.ded, e)
			caps = append(caps, p.usersOf(ge.members[0]))
		}
	}
	total := 0
	for _, c := range caps {
		total += c
	}
	if p.cfg.Assignments > total {
		return refuse("--assignments %d is more than the %d pairs of user and dedicated entitlement the federation holds: lower --assignments, or raise --users, --groups or --entitlements",
			p.cfg.Assignments, total)
	}
	quota := spread(p.cfg.Assignments, caps)
	sum := 0
	for _, q := range quota {
		sum += q
		p.dedCum = append(p.dedCum, sum)
	}
	return nil
}

// spread divides total over slots of the given capacities as evenly as
// they allow (total <= the sum of caps).
func spread(total int, caps []int) []int {
	order := make([]int, len(caps))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return caps[order[a]] < caps[order[b]] })
	out := make([]int, len(caps))
	left := total
	for k, i := range order {
		share := (left + len(order) - k - 1) / (len(order) - k)
		out[i] = min(caps[i], share)
		left -= out[i]
	}
	return out
}

// assignment returns the entitlement and the rank of the user of
// assignment a.
func (p *plan) assignment(a int) (ge, rank int) {
	k := sort.SearchInts(p.dedCum, a+1)
	if k > 0 {
		a -= p.dedCum[k-1]
	}
	return p.ded[k], a
}

// planSessions lists the floating and application entitlements with users
// that sessions are drawn from: the enabled ones, or, when every one is
// disabled, those (sessions outlive a disabled entitlement).
func (p *plan) planSessions() error {
	var disabled []int
	for e, ge := range p.ges {
		if !ge.rec.Dedicated && len(ge.members) > 0 && len(ge.pools) > 0 {
			if ge.rec.Enabled {
				p.sessionGEs = append(p.sessionGEs, e)
			} else {
				disabled = append(disabled, e)
			}
		}
	}
	if len(p.sessionGEs) == 0 {
		p.sessionGEs = disabled
	}
	if p.cfg.Sessions > 0 && len(p.sessionGEs) == 0 && p.cfg.Assignments == 0 {
		return refuse("--sessions %d: no floating or application entitlement has users, and there are no --assignments: raise --entitlements or --assignments",
			p.cfg.Sessions)
	}
	return nil
}

// dedicatedSessions is how many sessions sit on dedicated assignments: up
// to a fifth of them, one per assignment (all of them when no floating or
// application entitlement can take sessions).
func (p *plan) dedicatedSessions() int {
	if len(p.sessionGEs) == 0 {
		return p.cfg.Sessions
	}
	return min(p.cfg.Assignments, p.cfg.Sessions/5)
}

// user returns user u's record.
func (p *plan) user(u int) ldapschema.User {
	r := p.users.at(u)
	first, last := pick(r, firstNames), pick(r, lastNames)
	rec := ldapschema.User{FullName: first[0] + " " + last[0],
		UID: fmt.Sprintf("%c%s%0*d", first[1][0], last[1], width(p.cfg.Users+1), u+1)}
	switch d := r.intn(10); {
	case d < 7:
		rec.Domain = "CORP"
	case d < 9:
		rec.Domain = "corp.example.com"
	}
	rec.DN = p.dit.User(rec.UID)
	return rec
}

func (p *plan) userDN(u int) string { return p.user(u).DN }

func (p *plan) groupDN(idx int) string { return p.dit.Group(p.groups.name(idx)) }

// computer returns client computer k's record: one in five is a kiosk.
func (p *plan) computer(k int) ldapschema.Computer {
	w := width(p.cfg.Computers + 1)
	c := ldapschema.Computer{Name: numbered("PC-", k+1, w), Description: "laptop"}
	if k%5 == 0 {
		c = ldapschema.Computer{Name: numbered("KIOSK-", k+1, w), Description: "lobby kiosk"}
	}
	c.DN = p.dit.Computer(c.Name)
	return c
}

func (p *plan) memberDN(m member) string {
	if m.group {
		return p.groupDN(m.index)
	}
	return p.userDN(m.index)
}

// assignmentPlan is one pod assignment, computed from its index.
type assignmentPlan struct {
	user, ge, pool int
	machine        string
}

func (p *plan) assignmentOf(a int) assignmentPlan {
	e, rank := p.assignment(a)
	ge := p.ges[e]
	r := p.assigned.at(a)
	pool := pick(r, ge.pools)
	return assignmentPlan{user: p.userOf(ge.members[0], rank), ge: e, pool: pool,
		machine: fmt.Sprintf("%s-%04d", p.pools[pool].Name, rank+1)}
}
