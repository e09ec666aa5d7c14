// Package lint checks a federation's configuration for the mistakes the
// broker would trip over: dangling references, preferred-site lists that
// name missing sites, entitlement options that contradict each other, pools
// that do not fit their entitlement, values out of range, and entitled users
// who cannot reach any pool.
//
// The package is pure: it takes plain records (package ldapschema) and
// returns findings; it imports neither LDAP access nor cobra. The rules on
// one object (an entitlement's options, the ranges, which pools an
// entitlement may hold, a site's preferred sites, capacity) are package
// rules', the same ones the write commands apply before writing, so a
// value a command refuses is a value lint reports.
package lint

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cpactl/cpactl/internal/fold"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/membership"
	"github.com/cpactl/cpactl/quote"
	"github.com/cpactl/cpactl/rules"
)

// Finding classes (the "check" of a finding). They are a stable contract:
// scripts may filter on them. The classes of the rules on one object are
// package rules'.
const (
	CheckUnreadable                  = "unreadable-value"
	CheckDuplicateName               = "duplicate-name"
	CheckDangling                    = "dangling-reference"
	CheckPreferredMissing            = "preferred-site-missing"
	CheckPreferredSelf               = rules.CheckPreferredSelf
	CheckPreferredDuplicate          = rules.CheckPreferredDuplicate
	CheckPreferredRanks              = "preferred-rank-gap"
	CheckIgnoreHighLoadWithoutPolicy = rules.CheckIgnoreHighLoadWithoutPolicy
	CheckIgnoreHighLoadWithoutPrefer = rules.CheckIgnoreHighLoadWithoutPrefer
	CheckPreferredSitesScope         = rules.CheckPreferredSitesScope
	CheckRequireHomeSiteWithoutUse   = rules.CheckRequireHomeSiteWithoutUse
	CheckOptionNotAllowed            = rules.CheckOptionNotAllowed
	CheckPoolInTwoEntitlements       = rules.CheckPoolInTwoEntitlements
	CheckDedicatedFloatingMismatch   = rules.CheckDedicatedFloatingMismatch
	CheckPoolTypeMismatch            = rules.CheckPoolTypeMismatch
	CheckFarmInAnotherPod            = rules.CheckFarmInAnotherPod
	CheckOutOfRange                  = rules.CheckOutOfRange
	CheckEntitledUsersWithoutPool    = "entitled-users-without-pool"
	CheckHomeSiteOverrideNotEntitled = "home-site-override-not-entitled"
	CheckOverCapacity                = rules.CheckOverCapacity
)

// Checks lists every finding class.
var Checks = []string{CheckUnreadable, CheckDuplicateName, CheckDangling, CheckPreferredMissing, CheckPreferredSelf,
	CheckPreferredDuplicate, CheckPreferredRanks, CheckIgnoreHighLoadWithoutPolicy, CheckIgnoreHighLoadWithoutPrefer,
	CheckPreferredSitesScope, CheckRequireHomeSiteWithoutUse, CheckOptionNotAllowed, CheckPoolInTwoEntitlements,
	CheckDedicatedFloatingMismatch, CheckPoolTypeMismatch, CheckFarmInAnotherPod, CheckOutOfRange,
	CheckEntitledUsersWithoutPool, CheckHomeSiteOverrideNotEntitled, CheckOverCapacity,
	rules.CheckBackupPrimaryKind, rules.CheckBackupKind, rules.CheckBackupMembers, rules.CheckBackupProtocol,
	rules.CheckBackupSelf, rules.CheckBackupChain}

// Object kinds as findings name them.
const (
	KindSettings         = "settings"
	KindSite             = "site"
	KindPod              = "pod"
	KindConnectionServer = "connection server"
	KindPool             = "pool"
	KindFarm             = "farm"
	KindHost             = "rds host"
	KindEntitlement      = "entitlement"
	KindHomeSite         = "home site"
	KindUser             = "user"
	KindGroup            = "group"
	KindComputer         = "computer"
	KindSession          = "session"
	KindAssignment       = "assignment"
	KindEntry            = "entry"
)

// Data is everything lint looks at: the records of one federation.
type Data = ldapschema.Records

// Unreadable is an entry whose values did not all decode.
type Unreadable = ldapschema.Unreadable

// Finding is one problem lint found. The JSON field names are a stable
// contract.
type Finding struct {
	Object  string `json:"object"`  // the object's name (or a row's description)
	Kind    string `json:"kind"`    // what the object is: site, pod, pool, entitlement, ...
	Check   string `json:"check"`   // the finding class, one of the Check* constants
	Message string `json:"message"` // what is wrong
	Fix     string `json:"fix"`     // what to do about it
}

// Run checks d and returns its findings sorted by kind, object and check.
//
// It costs O(n log n) for a federation of n records and references: every
// DN is normalized once where it is read, every rule looks up indexes
// (objects by DN, offline pods and enabled hosts by name, Connection Server
// tags) instead of scanning, and the one rule that must walk the nested
// groups (entitled-users-without-pool) walks them only for the
// entitlements it reports. Each rule states its own cost.
func Run(d Data) []Finding {
	l := &linter{d: d}
	l.index()
	l.unreadable()
	l.duplicates()
	l.settings()
	l.sites()
	l.pods()
	l.pools()
	l.farmsAndHosts()
	l.entitlements()
	l.backups()
	l.homeSites()
	l.groups()
	l.sessions()
	l.assignments()
	return sortFindings(l.out)
}

// sortFindings orders findings by kind, object (ignoring case), check and
// message, keeping the order they were found in otherwise: O(F log F), each
// object lower-cased once.
func sortFindings(out []Finding) []Finding {
	type keyed struct {
		object string // lower case
		f      Finding
	}
	ks := make([]keyed, len(out))
	for i, f := range out {
		ks[i] = keyed{strings.ToLower(f.Object), f}
	}
	sort.SliceStable(ks, func(i, j int) bool {
		a, b := &ks[i], &ks[j]
		if a.f.Kind != b.f.Kind {
			return a.f.Kind < b.f.Kind
		}
		if a.object != b.object {
			return a.object < b.object
		}
		if a.f.Check != b.f.Check {
			return a.f.Check < b.f.Check
		}
		return a.f.Message < b.f.Message
	})
	for i := range ks {
		out[i] = ks[i].f
	}
	return out
}

type linter struct {
	d Data
	// objects holds every object by normalized DN (the last of a DN), and
	// spelled the same objects by their DNs as they spell them: a
	// reference spelled as its target needs neither normalizing nor a
	// second look-up.
	objects map[string]*object
	spelled map[string]*object
	poolOf  map[string]int // normalized DN -> index in d.Pools (the last of that DN)
	farmOf  map[string]int // normalized DN -> index in d.Farms (the last of that DN)
	geOf    map[string]int // normalized DN -> index in d.Entitlements (the last of that DN)
	// poolFarm holds the normalized pae-FarmDN of each pool ("" for none).
	poolFarm []string
	// offlinePod maps the fold key of a pod name to the name of the first
	// offline pod so named.
	offlinePod map[string]string
	// enabledHost holds the farms (by fold keys of farm and pod names) with
	// an enabled host.
	enabledHost map[farmKey]bool
	// serverTags holds the fold keys of every Connection Server's tags.
	serverTags map[string]bool
	graph      *membership.Graph
	// tally counts entitled users (built for the first entitlement
	// reported).
	tally *membership.Tally
	// members memoises each entitlement's members as a membership.Set.
	members map[int]membership.Set
	out     []Finding
}

// object is what a reference may name.
type object struct {
	key, kind, name string
}

// farmKey names a farm as hosts name theirs: farm and pod, folded.
type farmKey struct{ farm, pod string }

func (l *linter) add(kind, object, check, message, fix string) {
	l.out = append(l.out, Finding{Object: object, Kind: kind, Check: check, Message: message, Fix: fix})
}

func (l *linter) addViolation(kind, object, updateCmd string, v rules.Violation) {
	fix := v.Hint
	if len(v.Fixes) > 0 {
		fix = updateCmd + " " + strings.Join(v.Fixes, ", or ")
	}
	l.add(kind, object, v.Check, v.Message, fix)
}

// index normalizes the DN of every object once and builds the look-ups the
// rules use: O(n) normalizations and map insertions, O(G + M log M) for the
// membership graph of G groups and M memberships.
func (l *linter) index() {
	d := l.d
	n := len(d.Sites) + len(d.Pods) + len(d.ConnectionServers) + len(d.Pools) + len(d.Farms) + len(d.Hosts) +
		len(d.Entitlements) + len(d.Users) + len(d.Groups) + len(d.Computers)
	l.objects, l.spelled = make(map[string]*object, n), make(map[string]*object, n)
	put := func(kind, dn, name string) string {
		key := ldapschema.NormalizeDN(dn)
		o := l.objects[key]
		if o == nil {
			o = &object{key: key}
			l.objects[key] = o
		}
		o.kind, o.name = kind, name
		l.spelled[dn] = o
		return key
	}
	for _, x := range d.Sites {
		put(KindSite, x.DN, x.Name)
	}
	l.offlinePod = map[string]string{}
	for _, x := range d.Pods {
		put(KindPod, x.DN, x.Name)
		if k := fold.Key(x.Name); !x.Online && l.offlinePod[k] == "" {
			l.offlinePod[k] = x.Name
		}
	}
	l.serverTags = map[string]bool{}
	for _, x := range d.ConnectionServers {
		put(KindConnectionServer, x.DN, x.Name)
		for _, t := range x.Tags {
			l.serverTags[fold.Key(t)] = true
		}
	}
	l.poolOf, l.poolFarm = make(map[string]int, len(d.Pools)), make([]string, len(d.Pools))
	for i, x := range d.Pools {
		l.poolOf[put(KindPool, x.DN, x.Name)] = i
	}
	for i, x := range d.Pools {
		l.poolFarm[i] = l.key(x.FarmDN)
	}
	l.farmOf = make(map[string]int, len(d.Farms))
	for i, x := range d.Farms {
		l.farmOf[put(KindFarm, x.DN, x.Name)] = i
	}
	l.enabledHost = map[farmKey]bool{}
	for _, x := range d.Hosts {
		put(KindHost, x.DN, x.Name)
		if x.Enabled {
			l.enabledHost[farmKey{fold.Key(x.Farm), fold.Key(x.Pod)}] = true
		}
	}
	l.geOf = make(map[string]int, len(d.Entitlements))
	for i, x := range d.Entitlements {
		l.geOf[put(KindEntitlement, x.DN, x.Name)] = i
	}
	for _, x := range d.Users {
		put(KindUser, x.DN, x.UID)
	}
	for _, x := range d.Groups {
		put(KindGroup, x.DN, x.Name)
	}
	for _, x := range d.Computers {
		put(KindComputer, x.DN, x.Name)
	}
	l.graph = membership.New(d.Groups)
	l.members = map[int]membership.Set{}
}

// key returns the normalized form of dn, looked up when dn is spelled as
// the object it names spells its own DN (references usually are).
func (l *linter) key(dn string) string {
	if o := l.spelled[dn]; o != nil {
		return o.key
	}
	return ldapschema.NormalizeDN(dn)
}

// lookup finds the object dn names, if any, and returns dn's normalized
// form.
func (l *linter) lookup(dn string) (string, *object) {
	if o := l.spelled[dn]; o != nil {
		return o.key, o
	}
	key := ldapschema.NormalizeDN(dn)
	return key, l.objects[key]
}

// ref checks that dn names an object of one of the kinds; it reports a
// dangling reference otherwise. An empty dn is not checked. It returns dn's
// normalized form.
func (l *linter) ref(kind, object, fix, attr, dn string, want ...string) (key string, ok bool) {
	if dn == "" {
		return "", true
	}
	key, o := l.lookup(dn)
	return key, l.check(kind, object, fix, attr, dn, o, want...)
}

// refKey is ref for a DN already normalized (key).
func (l *linter) refKey(kind, object, fix, attr, dn, key string, want ...string) bool {
	if dn == "" {
		return true
	}
	return l.check(kind, object, fix, attr, dn, l.objects[key], want...)
}

// check reports a dangling reference unless o (what dn names) is of one of
// the kinds.
func (l *linter) check(kind, object, fix, attr, dn string, o *object, want ...string) bool {
	var got string
	ok := o != nil
	if ok {
		got = o.kind
	}
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

// unreadable: O(U) for U unreadable entries.
func (l *linter) unreadable() {
	for _, u := range l.d.Unreadable {
		kind := KindEntry
		name := ldapschema.NameOf(u.DN)
		if _, o := l.lookup(u.DN); o != nil {
			kind = o.kind
		}
		l.add(kind, name, CheckUnreadable, u.Reason,
			"correct the value (ldapmodify), or rewrite the object with its cpactl update command")
	}
}

// duplicates reports names used twice where names must be unique across
// the federation (pods, Connection Servers, pools, farms, RDS hosts):
// O(n log n), names grouped in a map and each group's DNs sorted.
func (l *linter) duplicates() {
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
	check(KindPool, items)
	items = nil
	for _, x := range l.d.Farms {
		items = append(items, named{x.Name, x.DN})
	}
	check(KindFarm, items)
	items = nil
	for _, x := range l.d.Hosts {
		items = append(items, named{x.Name, x.DN})
	}
	check(KindHost, items)
	items = nil
	for _, x := range l.d.ConnectionServers {
		items = append(items, named{x.Name, x.DN})
	}
	check(KindConnectionServer, items)
}

// settings: O(1), the five settings.
func (l *linter) settings() {
	for _, set := range ldapschema.Settings {
		v, _ := l.d.Settings.Value(set)
		if err := set.Check(v); err != nil {
			l.add(KindSettings, set.Attr, CheckOutOfRange, err.Error(),
				fmt.Sprintf("cpactl settings set %s=VALUE (%s), or cpactl settings reset %s", set.Attr, set.Range(), set.Attr))
		}
	}
}

// sites: O(S + R) for S sites and R preferred-site values.
func (l *linter) sites() {
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
			l.add(KindSite, s.Name, CheckPreferredRanks,
				fmt.Sprintf("preferred-site ranks are not 0..%d without gaps: %s", len(list.Sites)-1, strings.Join(ranks, " ")), fix)
		}
		names := make([]string, len(list.Sites))
		for i, r := range list.Sites {
			names[i] = r.Name
		}
		self := map[int]bool{}
		for _, p := range rules.PreferredSiteProblems(s.Name, names) {
			r := list.Sites[p.Index]
			if p.Check == CheckPreferredSelf {
				self[p.Index] = true
				l.add(KindSite, s.Name, CheckPreferredSelf,
					fmt.Sprintf("the preferred-site list names the site itself (rank %d)", r.Rank), fix)
				continue
			}
			l.add(KindSite, s.Name, CheckPreferredDuplicate,
				fmt.Sprintf("preferred site %q is listed more than once", r.Name), fix)
		}
		for i, r := range list.Sites {
			if !self[i] && !siteNames[strings.ToLower(r.Name)] {
				l.add(KindSite, s.Name, CheckPreferredMissing,
					fmt.Sprintf("preferred site %q (rank %d) does not exist", r.Name, r.Rank), fix)
			}
		}
	}
}

// pods: O(P), and the pod's own pae-RDS* values checked as cn=Common's.
func (l *linter) pods() {
	for _, p := range l.d.Pods {
		l.ref(KindPod, p.Name, fmt.Sprintf("cpactl pod update %s --site SITE", quote.Shell(p.Name)),
			ldapschema.AttrSiteDN, p.SiteDN, KindSite)
		for _, set := range ldapschema.Settings {
			v, ok := p.RDS[set.Attr]
			if !ok {
				continue
			}
			if err := set.Check(v); err != nil {
				pod := quote.Shell(p.Name)
				l.add(KindPod, p.Name, CheckOutOfRange, err.Error(),
					fmt.Sprintf("cpactl settings set --pod %s %s=VALUE (%s), or cpactl settings reset --pod %s %s", pod, set.Attr, set.Range(), pod, set.Attr))
			}
		}
	}
}

// pools: O(P), the farm found by its DN, normalized once (index).
func (l *linter) pools() {
	for i, p := range l.d.Pools {
		update := "cpactl pool update " + quote.Shell(p.Name)
		for _, v := range rules.Pool(p) {
			l.addViolation(KindPool, p.Name, update, v)
		}
		if v := rules.PoolOvercommit(p); v != nil {
			l.addViolation(KindPool, p.Name, update, *v)
		}
		if p.Kind == ldapschema.KindDesktop {
			continue
		}
		if p.FarmDN == "" {
			l.add(KindPool, p.Name, CheckDangling, "the farm-backed pool names no farm", update+" --farm FARM")
			continue
		}
		if !l.refKey(KindPool, p.Name, update+" --farm FARM", ldapschema.AttrFarmDN, p.FarmDN, l.poolFarm[i], KindFarm) {
			continue
		}
		if f, ok := l.farmOf[l.poolFarm[i]]; ok {
			if v := rules.FarmFits(p, l.d.Farms[f]); v != nil {
				l.add(KindPool, p.Name, v.Check, v.Message, update+" --farm FARM (a farm of pod "+quote.Shell(p.Pod)+")")
			}
		}
	}
}

// farmsAndHosts: O(F + H).
func (l *linter) farmsAndHosts() {
	for _, f := range l.d.Farms {
		for _, v := range rules.Farm(f) {
			l.addViolation(KindFarm, f.Name, "cpactl farm update "+quote.Shell(f.Name), v)
		}
	}
	farmNamed := make(map[farmKey]int, len(l.d.Farms))
	for i, f := range l.d.Farms {
		farmNamed[farmKey{fold.Key(f.Name), fold.Key(f.Pod)}] = i
	}
	for _, h := range l.d.Hosts {
		update := "cpactl host update " + quote.Shell(h.Name)
		for _, v := range rules.Host(h) {
			l.addViolation(KindHost, h.Name, update, v)
		}
		if fi, ok := farmNamed[farmKey{fold.Key(h.Farm), fold.Key(h.Pod)}]; ok {
			if v := rules.HostOvercommit(h, l.d.Farms[fi]); v != nil {
				l.addViolation(KindHost, h.Name, update, *v)
			}
		}
	}
}

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
		key, ok := l.ref(KindEntitlement, ge.Name, fix, ldapschema.AttrBackupEntitlementDN, ge.BackupDN, KindEntitlement)
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
			l.add(KindEntitlement, ge.Name, v.Check, v.Message, fix)
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
			l.addViolation(KindEntitlement, ge.Name, update, v)
		}
		for _, m := range ge.Members {
			l.ref(KindEntitlement, ge.Name, memberFix(ge.Name, m), ldapschema.AttrMember, m, KindUser, KindGroup)
		}
		poolKeys = poolKeys[:0]
		for _, dn := range ge.PoolDNs {
			key := l.key(dn)
			poolKeys = append(poolKeys, key)
			fix := fmt.Sprintf("cpactl entitlement remove-pool %s %s", quote.Shell(ge.Name), quote.Shell(ldapschema.NameOf(dn)))
			if !l.refKey(KindEntitlement, ge.Name, fix, ldapschema.AttrEntitlementPoolDN, dn, key, KindPool) {
				continue
			}
			poolGEs[key] = append(poolGEs[key], ge.Name)
			if p, ok := l.poolOf[key]; ok {
				if v := rules.PoolFits(ge, l.d.Pools[p]); v != nil {
					l.add(KindEntitlement, ge.Name, v.Check, v.Message, fix)
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
		l.add(KindPool, name, v.Check, v.Message, "keep one: "+strings.Join(fixes, "; "))
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
	l.add(KindEntitlement, ge.Name, CheckEntitledUsersWithoutPool,
		fmt.Sprintf("%d entitled user(s) cannot reach any pool (%s): %s", total, listSome(first, total), strings.Join(why, "; ")), fix)
}

// entitledUsers counts the users entitled to the entitlement at index i,
// directly or through nested groups, and returns the uids of the first n of
// them in the order of d.Users (a user listed twice counts twice), from the
// union of what its members hold (membership.Tally).
func (l *linter) entitledUsers(i, n int) (first []string, total int) {
	if l.tally == nil {
		dns := make([]string, len(l.d.Users))
		for u, x := range l.d.Users {
			dns[u] = x.DN
		}
		l.tally = l.graph.NewTally(dns)
	}
	users := l.tally.Within(l.memberSet(i))
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
		_, ok := l.ref(KindHomeSite, obj, fix, ldapschema.AttrUserDN, h.UserDN, KindUser)
		_, groupOK := l.ref(KindHomeSite, obj, fix, ldapschema.AttrGroupDN, h.GroupDN, KindGroup)
		_, siteOK := l.ref(KindHomeSite, obj, fix, ldapschema.AttrSiteDN, h.SiteDN, KindSite)
		geKey, geOK := l.ref(KindHomeSite, obj, fix, ldapschema.AttrEntitlementDN, h.EntitlementDN, KindEntitlement)
		if !ok || !groupOK || !siteOK || !geOK || h.EntitlementDN == "" {
			continue
		}
		gi := l.geOf[geKey]
		if l.graph.In(principal, l.memberSet(gi)) {
			continue
		}
		ge := l.d.Entitlements[gi]
		l.add(KindHomeSite, obj, CheckHomeSiteOverrideNotEntitled,
			fmt.Sprintf("the %s has a home-site override for entitlement %q but is not entitled to it (the row still counts)", flag, ge.Name),
			fmt.Sprintf("cpactl entitlement add-member %s --%s %s, or %s",
				quote.Shell(ge.Name), flag, quote.Shell(ldapschema.NameOf(principal)), unset))
	}
}

// groups: O(M) for M memberships.
func (l *linter) groups() {
	for _, g := range l.d.Groups {
		for _, m := range g.Members {
			l.ref(KindGroup, g.Name, fmt.Sprintf("cpactl group remove-member %s %s", quote.Shell(g.Name), quote.Shell(ldapschema.NameOf(m))),
				ldapschema.AttrMember, m, KindUser, KindGroup, KindComputer)
		}
	}
}

// sessions: O(S), seven look-ups each.
func (l *linter) sessions() {
	for _, s := range l.d.Sessions {
		fix := "cpactl session end " + quote.Shell(s.ID)
		l.ref(KindSession, s.ID, fix, ldapschema.AttrUserDN, s.UserDN, KindUser)
		l.ref(KindSession, s.ID, fix, ldapschema.AttrEntitlementDN, s.EntitlementDN, KindEntitlement)
		l.ref(KindSession, s.ID, fix, ldapschema.AttrPodDN, s.PodDN, KindPod)
		l.ref(KindSession, s.ID, fix, ldapschema.AttrBrokeringPodDN, s.BrokeringPodDN, KindPod)
		l.ref(KindSession, s.ID, fix, ldapschema.AttrPoolDN, s.PoolDN, KindPool)
		l.ref(KindSession, s.ID, fix, ldapschema.AttrHostDN, s.HostDN, KindHost)
		l.ref(KindSession, s.ID, fix, ldapschema.AttrClientDN, s.ClientDN, KindComputer)
	}
}

// assignments: O(A), three look-ups each.
func (l *linter) assignments() {
	for _, a := range l.d.Assignments {
		obj := ldapschema.NameOf(a.UserDN) + " / " + ldapschema.NameOf(a.EntitlementDN)
		fix := fmt.Sprintf("cpactl assignment delete --user %s --entitlement %s --yes",
			quote.Shell(ldapschema.NameOf(a.UserDN)), quote.Shell(ldapschema.NameOf(a.EntitlementDN)))
		l.ref(KindAssignment, obj, fix, ldapschema.AttrUserDN, a.UserDN, KindUser)
		l.ref(KindAssignment, obj, fix, ldapschema.AttrEntitlementDN, a.EntitlementDN, KindEntitlement)
		l.ref(KindAssignment, obj, fix, ldapschema.AttrPodDN, a.PodDN, KindPod)
	}
}
