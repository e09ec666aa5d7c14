package generate

import (
	"fmt"
	"io"
	"strings"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/ldapschema"
)

// Emit receives one generated entry: its DN and its attributes, as the
// ldapschema record types write them.
type Emit func(dn string, attrs ldapschema.Attrs) error

// Write writes the federation as LDIF content records (RFC 2849) to w,
// after a comment that names the seed and the counts, and returns the
// number of entries written. Nothing is written when cfg is invalid.
func Write(w io.Writer, cfg Config) (int, error) {
	p, err := newPlan(cfg)
	if err != nil {
		return 0, err
	}
	lw := directory.NewLDIFWriter(w)
	if err := lw.Comment(p.cfg.describe()...); err != nil {
		return 0, err
	}
	if err := p.run(lw.WriteEntry); err != nil {
		return lw.Entries(), err
	}
	return lw.Entries(), lw.Close()
}

// describe is the comment at the top of the output.
func (c Config) describe() []string {
	var counts []string
	for _, k := range Counts {
		switch k.Flag {
		case "offline-pods":
			counts[len(counts)-1] += fmt.Sprintf(" (%d offline)", c.OfflinePods)
		default:
			counts = append(counts, fmt.Sprintf("%d %s", *k.Field(&c), strings.ReplaceAll(k.Flag, "-", " ")))
		}
	}
	return []string{
		"A synthetic Cloud Pod Architecture federation written by `cpactl generate`.",
		fmt.Sprintf("Seed %d, base %s, %d entries:", c.Seed, c.Base, c.Entries()),
		strings.Join(counts, ", ") + ".",
		"Load it with slapadd or ldapadd into an empty database with cpactl's schema.",
	}
}

// run hands every entry of the federation to emit, parents before
// children, so that the entries load in this order into an empty database:
// the layout of `cpactl init` (base entry, containers, cn=Common), sites,
// pods (each followed by its Connection Servers, farms with their hosts,
// and pools), entitlements, users, groups, computers, home sites, pod
// assignments and sessions. An error from emit stops the generation.
func (p *plan) run(emit Emit) error {
	steps := []func(Emit) error{p.writeLayout, p.writeSites, p.writePods, p.writeEntitlements, p.writeUsers,
		p.writeGroups, p.writeComputers, p.writeHomeSites, p.writeAssignments, p.writeSessions}
	for _, step := range steps {
		if err := step(emit); err != nil {
			return err
		}
	}
	return nil
}

func (p *plan) writeLayout(emit Emit) error {
	layout, err := directory.Layout(p.dit)
	if err != nil {
		return err
	}
	for _, e := range layout {
		if err := emit(e.DN, e.Attrs); err != nil {
			return err
		}
	}
	return nil
}

func (p *plan) writeSites(emit Emit) error {
	for _, s := range p.sites {
		if err := emit(s.DN, s.Attrs()); err != nil {
			return err
		}
	}
	return nil
}

// writePods writes each pod followed by what lies below it.
func (p *plan) writePods(emit Emit) error {
	r := newRng(p.cfg.Seed, "hosts")
	n := len(p.pods)
	for i, pod := range p.pods {
		if err := emit(pod.DN, pod.Attrs()); err != nil {
			return err
		}
		for c := i; c < len(p.cs); c += n {
			if err := emit(p.cs[c].DN, p.cs[c].Attrs()); err != nil {
				return err
			}
		}
		for f := i; f < len(p.farms); f += n {
			if err := emit(p.farms[f].DN, p.farms[f].Attrs()); err != nil {
				return err
			}
			for k := 0; k < p.hostsOf(f); k++ {
				h := p.hostRecord(r, f, k)
				if err := emit(h.DN, h.Attrs()); err != nil {
					return err
				}
			}
		}
		for _, j := range p.podPools[i] {
			if err := emit(p.pools[j].DN, p.pools[j].Attrs()); err != nil {
				return err
			}
		}
	}
	return nil
}

// Feature sets of hosts that lack some default feature (bucket 2 material).
var partialFeatures = [][]string{
	{ldapschema.FeatureRDP, ldapschema.FeaturePCoIP, ldapschema.FeatureBlast},
	{ldapschema.FeatureMultiSession, ldapschema.FeatureRDP, ldapschema.FeaturePCoIP, ldapschema.FeatureBlast},
	{ldapschema.FeatureMultiSession, ldapschema.FeatureUnauthenticated, ldapschema.FeatureBlast},
	{ldapschema.FeatureMultiSession, ldapschema.FeatureUnauthenticated, ldapschema.FeatureRDP, ldapschema.FeaturePCoIP},
}

// hostRecord draws the k-th host of farm f. Loads are spread so that, with
// the default pae-RDS* settings (LIT 20, CST 20), hosts fall in all three
// buckets of docs/storm.md: about half below both thresholds, the rest above the
// load index or the connecting-session threshold; some hosts report load
// index -1, some lack default features, a few are disabled (never the
// first host of a farm, so every farm can serve). The second host of each
// farm plays one of these parts in turn, so that even a small federation
// shows them all.
func (p *plan) hostRecord(r *rng, f, k int) ldapschema.Host {
	farm := p.farms[f]
	name, dn := p.host(f, k)
	role := -1
	if k == 1 {
		role = f % 4
	}
	h := ldapschema.Host{DN: dn, Name: name, Farm: farm.Name, Pod: farm.Pod,
		Enabled: k == 0 || role != 0 && (role > 0 || !r.percent(5)), Features: ldapschema.AllFeatures}
	if role == 2 || role < 0 && r.percent(15) {
		h.Features = pick(r, partialFeatures)
		h.Description = "not every default feature"
	}
	roll := r.intn(100)
	switch role {
	case 1, 2: // below both thresholds: bucket 1 at load index -1, bucket 2
		roll = 0
	case 3: // above the connecting-session threshold: bucket 3
		roll = 80
	}
	switch {
	case roll < 45:
		h.LoadIndex, h.Connecting = r.between(0, 19), r.between(0, 5)
	case roll < 75:
		h.LoadIndex, h.Connecting = r.between(20, 100), r.between(0, 10)
	case roll < 90:
		h.LoadIndex, h.Connecting = r.between(0, 19), r.between(20, 40)
	default:
		h.LoadIndex, h.Connecting = r.between(20, 100), r.between(20, 60)
	}
	if role == 1 || role < 0 && h.LoadIndex < 20 && r.percent(8) {
		h.LoadIndex = -1
		h.Description = "load balancing disabled on the host"
	}
	limit := farm.MaxSessionsPerHost
	if limit == 0 {
		limit = 150
	}
	h.Sessions = r.intn(limit + 1)
	if r.percent(5) {
		h.Sessions = limit
	}
	if !h.Enabled {
		h.Description = "drained for patching"
		h.Sessions, h.Connecting = 0, 0
	}
	return h
}

func (p *plan) writeEntitlements(emit Emit) error {
	for _, ge := range p.ges {
		rec := ge.rec
		for _, m := range ge.members {
			rec.Members = append(rec.Members, p.memberDN(m))
		}
		for _, j := range ge.pools {
			rec.PoolDNs = append(rec.PoolDNs, p.pools[j].DN)
		}
		if err := emit(rec.DN, rec.Attrs()); err != nil {
			return err
		}
	}
	return nil
}

func (p *plan) writeUsers(emit Emit) error {
	for u := 0; u < p.cfg.Users; u++ {
		rec := p.user(u)
		if err := emit(rec.DN, rec.Attrs()); err != nil {
			return err
		}
	}
	return nil
}

var groupDescriptions = [levels + 1]string{"a team", "teams of a department", "departments of a division",
	"divisions of a region", "no members yet"}

func (p *plan) writeGroups(emit Emit) error {
	g := p.groups
	for idx := 0; idx < g.total(); idx++ {
		l, _ := g.level(idx)
		rec := ldapschema.Group{Name: g.name(idx), Description: groupDescriptions[l]}
		rec.DN = p.dit.Group(rec.Name)
		g.members(idx,
			func(u int) { rec.Members = append(rec.Members, p.userDN(u)) },
			func(k int) { rec.Members = append(rec.Members, p.computer(k).DN) },
			func(grp int) { rec.Members = append(rec.Members, p.groupDN(grp)) })
		if err := emit(rec.DN, rec.Attrs()); err != nil {
			return err
		}
	}
	return nil
}

func (p *plan) writeComputers(emit Emit) error {
	for k := 0; k < p.cfg.Computers; k++ {
		rec := p.computer(k)
		if err := emit(rec.DN, rec.Attrs()); err != nil {
			return err
		}
	}
	return nil
}

// writeHomeSites writes the home-site rows of eachHomeSite.
func (p *plan) writeHomeSites(emit Emit) error {
	return p.eachHomeSite(func(principal member, ge, site int) error {
		h := ldapschema.HomeSite{SiteDN: p.sites[site].DN}
		dn := p.memberDN(principal)
		if principal.group {
			h.GroupDN = dn
		} else {
			h.UserDN = dn
		}
		if ge >= 0 {
			h.EntitlementDN = p.ges[ge].rec.DN
		}
		h.DN = p.dit.HomeSite(dn, h.EntitlementDN)
		return emit(h.DN, h.Attrs())
	})
}

// eachHomeSite hands out the home-site rows (principal, entitlement or -1
// for a global row, site): about two fifths of the rows as overrides of the
// entitlements that use home sites (their member groups and users, so
// that every override's principal is entitled), the rest as global rows of
// teams and users. Two teams side by side (0 and 1, 2 and 3, ...; and
// adjacent teams of one entitlement) get different sites, so the users in
// both have a group conflict at the same level.
func (p *plan) eachHomeSite(fn func(principal member, ge, site int) error) error {
	r := newRng(p.cfg.Seed, "home-sites")
	total, sites := p.cfg.HomeSites, len(p.sites)
	g := p.groups
	written := 0
	row := func(principal member, ge int, site int) error {
		if err := fn(principal, ge, site); err != nil {
			return err
		}
		written++
		return nil
	}
	// differentFrom returns a random site other than prev (when there are
	// two sites or more).
	differentFrom := func(prev int) int {
		if sites < 2 || prev < 0 {
			return r.intn(sites)
		}
		return (prev + 1 + r.intn(sites-1)) % sites
	}
	adjacentTeams := func(a, b member) bool {
		return a.group && b.group && a.index < g.n[0] && b.index == a.index+1
	}

	var homeGEs []int
	for e, ge := range p.ges {
		if ge.rec.UseHomeSite && len(ge.members) > 0 {
			homeGEs = append(homeGEs, e)
		}
	}
	if len(homeGEs) > 0 {
		target := total * 2 / 5
		done := map[string]bool{}
		memberSite := map[[2]int]int{}
		// First an override for each member of the entitlements that
		// require a home site (plan: they fit in target).
		for _, e := range homeGEs {
			if !p.ges[e].rec.RequireHomeSite {
				continue
			}
			for slot, principal := range p.ges[e].members {
				site := r.intn(sites)
				memberSite[[2]int{e, slot}] = site
				done[fmt.Sprint(principal, e)] = true
				if err := row(principal, e, site); err != nil {
					return err
				}
			}
		}
		for k := 0; written < target && k < 4*target; k++ {
			e := homeGEs[k%len(homeGEs)]
			slot := k / len(homeGEs)
			members := p.ges[e].members
			var principal member
			site := r.intn(sites)
			if slot < len(members) {
				principal = members[slot]
				if slot > 0 && adjacentTeams(members[slot-1], principal) {
					site = differentFrom(memberSite[[2]int{e, slot - 1}])
				}
				memberSite[[2]int{e, slot}] = site
			} else {
				m := pick(r, members)
				principal = member{index: p.userOf(m, r.intn(p.usersOf(m)))}
			}
			key := fmt.Sprint(principal, e)
			if done[key] {
				continue
			}
			done[key] = true
			if err := row(principal, e, site); err != nil {
				return err
			}
		}
	}
	// Global rows: teams and users in turn, then the other groups. Each
	// principal comes once, so there are enough of them (Validate: at most
	// users + groups rows).
	n0, users := g.n[0], p.cfg.Users
	stride := coprimeStride(users)
	prevTeam := -1
	for t := 0; written < total && t < max(n0, users); t++ {
		if t < n0 {
			site := r.intn(sites)
			if t%2 == 1 {
				site = differentFrom(prevTeam)
			}
			prevTeam = site
			if err := row(member{group: true, index: t}, -1, site); err != nil {
				return err
			}
		}
		if t < users && written < total {
			if err := row(member{index: t * stride % users}, -1, r.intn(sites)); err != nil {
				return err
			}
		}
	}
	for idx := n0; written < total && idx < g.total(); idx++ {
		if err := row(member{group: true, index: idx}, -1, r.intn(sites)); err != nil {
			return err
		}
	}
	return nil
}

func (p *plan) writeAssignments(emit Emit) error {
	for a := 0; a < p.cfg.Assignments; a++ {
		as := p.assignmentOf(a)
		userDN, geDN := p.userDN(as.user), p.ges[as.ge].rec.DN
		rec := ldapschema.Assignment{DN: p.dit.Assignment(userDN, geDN), UserDN: userDN, EntitlementDN: geDN,
			PodDN: p.pods[p.poolAt[as.pool].pod].DN, Machine: as.machine}
		if err := emit(rec.DN, rec.Attrs()); err != nil {
			return err
		}
	}
	return nil
}

// sessionPlan is one session, as indexes: user, entitlement, pool, host
// of the pool's farm (-1 for none), hosting and brokering pod, client
// computer (-1 for none), the pod assignment of a dedicated user's session
// (-1 for none).
type sessionPlan struct {
	user, ge, pool, host, pod, brokering, client, assignment int
	connected                                                bool
}

// sessionID is session k's ID.
func (p *plan) sessionID(k int) string { return numbered("session-", k+1, width(p.cfg.Sessions+1)) }

// writeSessions writes the sessions of eachSession.
func (p *plan) writeSessions(emit Emit) error {
	return p.eachSession(func(k int, sp sessionPlan) error {
		rec := p.ges[sp.ge].rec
		s := ldapschema.Session{ID: p.sessionID(k), UserDN: p.userDN(sp.user), EntitlementDN: rec.DN,
			PodDN: p.pods[sp.pod].DN, PoolDN: p.pools[sp.pool].DN,
			BrokeringPodDN: p.pods[sp.brokering].DN, State: ldapschema.StateConnected}
		if sp.client >= 0 {
			s.ClientDN = p.computer(sp.client).DN
		}
		if sp.host >= 0 {
			_, s.HostDN = p.host(p.poolAt[sp.pool].farm, sp.host)
		}
		if !sp.connected {
			s.State = ldapschema.StateDisconnected
		}
		s.DN = p.dit.Session(s.ID)
		return emit(s.DN, s.Attrs())
	})
}

// eachSession hands out the sessions in order: first those of dedicated
// users, one per pod assignment in a scattered order, on the assigned pod;
// then sessions of users of floating and application entitlements, each
// on one of its entitlement's pools (and, on a farm-backed pool, one of the
// farm's hosts), brokered by a pod the entitlement's scope allows.
func (p *plan) eachSession(fn func(k int, sp sessionPlan) error) error {
	r := newRng(p.cfg.Seed, "sessions")
	n := p.cfg.Sessions
	dedicated := p.dedicatedSessions()
	stride := coprimeStride(p.cfg.Assignments)
	for k := 0; k < n; k++ {
		sp := sessionPlan{host: -1, assignment: -1}
		if k < dedicated {
			sp.assignment = k * stride % p.cfg.Assignments
			as := p.assignmentOf(sp.assignment)
			sp.user, sp.ge, sp.pool = as.user, as.ge, as.pool
		} else {
			sp.ge = pick(r, p.sessionGEs)
			m := pick(r, p.ges[sp.ge].members)
			sp.user = p.userOf(m, r.intn(p.usersOf(m)))
			sp.pool = pick(r, p.ges[sp.ge].pools)
			if f := p.poolAt[sp.pool].farm; f >= 0 {
				sp.host = r.intn(p.hostsOf(f))
			}
		}
		rec := p.ges[sp.ge].rec
		sp.pod = p.poolAt[sp.pool].pod
		sp.brokering = p.brokeringPod(r, rec.Scope, sp.pod)
		sp.client = p.clientOf(r, rec, sp.user)
		sp.connected = !r.percent(25)
		if err := fn(k, sp); err != nil {
			return err
		}
	}
	return nil
}

// brokeringPod picks the pod whose Connection Server brokered a session
// hosted on pod: that pod under scope LOCAL, an online pod of its site
// under SITE, any online pod under ANY.
func (p *plan) brokeringPod(r *rng, scope string, pod int) int {
	switch scope {
	case ldapschema.ScopeLocal:
		return pod
	case ldapschema.ScopeSite:
		if on := p.siteOn[p.podOf[pod]]; len(on) > 0 {
			return pick(r, on)
		}
		return pod
	}
	return pick(r, p.online)
}

// clientOf returns the client computer of a session (-1 for none): always
// one for entitlements that count sessions per device or restrict clients,
// otherwise for about a third of the sessions; the computer of the user's
// team when it has one (so that it is in an entitled group), else any.
func (p *plan) clientOf(r *rng, ge ldapschema.Entitlement, user int) int {
	c := p.cfg.Computers
	if c == 0 || !(ge.MultipleSessionsPerUser || ge.ClientRestrictions || r.percent(30)) {
		return -1
	}
	if n0 := p.groups.n[0]; n0 > 0 && user%n0 < c {
		return user % n0
	}
	return r.intn(c)
}
