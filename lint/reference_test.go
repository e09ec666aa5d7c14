package lint

// The lint of commit 4f8a022, kept verbatim but for its names.

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

// referenceRun is Run as it was before its indexes: the reference the
// findings and their order must match.
func referenceRun(d Data) []Finding {
	l := &refLinter{d: d, dns: map[string]string{}, names: map[string]string{}, poolOf: map[string]ldapschema.Pool{},
		farmOf: map[string]ldapschema.Farm{}, geOf: map[string]ldapschema.Entitlement{}}
	l.index()
	l.unreadable()
	l.duplicates()
	l.settings()
	l.sites()
	l.pods()
	l.pools()
	l.farmsAndHosts()
	l.entitlements()
	l.homeSites()
	l.groups()
	l.sessions()
	l.assignments()
	sort.SliceStable(l.out, func(i, j int) bool {
		a, b := l.out[i], l.out[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if x, y := strings.ToLower(a.Object), strings.ToLower(b.Object); x != y {
			return x < y
		}
		if a.Check != b.Check {
			return a.Check < b.Check
		}
		return a.Message < b.Message
	})
	return l.out
}

type refLinter struct {
	d      Data
	dns    map[string]string // normalized DN -> kind
	names  map[string]string // normalized DN -> name
	poolOf map[string]ldapschema.Pool
	farmOf map[string]ldapschema.Farm
	geOf   map[string]ldapschema.Entitlement
	graph  *membership.Graph
	out    []Finding
}

func (l *refLinter) add(kind, object, check, message, fix string) {
	l.out = append(l.out, Finding{Object: object, Kind: kind, Check: check, Message: message, Fix: fix})
}

func (l *refLinter) addViolation(kind, object, updateCmd string, v rules.Violation) {
	fix := v.Hint
	if len(v.Fixes) > 0 {
		fix = updateCmd + " " + strings.Join(v.Fixes, ", or ")
	}
	l.add(kind, object, v.Check, v.Message, fix)
}

func (l *refLinter) index() {
	put := func(kind, dn, name string) {
		key := ldapschema.NormalizeDN(dn)
		l.dns[key] = kind
		l.names[key] = name
	}
	for _, x := range l.d.Sites {
		put(objkind.Site, x.DN, x.Name)
	}
	for _, x := range l.d.Pods {
		put(objkind.Pod, x.DN, x.Name)
	}
	for _, x := range l.d.ConnectionServers {
		put(objkind.ConnectionServer, x.DN, x.Name)
	}
	for _, x := range l.d.Pools {
		put(objkind.Pool, x.DN, x.Name)
		l.poolOf[ldapschema.NormalizeDN(x.DN)] = x
	}
	for _, x := range l.d.Farms {
		put(objkind.Farm, x.DN, x.Name)
		l.farmOf[ldapschema.NormalizeDN(x.DN)] = x
	}
	for _, x := range l.d.Hosts {
		put(objkind.Host, x.DN, x.Name)
	}
	for _, x := range l.d.Entitlements {
		put(objkind.Entitlement, x.DN, x.Name)
		l.geOf[ldapschema.NormalizeDN(x.DN)] = x
	}
	for _, x := range l.d.Users {
		put(objkind.User, x.DN, x.UID)
	}
	for _, x := range l.d.Groups {
		put(objkind.Group, x.DN, x.Name)
	}
	for _, x := range l.d.Computers {
		put(objkind.Computer, x.DN, x.Name)
	}
	l.graph = membership.New(l.d.Groups)
}

// ref checks that dn names an object of one of the kinds; it reports a
// dangling reference otherwise. An empty dn is not checked.
func (l *refLinter) ref(kind, object, fix, attr, dn string, want ...string) bool {
	if dn == "" {
		return true
	}
	got, ok := l.dns[ldapschema.NormalizeDN(dn)]
	if ok && fold.Contains(want, got) {
		return true
	}
	what := strings.Join(want, " or ")
	msg := fmt.Sprintf("%s names %s %q, which does not exist (%s)", attr, what, ldapschema.NameOf(dn), dn)
	if ok {
		msg = fmt.Sprintf("%s names %q, which is a %s, not a %s (%s)", attr, ldapschema.NameOf(dn), got, what, dn)
	}
	l.add(kind, object, CheckDangling, msg, fix)
	return false
}

func (l *refLinter) unreadable() {
	for _, u := range l.d.Unreadable {
		kind := objkind.Entry
		name := ldapschema.NameOf(u.DN)
		if k, ok := l.dns[ldapschema.NormalizeDN(u.DN)]; ok {
			kind = k
		}
		l.add(kind, name, CheckUnreadable, u.Reason,
			"correct the value (ldapmodify), or rewrite the object with its cpactl update command")
	}
}

// duplicates reports names used twice where names must be unique across
// the federation (pods, Connection Servers, pools, farms, RDS hosts).
func (l *refLinter) duplicates() {
	type named struct{ name, where string }
	check := func(kind string, items []named) {
		by := map[string][]named{}
		for _, it := range items {
			k := strings.ToLower(it.name)
			by[k] = append(by[k], it)
		}
		for _, group := range by {
			if len(group) < 2 {
				continue
			}
			var wheres []string
			for _, it := range group {
				wheres = append(wheres, it.where)
			}
			sort.Strings(wheres)
			l.add(kind, group[0].name, CheckDuplicateName,
				fmt.Sprintf("%d %ss are named %q (%s): names must be unique across the federation, and cpactl refuses to pick one",
					len(group), kind, group[0].name, strings.Join(wheres, "; ")),
				"delete all but one and create the others again under new names")
		}
	}
	var items []named
	for _, x := range l.d.Pools {
		items = append(items, named{x.Name, x.DN})
	}
	check(objkind.Pool, items)
	items = nil
	for _, x := range l.d.Farms {
		items = append(items, named{x.Name, x.DN})
	}
	check(objkind.Farm, items)
	items = nil
	for _, x := range l.d.Hosts {
		items = append(items, named{x.Name, x.DN})
	}
	check(objkind.Host, items)
	items = nil
	for _, x := range l.d.ConnectionServers {
		items = append(items, named{x.Name, x.DN})
	}
	check(objkind.ConnectionServer, items)
}

func (l *refLinter) settings() {
	for _, set := range ldapschema.Settings {
		v, _ := l.d.Settings.Value(set)
		if err := set.Check(v); err != nil {
			l.add(objkind.Settings, set.Attr, CheckOutOfRange, err.Error(),
				fmt.Sprintf("cpactl settings set %s=VALUE (%s), or cpactl settings reset %s", set.Attr, set.Range(), set.Attr))
		}
	}
}

func (l *refLinter) sites() {
	siteNames := map[string]bool{}
	for _, s := range l.d.Sites {
		siteNames[strings.ToLower(s.Name)] = true
	}
	for _, s := range l.d.Sites {
		fix := fmt.Sprintf("rewrite the list: cpactl site preferred %s --set SITE,... (or --clear)", quote.Shell(s.Name))
		list, _ := ldapschema.DecodePreferredSites(s.PreferredRaw)
		if list.Gaps {
			var ranks []string
			for _, r := range list.Sites {
				ranks = append(ranks, fmt.Sprintf("{%d}%s", r.Rank, r.Name))
			}
			l.add(objkind.Site, s.Name, CheckPreferredRanks,
				fmt.Sprintf("preferred-site ranks are not 0..%d without gaps: %s", len(list.Sites)-1, strings.Join(ranks, " ")), fix)
		}
		seen := map[string]bool{}
		for _, r := range list.Sites {
			k := strings.ToLower(r.Name)
			switch {
			case strings.EqualFold(r.Name, s.Name):
				l.add(objkind.Site, s.Name, CheckPreferredSelf,
					fmt.Sprintf("the preferred-site list names the site itself (rank %d)", r.Rank), fix)
			case !siteNames[k]:
				l.add(objkind.Site, s.Name, CheckPreferredMissing,
					fmt.Sprintf("preferred site %q (rank %d) does not exist", r.Name, r.Rank), fix)
			}
			if seen[k] {
				l.add(objkind.Site, s.Name, CheckPreferredDuplicate,
					fmt.Sprintf("preferred site %q is listed more than once", r.Name), fix)
			}
			seen[k] = true
		}
	}
}

func (l *refLinter) pods() {
	for _, p := range l.d.Pods {
		l.ref(objkind.Pod, p.Name, fmt.Sprintf("cpactl pod update %s --site SITE", quote.Shell(p.Name)),
			ldapschema.AttrSiteDN, p.SiteDN, objkind.Site)
	}
}

func (l *refLinter) farmByDN(dn string) (ldapschema.Farm, bool) {
	f, ok := l.farmOf[ldapschema.NormalizeDN(dn)]
	return f, ok
}

func (l *refLinter) pools() {
	for _, p := range l.d.Pools {
		update := "cpactl pool update " + quote.Shell(p.Name)
		for _, v := range rules.Pool(p) {
			l.addViolation(objkind.Pool, p.Name, update, v)
		}
		if p.Kind == ldapschema.KindDesktop {
			continue
		}
		if p.FarmDN == "" {
			l.add(objkind.Pool, p.Name, CheckDangling, "the farm-backed pool names no farm", update+" --farm FARM")
			continue
		}
		if !l.ref(objkind.Pool, p.Name, update+" --farm FARM", ldapschema.AttrFarmDN, p.FarmDN, objkind.Farm) {
			continue
		}
		if f, ok := l.farmByDN(p.FarmDN); ok {
			if v := rules.FarmFits(p, f); v != nil {
				l.add(objkind.Pool, p.Name, v.Check, v.Message, update+" --farm FARM (a farm of pod "+quote.Shell(p.Pod)+")")
			}
		}
	}
}

func (l *refLinter) farmsAndHosts() {
	for _, f := range l.d.Farms {
		for _, v := range rules.Farm(f) {
			l.addViolation(objkind.Farm, f.Name, "cpactl farm update "+quote.Shell(f.Name), v)
		}
	}
	for _, h := range l.d.Hosts {
		for _, v := range rules.Host(h) {
			l.addViolation(objkind.Host, h.Name, "cpactl host update "+quote.Shell(h.Name), v)
		}
	}
}

func (l *refLinter) entitlements() {
	poolGEs := map[string][]string{} // normalized pool DN -> GE names
	for _, ge := range l.d.Entitlements {
		update := "cpactl entitlement update " + quote.Shell(ge.Name)
		for _, v := range rules.Entitlement(ge) {
			l.addViolation(objkind.Entitlement, ge.Name, update, v)
		}
		for _, m := range ge.Members {
			l.ref(objkind.Entitlement, ge.Name, refMemberFix(ge.Name, m), ldapschema.AttrMember, m, objkind.User, objkind.Group)
		}
		for _, dn := range ge.PoolDNs {
			fix := fmt.Sprintf("cpactl entitlement remove-pool %s %s", quote.Shell(ge.Name), quote.Shell(ldapschema.NameOf(dn)))
			if !l.ref(objkind.Entitlement, ge.Name, fix, ldapschema.AttrEntitlementPoolDN, dn, objkind.Pool) {
				continue
			}
			key := ldapschema.NormalizeDN(dn)
			poolGEs[key] = append(poolGEs[key], ge.Name)
			if p, ok := l.poolByDN(dn); ok {
				if v := rules.PoolFits(ge, p); v != nil {
					l.add(objkind.Entitlement, ge.Name, v.Check, v.Message, fix)
				}
			}
		}
		l.reachable(ge)
	}
	for key, ges := range poolGEs {
		if len(ges) < 2 {
			continue
		}
		sort.Slice(ges, func(i, j int) bool { return strings.ToLower(ges[i]) < strings.ToLower(ges[j]) })
		name := l.names[key]
		var fixes []string
		for _, g := range ges[1:] {
			fixes = append(fixes, fmt.Sprintf("cpactl entitlement remove-pool %s %s", quote.Shell(g), quote.Shell(name)))
		}
		l.add(objkind.Pool, name, CheckPoolInTwoEntitlements,
			fmt.Sprintf("pool %s is in %d entitlements (%s): a pool belongs to at most one", name, len(ges), strings.Join(ges, ", ")),
			"keep one: "+strings.Join(fixes, "; "))
	}
}

func refMemberFix(ge, dn string) string {
	return fmt.Sprintf("cpactl entitlement remove-member %s --%s %s", quote.Shell(ge), refMemberFlag(dn), quote.Shell(ldapschema.NameOf(dn)))
}

// refMemberFlag guesses the remove-member flag from a member DN's RDN.
func refMemberFlag(dn string) string {
	if strings.HasPrefix(strings.ToLower(dn), ldapschema.AttrUID+"=") {
		return "user"
	}
	return "group"
}

func (l *refLinter) poolByDN(dn string) (ldapschema.Pool, bool) {
	p, ok := l.poolOf[ldapschema.NormalizeDN(dn)]
	return p, ok
}

// usable says why a pool of ge can take no session ("" when it can).
func (l *refLinter) unusable(ge ldapschema.Entitlement, p ldapschema.Pool) string {
	if rules.PoolFits(ge, p) != nil {
		return fmt.Sprintf("%s does not fit the entitlement", p.Name)
	}
	if !p.Enabled {
		return fmt.Sprintf("%s is disabled", p.Name)
	}
	for _, pod := range l.d.Pods {
		if strings.EqualFold(pod.Name, p.Pod) && !pod.Online {
			return fmt.Sprintf("%s's pod %s is offline", p.Name, pod.Name)
		}
	}
	if p.Kind == ldapschema.KindDesktop {
		if p.Capacity <= 0 {
			return fmt.Sprintf("%s has capacity 0", p.Name)
		}
		return ""
	}
	f, ok := l.farmByDN(p.FarmDN)
	if !ok {
		return fmt.Sprintf("%s has no farm", p.Name)
	}
	for _, h := range l.d.Hosts {
		if h.Enabled && strings.EqualFold(h.Farm, f.Name) && strings.EqualFold(h.Pod, f.Pod) {
			return ""
		}
	}
	return fmt.Sprintf("%s's farm %s has no enabled host", p.Name, f.Name)
}

// reachable reports an enabled entitlement whose entitled users cannot
// reach any pool: it has none, none can take a session, or its
// Connection Server restriction tags match no Connection Server.
func (l *refLinter) reachable(ge ldapschema.Entitlement) {
	if !ge.Enabled {
		return
	}
	var users []string
	for _, u := range l.d.Users {
		if _, ok := l.graph.MemberOf(u.DN, ge.Members); ok {
			users = append(users, u.UID)
		}
	}
	if len(users) == 0 {
		return
	}
	var why []string
	fix := fmt.Sprintf("cpactl entitlement add-pool %s POOL", quote.Shell(ge.Name))
	usable := 0
	for _, dn := range ge.PoolDNs {
		p, ok := l.poolByDN(dn)
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
	l.add(objkind.Entitlement, ge.Name, CheckEntitledUsersWithoutPool,
		fmt.Sprintf("%d entitled user(s) cannot reach any pool (%s): %s", len(users), refListSome(users, 5), strings.Join(why, "; ")), fix)
}

func (l *refLinter) anyServerWithTag(tags []string) bool {
	for _, cs := range l.d.ConnectionServers {
		for _, t := range cs.Tags {
			if fold.Contains(tags, t) {
				return true
			}
		}
	}
	return false
}

func refListSome(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// homeSiteObject describes a home-site row: "user alice" or "group Sales",
// with "for entitlement X" for an override.
func (l *refLinter) homeSiteObject(h ldapschema.HomeSite) string {
	who := "user " + ldapschema.NameOf(h.UserDN)
	if h.GroupDN != "" {
		who = "group " + ldapschema.NameOf(h.GroupDN)
	}
	if h.EntitlementDN != "" {
		who += " for entitlement " + ldapschema.NameOf(h.EntitlementDN)
	}
	return who
}

func (l *refLinter) homeSites() {
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
		ok := l.ref(objkind.HomeSiteRow, obj, fix, ldapschema.AttrUserDN, h.UserDN, objkind.User)
		ok = l.ref(objkind.HomeSiteRow, obj, fix, ldapschema.AttrGroupDN, h.GroupDN, objkind.Group) && ok
		ok = l.ref(objkind.HomeSiteRow, obj, fix, ldapschema.AttrSiteDN, h.SiteDN, objkind.Site) && ok
		geOK := l.ref(objkind.HomeSiteRow, obj, fix, ldapschema.AttrEntitlementDN, h.EntitlementDN, objkind.Entitlement)
		if !ok || !geOK || h.EntitlementDN == "" {
			continue
		}
		ge := l.geOf[ldapschema.NormalizeDN(h.EntitlementDN)]
		if _, entitled := l.graph.MemberOf(principal, ge.Members); entitled {
			continue
		}
		l.add(objkind.HomeSiteRow, obj, CheckHomeSiteOverrideNotEntitled,
			fmt.Sprintf("the %s has a home-site override for entitlement %s but is not entitled to it (the row still counts)", flag, ge.Name),
			fmt.Sprintf("cpactl entitlement add-member %s --%s %s, or %s",
				quote.Shell(ge.Name), flag, quote.Shell(ldapschema.NameOf(principal)), unset))
	}
}

func (l *refLinter) groups() {
	for _, g := range l.d.Groups {
		for _, m := range g.Members {
			l.ref(objkind.Group, g.Name, fmt.Sprintf("cpactl group remove-member %s %s", quote.Shell(g.Name), quote.Shell(ldapschema.NameOf(m))),
				ldapschema.AttrMember, m, objkind.User, objkind.Group, objkind.Computer)
		}
	}
}

func (l *refLinter) sessions() {
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

func (l *refLinter) assignments() {
	for _, a := range l.d.Assignments {
		obj := ldapschema.NameOf(a.UserDN) + " / " + ldapschema.NameOf(a.EntitlementDN)
		fix := fmt.Sprintf("cpactl assignment delete --user %s --entitlement %s --yes",
			quote.Shell(ldapschema.NameOf(a.UserDN)), quote.Shell(ldapschema.NameOf(a.EntitlementDN)))
		l.ref(objkind.Assignment, obj, fix, ldapschema.AttrUserDN, a.UserDN, objkind.User)
		l.ref(objkind.Assignment, obj, fix, ldapschema.AttrEntitlementDN, a.EntitlementDN, objkind.Entitlement)
		l.ref(objkind.Assignment, obj, fix, ldapschema.AttrPodDN, a.PodDN, objkind.Pod)
	}
}
