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
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/membership"
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
	CheckEntitledUsersWithoutHome    = "entitled-users-without-home-site"
	CheckClientRestrictionsNoClient  = "client-restrictions-without-computer"
)

// Checks lists every finding class.
var Checks = []string{CheckUnreadable, CheckDuplicateName, CheckDangling, CheckPreferredMissing, CheckPreferredSelf,
	CheckPreferredDuplicate, CheckPreferredRanks, CheckIgnoreHighLoadWithoutPolicy, CheckIgnoreHighLoadWithoutPrefer,
	CheckPreferredSitesScope, CheckRequireHomeSiteWithoutUse, CheckOptionNotAllowed, CheckPoolInTwoEntitlements,
	CheckDedicatedFloatingMismatch, CheckPoolTypeMismatch, CheckFarmInAnotherPod, CheckOutOfRange,
	CheckEntitledUsersWithoutPool, CheckHomeSiteOverrideNotEntitled, CheckOverCapacity,
	CheckEntitledUsersWithoutHome, CheckClientRestrictionsNoClient,
	rules.CheckBackupPrimaryKind, rules.CheckBackupKind, rules.CheckBackupMembers, rules.CheckBackupProtocol,
	rules.CheckBackupSelf, rules.CheckBackupChain}

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
	l.requiredHomeSites()
	l.clientRestrictions()
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
		put(objkind.Site, x.DN, x.Name)
	}
	l.offlinePod = map[string]string{}
	for _, x := range d.Pods {
		put(objkind.Pod, x.DN, x.Name)
		if k := fold.Key(x.Name); !x.Online && l.offlinePod[k] == "" {
			l.offlinePod[k] = x.Name
		}
	}
	l.serverTags = map[string]bool{}
	for _, x := range d.ConnectionServers {
		put(objkind.ConnectionServer, x.DN, x.Name)
		for _, t := range x.Tags {
			l.serverTags[fold.Key(t)] = true
		}
	}
	l.poolOf, l.poolFarm = make(map[string]int, len(d.Pools)), make([]string, len(d.Pools))
	for i, x := range d.Pools {
		l.poolOf[put(objkind.Pool, x.DN, x.Name)] = i
	}
	for i, x := range d.Pools {
		l.poolFarm[i] = l.key(x.FarmDN)
	}
	l.farmOf = make(map[string]int, len(d.Farms))
	for i, x := range d.Farms {
		l.farmOf[put(objkind.Farm, x.DN, x.Name)] = i
	}
	l.enabledHost = map[farmKey]bool{}
	for _, x := range d.Hosts {
		put(objkind.Host, x.DN, x.Name)
		if x.Enabled {
			l.enabledHost[farmKey{fold.Key(x.Farm), fold.Key(x.Pod)}] = true
		}
	}
	l.geOf = make(map[string]int, len(d.Entitlements))
	for i, x := range d.Entitlements {
		l.geOf[put(objkind.Entitlement, x.DN, x.Name)] = i
	}
	for _, x := range d.Users {
		put(objkind.User, x.DN, x.UID)
	}
	for _, x := range d.Groups {
		put(objkind.Group, x.DN, x.Name)
	}
	for _, x := range d.Computers {
		put(objkind.Computer, x.DN, x.Name)
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
