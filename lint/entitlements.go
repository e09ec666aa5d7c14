package lint

// The rules on entitlements: backups, options, members and pools, and
// whether entitled users can reach a pool.

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cpactl/cpactl/internal/fold"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/membership"
	"github.com/cpactl/cpactl/quote"
	"github.com/cpactl/cpactl/rules"
)

// backups checks each backup reference against the backup rules
// (rules.Backup, shared with `entitlement update --backup`): O(E), one pass
// to index who names whom, one to check.
func (l *linter) backups() {
	backupOf := map[string][]string{} // normalized backup DN -> primary names
	for _, ge := range l.d.Entitlements {
		if ge.BackupDN != "" {
			k := l.key(ge.BackupDN)
			backupOf[k] = append(backupOf[k], ge.Name)
		}
	}
	for _, ge := range l.d.Entitlements {
		if ge.BackupDN == "" {
			continue
		}
		fix := "cpactl entitlement update " + quote.Shell(ge.Name) + " --no-backup"
		key, ok := l.ref(objkind.Entitlement, ge.Name, fix, ldapschema.AttrBackupEntitlementDN, ge.BackupDN, objkind.Entitlement)
		if !ok {
			continue
		}
		i, ok := l.geOf[key]
		if !ok {
			continue
		}
		users := backupOf[l.key(ge.DN)]
		sortFold(users)
		for _, v := range rules.Backup(ge, l.d.Entitlements[i], users) {
			l.add(objkind.Entitlement, ge.Name, v.Check, v.Message, fix)
		}
	}
}

// entitlements checks each entitlement's options, members and pools, and
// reports pools held by several: O(E + Σ members + Σ pools, + the pools'
// entitlement lists sorted), each member and pool DN normalized once; then
// reachable for each.
func (l *linter) entitlements() {
	poolGEs := map[string][]string{} // normalized pool DN -> GE names
	var poolKeys []string
	for i, ge := range l.d.Entitlements {
		update := "cpactl entitlement update " + quote.Shell(ge.Name)
		for _, v := range rules.Entitlement(ge) {
			l.addViolation(objkind.Entitlement, ge.Name, update, v)
		}
		for _, m := range ge.Members {
			l.ref(objkind.Entitlement, ge.Name, memberFix(ge.Name, m), ldapschema.AttrMember, m, objkind.User, objkind.Group)
		}
		poolKeys = poolKeys[:0]
		for _, dn := range ge.PoolDNs {
			key := l.key(dn)
			poolKeys = append(poolKeys, key)
			fix := fmt.Sprintf("cpactl entitlement remove-pool %s %s", quote.Shell(ge.Name), quote.Shell(ldapschema.NameOf(dn)))
			if !l.refKey(objkind.Entitlement, ge.Name, fix, ldapschema.AttrEntitlementPoolDN, dn, key, objkind.Pool) {
				continue
			}
			poolGEs[key] = append(poolGEs[key], ge.Name)
			if p, ok := l.poolOf[key]; ok {
				if v := rules.PoolFits(ge, l.d.Pools[p]); v != nil {
					l.add(objkind.Entitlement, ge.Name, v.Check, v.Message, fix)
				}
			}
		}
		l.reachable(i, poolKeys)
	}
	for key, ges := range poolGEs {
		if len(ges) < 2 {
			continue
		}
		sortFold(ges)
		name := l.objects[key].name
		v := rules.PoolOwners(name, ges)
		var fixes []string
		for _, g := range ges[1:] {
			fixes = append(fixes, fmt.Sprintf("cpactl entitlement remove-pool %s %s", quote.Shell(g), quote.Shell(name)))
		}
		l.add(objkind.Pool, name, v.Check, v.Message, "keep one: "+strings.Join(fixes, "; "))
	}
}

// sortFold sorts names ignoring case, each lowered once; sort.Slice with
// the same comparisons as before keeps ties where they were.
func sortFold(names []string) {
	type keyed struct{ lower, name string }
	ks := make([]keyed, len(names))
	for i, n := range names {
		ks[i] = keyed{strings.ToLower(n), n}
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i].lower < ks[j].lower })
	for i := range ks {
		names[i] = ks[i].name
	}
}

func memberFix(ge, dn string) string {
	return fmt.Sprintf("cpactl entitlement remove-member %s --%s %s", quote.Shell(ge), memberFlag(dn), quote.Shell(ldapschema.NameOf(dn)))
}

// memberFlag guesses the remove-member flag from a member DN's RDN.
func memberFlag(dn string) string {
	if strings.HasPrefix(strings.ToLower(dn), ldapschema.AttrUID+"=") {
		return "user"
	}
	return "group"
}

// unusable says why pool p (the pool at index i) of ge can take no session
// ("" when it can): O(1), the pod, farm and hosts looked up.
func (l *linter) unusable(ge ldapschema.Entitlement, i int) string {
	p := l.d.Pools[i]
	if rules.PoolFits(ge, p) != nil {
		return fmt.Sprintf("%s does not fit the entitlement", p.Name)
	}
	if !p.Enabled {
		return fmt.Sprintf("%s is disabled", p.Name)
	}
	if pod, offline := l.offlinePod[fold.Key(p.Pod)]; offline {
		return fmt.Sprintf("%s's pod %s is offline", p.Name, pod)
	}
	if p.Kind == ldapschema.KindDesktop {
		if p.Capacity <= 0 {
			return fmt.Sprintf("%s has capacity 0", p.Name)
		}
		return ""
	}
	fi, ok := l.farmOf[l.poolFarm[i]]
	if !ok {
		return fmt.Sprintf("%s has no farm", p.Name)
	}
	if f := l.d.Farms[fi]; l.enabledHost[farmKey{fold.Key(f.Name), fold.Key(f.Pod)}] {
		return ""
	}
	return fmt.Sprintf("%s's farm %s has no enabled host", p.Name, l.d.Farms[fi].Name)
}

// reachable reports an enabled entitlement (the one at index i, with the
// normalized DNs of its pools) whose entitled users cannot reach any pool:
// it has none, none can take a session, or its Connection Server
// restriction tags match no Connection Server.
//
// Cost: O(P_ge + T_ge) for its pools and tags, looked up; and, only for an
// entitlement it reports, the union of what its k members hold,
// O(k·w) with w = ⌈U/64⌉ words for U users. What each group holds is
// computed once, when first reached (membership.Tally): O(U + M + (G +
// M_g)·w) at most, for G groups, M memberships and the M_g of them that
// nest a group in a group. Over the whole federation: O(Σ pools + Σ tags
// + U + M + (G + M_g + Σ members)·w) at worst, and no walk of the groups
// when no entitlement is reported. At the CPA maximum w is 782.
func (l *linter) reachable(i int, poolKeys []string) {
	ge := l.d.Entitlements[i]
	if !ge.Enabled {
		return
	}
	var why []string
	fix := fmt.Sprintf("cpactl entitlement add-pool %s POOL", quote.Shell(ge.Name))
	usable := 0
	for k, dn := range ge.PoolDNs {
		p, ok := l.poolOf[poolKeys[k]]
		if !ok {
			why = append(why, ldapschema.NameOf(dn)+" does not exist")
			continue
		}
		if reason := l.unusable(ge, p); reason != "" {
			why = append(why, reason)
			continue
		}
		usable++
	}
	switch {
	case len(ge.PoolDNs) == 0:
		why = []string{"the entitlement has no pools"}
	case usable > 0:
		why = nil
	default:
		fix += ", or make one of its pools usable (enable it, give it capacity or enabled hosts, bring its pod online)"
	}
	if len(ge.Tags) > 0 && !l.anyServerWithTag(ge.Tags) {
		why = append(why, fmt.Sprintf("its restriction tags (%s) match no connection server", strings.Join(ge.Tags, ", ")))
		if usable > 0 {
			fix = fmt.Sprintf("cpactl entitlement update %s --no-tags, or tag a connection server", quote.Shell(ge.Name))
		}
	}
	if len(why) == 0 {
		return
	}
	first, total := l.entitledUsers(i, 5)
	if total == 0 {
		return
	}
	l.add(objkind.Entitlement, ge.Name, CheckEntitledUsersWithoutPool,
		fmt.Sprintf("%d entitled user(s) cannot reach any pool (%s): %s", total, listSome(first, total), strings.Join(why, "; ")), fix)
}

// entitledUsers counts the users entitled to the entitlement at index i,
// directly or through nested groups, and returns the uids of the first n of
// them in the order of d.Users (a user listed twice counts twice), from the
// union of what its members hold (membership.Tally).
func (l *linter) entitledUsers(i, n int) (first []string, total int) {
	users := l.userTally().Within(l.memberSet(i))
	for _, u := range users.First(n) {
		first = append(first, l.d.Users[u].UID)
	}
	return first, users.Count()
}

// memberSet returns the members of the entitlement at index i, normalized
// once.
func (l *linter) memberSet(i int) membership.Set {
	s, ok := l.members[i]
	if !ok {
		s = membership.NewSet(l.d.Entitlements[i].Members)
		l.members[i] = s
	}
	return s
}

// anyServerWithTag reports whether a Connection Server holds one of tags:
// O(len(tags)).
func (l *linter) anyServerWithTag(tags []string) bool {
	for _, t := range tags {
		if l.serverTags[fold.Key(t)] {
			return true
		}
	}
	return false
}

// listSome lists the first names of total: "a, b and 3 more".
func listSome(first []string, total int) string {
	if total <= len(first) {
		return strings.Join(first, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(first, ", "), total-len(first))
}

// homeSiteObject describes a home-site row: "user alice" or "group Sales",
// with "for entitlement X" for an override.
func (l *linter) homeSiteObject(h ldapschema.HomeSite) string {
	who := "user " + ldapschema.NameOf(h.UserDN)
	if h.GroupDN != "" {
		who = "group " + ldapschema.NameOf(h.GroupDN)
	}
	if h.EntitlementDN != "" {
		who += " for entitlement " + ldapschema.NameOf(h.EntitlementDN)
	}
	return who
}

// homeSites checks each row's references and that an override's principal
// is entitled to its entitlement: O(H) look-ups, plus for each override
// one walk up from its principal, O(A + M_A) for the A groups it is in and
// their memberships, against the entitlement's members normalized once.
func (l *linter) homeSites() {
	for _, h := range l.d.HomeSites {
		obj := l.homeSiteObject(h)
		principal, flag := h.UserDN, "user"
		if h.GroupDN != "" {
			principal, flag = h.GroupDN, "group"
		}
		unset := fmt.Sprintf("cpactl homesite unset --%s %s", flag, quote.Shell(ldapschema.NameOf(principal)))
		if h.EntitlementDN != "" {
			unset += " --entitlement " + quote.Shell(ldapschema.NameOf(h.EntitlementDN))
		}
		fix := unset + " (or set it again with cpactl homesite set)"
		_, ok := l.ref(objkind.HomeSiteRow, obj, fix, ldapschema.AttrUserDN, h.UserDN, objkind.User)
		_, groupOK := l.ref(objkind.HomeSiteRow, obj, fix, ldapschema.AttrGroupDN, h.GroupDN, objkind.Group)
		_, siteOK := l.ref(objkind.HomeSiteRow, obj, fix, ldapschema.AttrSiteDN, h.SiteDN, objkind.Site)
		geKey, geOK := l.ref(objkind.HomeSiteRow, obj, fix, ldapschema.AttrEntitlementDN, h.EntitlementDN, objkind.Entitlement)
		if !ok || !groupOK || !siteOK || !geOK || h.EntitlementDN == "" {
			continue
		}
		gi := l.geOf[geKey]
		if l.graph.In(principal, l.memberSet(gi)) {
			continue
		}
		ge := l.d.Entitlements[gi]
		l.add(objkind.HomeSiteRow, obj, CheckHomeSiteOverrideNotEntitled,
			fmt.Sprintf("the %s has a home-site override for entitlement %s but is not entitled to it (the row still counts)", flag, ge.Name),
			fmt.Sprintf("cpactl entitlement add-member %s --%s %s, or %s",
				quote.Shell(ge.Name), flag, quote.Shell(ldapschema.NameOf(principal)), unset))
	}
}

// groups: O(M) for M memberships.
func (l *linter) groups() {
	for _, g := range l.d.Groups {
		for _, m := range g.Members {
			l.ref(objkind.Group, g.Name, fmt.Sprintf("cpactl group remove-member %s %s", quote.Shell(g.Name), quote.Shell(ldapschema.NameOf(m))),
				ldapschema.AttrMember, m, objkind.User, objkind.Group, objkind.Computer)
		}
	}
}

// sessions: O(S), seven look-ups each.
func (l *linter) sessions() {
	for _, s := range l.d.Sessions {
		fix := "cpactl session end " + quote.Shell(s.ID)
		l.ref(objkind.Session, s.ID, fix, ldapschema.AttrUserDN, s.UserDN, objkind.User)
		l.ref(objkind.Session, s.ID, fix, ldapschema.AttrEntitlementDN, s.EntitlementDN, objkind.Entitlement)
		l.ref(objkind.Session, s.ID, fix, ldapschema.AttrPodDN, s.PodDN, objkind.Pod)
		l.ref(objkind.Session, s.ID, fix, ldapschema.AttrBrokeringPodDN, s.BrokeringPodDN, objkind.Pod)
		l.ref(objkind.Session, s.ID, fix, ldapschema.AttrPoolDN, s.PoolDN, objkind.Pool)
		l.ref(objkind.Session, s.ID, fix, ldapschema.AttrHostDN, s.HostDN, objkind.Host)
		l.ref(objkind.Session, s.ID, fix, ldapschema.AttrClientDN, s.ClientDN, objkind.Computer)
	}
}

// assignments: O(A), three look-ups each.
func (l *linter) assignments() {
	for _, a := range l.d.Assignments {
		obj := ldapschema.NameOf(a.UserDN) + " / " + ldapschema.NameOf(a.EntitlementDN)
		fix := fmt.Sprintf("cpactl assignment delete --user %s --entitlement %s --yes",
			quote.Shell(ldapschema.NameOf(a.UserDN)), quote.Shell(ldapschema.NameOf(a.EntitlementDN)))
		l.ref(objkind.Assignment, obj, fix, ldapschema.AttrUserDN, a.UserDN, objkind.User)
		l.ref(objkind.Assignment, obj, fix, ldapschema.AttrEntitlementDN, a.EntitlementDN, objkind.Entitlement)
		l.ref(objkind.Assignment, obj, fix, ldapschema.AttrPodDN, a.PodDN, objkind.Pod)
	}
}

// userTally counts users within sets of members (membership.Tally over
// d.Users), built when first needed.
func (l *linter) userTally() *membership.Tally {
	if l.tally == nil {
		dns := make([]string, len(l.d.Users))
		for u, x := range l.d.Users {
			dns[u] = x.DN
		}
		l.tally = l.graph.NewTally(dns)
	}
	return l.tally
}

// requiredHomeSites reports an enabled entitlement that uses and requires
// home sites whose entitled users include some without a home site for
// it: no home-site row of theirs or of one of their immediate groups, for
// this entitlement or global, names an existing site. Resolve DENIES each
// of them (check require_home_site): Horizon offers such an entitlement
// only to users with a home site.
//
// Cost: O(H + Σ direct members of the groups with a row) to mark, once,
// the users a row covers (a bit set over the users for the global rows,
// one per entitlement with overrides), after O(U + G) to index users and
// groups by DN; then for each such entitlement the union of its members
// (membership.Tally, as entitled-users-without-pool) and O(w) words to
// take out the covered users. Nothing is walked when no entitlement
// requires a home site.
func (l *linter) requiredHomeSites() {
	var required []int
	for i, ge := range l.d.Entitlements {
		if ge.Enabled && ge.UseHomeSite && ge.RequireHomeSite {
			required = append(required, i)
		}
	}
	if len(required) == 0 {
		return
	}
	userOf := make(map[string]int, len(l.d.Users))
	for u, x := range l.d.Users {
		userOf[l.key(x.DN)] = u
	}
	groupOf := make(map[string]int, len(l.d.Groups))
	for g, x := range l.d.Groups {
		groupOf[l.key(x.DN)] = g
	}
	words := (len(l.d.Users) + 63) / 64
	global := make(membership.Bits, words)
	byGE := map[string]membership.Bits{} // normalized GE DN -> users its overrides cover
	for _, h := range l.d.HomeSites {
		if o := l.objects[l.key(h.SiteDN)]; o == nil || o.kind != objkind.Site {
			continue // a row naming no site loses (as resolve's)
		}
		covered := global
		if h.EntitlementDN != "" {
			k := l.key(h.EntitlementDN)
			if covered = byGE[k]; covered == nil {
				covered = make(membership.Bits, words)
				byGE[k] = covered
			}
		}
		switch {
		case h.UserDN != "":
			if u, ok := userOf[l.key(h.UserDN)]; ok {
				covered.Add(u)
			}
		case h.GroupDN != "":
			g, ok := groupOf[l.key(h.GroupDN)]
			if !ok {
				continue
			}
			for _, m := range l.d.Groups[g].Members {
				if u, ok := userOf[l.key(m)]; ok {
					covered.Add(u)
				}
			}
		}
	}
	for _, i := range required {
		ge := l.d.Entitlements[i]
		users := l.userTally().Within(l.memberSet(i))
		users.AndNot(global)
		users.AndNot(byGE[l.key(ge.DN)])
		total := users.Count()
		if total == 0 {
			continue
		}
		var first []string
		for _, u := range users.First(5) {
			first = append(first, l.d.Users[u].UID)
		}
		l.add(objkind.Entitlement, ge.Name, CheckEntitledUsersWithoutHome,
			fmt.Sprintf("%d entitled user(s) have no home site, and the entitlement requires one: resolve denies them (%s)",
				total, listSome(first, total)),
			fmt.Sprintf("cpactl homesite set --user USER (or --group GROUP) --site SITE, or cpactl entitlement update %s --no-require-home-site",
				quote.Shell(ge.Name)))
	}
}

// clientRestrictions reports an enabled entitlement with client
// restrictions (which apply to floating desktop and application
// entitlements) and entitled users, but no client computer in a group
// entitled to it: resolve DENIES every request (check
// client_restrictions), whatever the client.
//
// Cost: O(E) to find them; for each, the union of its members over the
// computers and over the users (membership.Tally, O(k·w) each).
func (l *linter) clientRestrictions() {
	var computers *membership.Tally
	for i, ge := range l.d.Entitlements {
		applies := (ge.Type == ldapschema.TypeDesktop && !ge.Dedicated) || ge.Type == ldapschema.TypeApplication
		if !ge.Enabled || !ge.ClientRestrictions || !applies {
			continue
		}
		if computers == nil {
			dns := make([]string, len(l.d.Computers))
			for c, x := range l.d.Computers {
				dns[c] = x.DN
			}
			computers = l.graph.NewTally(dns)
		}
		if computers.Within(l.memberSet(i)).Count() > 0 {
			continue
		}
		first, total := l.entitledUsers(i, 5)
		if total == 0 {
			continue
		}
		l.add(objkind.Entitlement, ge.Name, CheckClientRestrictionsNoClient,
			fmt.Sprintf("%d entitled user(s) are refused on every client: the entitlement has client restrictions and no client computer is in a group entitled to it (%s)",
				total, listSome(first, total)),
			fmt.Sprintf("cpactl group add-member GROUP computer:NAME for a group entitled to %s, or cpactl entitlement update %s --no-client-restrictions",
				quote.Shell(ge.Name), quote.Shell(ge.Name)))
	}
}
