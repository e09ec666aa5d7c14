// Package reconcile keeps a federation as code: it compares a desired
// federation (an LDIF file such as `cpactl export` writes) with the current
// one (the live directory, or another snapshot), entry by entry and
// attribute by attribute under the schema's matching rules, and plans the
// writes that make the current one match. `cpactl diff` reports the
// comparison; `cpactl apply` validates the desired state and runs the plan
// through directory.Store.ApplyPlan.
//
// Only what cpactl owns under the base DN takes part: its objects (sites,
// pods, Connection Servers, pools, farms, RDS hosts, entitlements,
// home-site rows, users, groups, computers, sessions, pod assignments and
// the global settings entry cn=Common), recognised by their object class and
// their place in the layout. The base entry and the containers are
// structure: they are created when missing, never compared or deleted.
// Nothing here imports cobra or dials a server.
package reconcile

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/ldapschema"
)

// Kinds of entries besides the objects' (directory.Kind*).
const (
	KindBase      = "base entry"
	KindContainer = "container"
	KindSettings  = "settings"
)

// kindRank orders kinds for reports and plans: the layout first, then the
// objects in the order of SPEC §1.
var kindRank = map[string]int{
	KindBase: 0, KindContainer: 1, KindSettings: 2, directory.KindSite: 3, directory.KindPod: 4,
	directory.KindConnectionServer: 5, directory.KindFarm: 6, directory.KindHost: 7, directory.KindPool: 8,
	directory.KindUser: 9, directory.KindComputer: 10, directory.KindGroup: 11, directory.KindEntitlement: 12,
	directory.KindHomeSiteRow: 13, directory.KindSession: 14, directory.KindAssignment: 15,
}

// IsStructure reports whether a kind is part of the layout (the base entry
// and the containers), which is created but never compared or deleted.
func IsStructure(kind string) bool { return kind == KindBase || kind == KindContainer }

// Entry is one entry of a federation as diff and apply see it.
type Entry struct {
	DN   string
	Key  string // ldapschema.NormalizeDN(DN)
	Kind string // KindBase, KindContainer, KindSettings or a directory.Kind*
	Name string // the object's name for people (a row's description)
	// Attrs holds the compared attributes under their canonical names:
	// every attribute cpactl's schema or the standard classes define,
	// operational attributes left out.
	Attrs ldapschema.Attrs
}

// Classes returns the entry's object classes.
func (e *Entry) Classes() []string { return e.Attrs[ldapschema.AttrObjectClass] }

// Object names the entry for people: "site UK".
func (e *Entry) Object() string { return e.Kind + " " + e.Name }

// Problem is something wrong with one entry of a state.
type Problem struct {
	DN      string `json:"dn"`
	Message string `json:"message"`
}

func (p Problem) String() string { return fmt.Sprintf("entry %s: %s", p.DN, p.Message) }

// State is one side of a comparison: the entries of a federation under one
// base DN, classified.
type State struct {
	DIT     ldapschema.DIT
	entries map[string]*Entry
	present map[string]bool // every DN read, cpactl's or not
	// Foreign lists the entries under the base that are neither cpactl
	// objects nor structure; they take no part.
	Foreign []Problem
	// Problems lists what a server would refuse, or what cannot be
	// compared: entries outside the base, unknown object classes,
	// attributes no schema cpactl knows defines (left out), attributes the
	// classes do not allow, missing required attributes, several values of
	// a single-valued attribute, a value given twice, an entry's name
	// missing from its attributes.
	Problems []Problem
}

// NewState classifies entries under dit's base. Transient entries (the
// trash and placeholders of an interrupted write, directory.IsTransient)
// are skipped.
func NewState(dit ldapschema.DIT, entries []*ldap.Entry) *State {
	s := &State{DIT: dit, entries: map[string]*Entry{}, present: map[string]bool{}}
	layout := newLayoutKeys(dit)
	rules := classRulesCache{}
	for _, raw := range entries {
		if directory.IsTransient(dit, raw.DN) {
			continue
		}
		key := ldapschema.NormalizeDN(raw.DN)
		s.present[key] = true
		if key != layout.base && !strings.HasSuffix(key, ","+layout.base) {
			s.Problems = append(s.Problems, Problem{DN: raw.DN, Message: "is not under the base " + dit.Base})
			continue
		}
		e := &Entry{DN: raw.DN, Key: key, Attrs: ldapschema.Attrs{}}
		for _, a := range raw.Attributes {
			if ldapschema.IsOperational(a.Name) {
				continue
			}
			info, ok := ldapschema.LookupAttribute(a.Name)
			if !ok {
				s.Problems = append(s.Problems, Problem{DN: raw.DN,
					Message: fmt.Sprintf("attribute %s is not defined by cpactl's schema or the standard classes", a.Name)})
				continue
			}
			e.Attrs[info.Name] = append(e.Attrs[info.Name], a.Values...)
		}
		e.Kind, e.Name = classify(layout, key, raw)
		if e.Kind == "" {
			s.Foreign = append(s.Foreign, Problem{DN: raw.DN, Message: fmt.Sprintf(
				"is not a cpactl object or container (object classes %s, at this place in the layout)",
				strings.Join(raw.GetEqualFoldAttributeValues(ldapschema.AttrObjectClass), ", "))})
			continue
		}
		s.Problems = append(s.Problems, checkEntry(e, rules)...)
		s.entries[key] = e
	}
	return s
}

// Entry returns the entry with this DN, or nil.
func (s *State) Entry(dn string) *Entry { return s.entries[ldapschema.NormalizeDN(dn)] }

// Entries returns the entries in report order.
func (s *State) Entries() []*Entry {
	out := make([]*Entry, 0, len(s.entries))
	for _, e := range s.entries {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return less(out[i], out[j]) })
	return out
}

// Present reports whether dn was read, cpactl's object or not.
func (s *State) Present(dn string) bool { return s.present[ldapschema.NormalizeDN(dn)] }

// less orders entries by kind (layout order), then name, then DN.
func less(a, b *Entry) bool {
	if ra, rb := rank(a.Kind), rank(b.Kind); ra != rb {
		return ra < rb
	}
	if x, y := strings.ToLower(a.Name), strings.ToLower(b.Name); x != y {
		return x < y
	}
	return a.Key < b.Key
}

func rank(kind string) int {
	if r, ok := kindRank[kind]; ok {
		return r
	}
	return len(kindRank)
}

// layoutKeys holds the normalized DNs of the layout, to classify entries
// without parsing DNs again.
type layoutKeys struct {
	base, settings                                   string
	sites, pods, entitlements, homeSites             string
	people, groups, computers, sessions, assignments string

	containers map[string]bool
}

func newLayoutKeys(dit ldapschema.DIT) layoutKeys {
	n := ldapschema.NormalizeDN
	k := layoutKeys{base: n(dit.Base), settings: n(dit.Settings()), sites: n(dit.Sites()), pods: n(dit.Pods()),
		entitlements: n(dit.Entitlements()), homeSites: n(dit.HomeSites()), people: n(dit.People()),
		groups: n(dit.Groups()), computers: n(dit.Computers()), sessions: n(dit.Sessions()),
		assignments: n(dit.Assignments()), containers: map[string]bool{}}
	for _, c := range dit.Containers() {
		k.containers[n(c)] = true
	}
	return k
}

// parentKey returns the parent of a normalized DN ("" for none): what
// follows its first unescaped comma.
func parentKey(key string) string {
	for i := 0; i < len(key); i++ {
		switch key[i] {
		case '\\':
			i++
		case ',':
			return key[i+1:]
		}
	}
	return ""
}

// classify finds what an entry is from its place in the layout and its
// object classes: "" when it is not cpactl's.
func classify(l layoutKeys, key string, e *ldap.Entry) (kind, name string) {
	if key == l.base {
		return KindBase, e.DN
	}
	if l.containers[key] {
		return KindContainer, firstRDN(e.DN)
	}
	has := func(c string) bool { return ldapschema.HasClass(e, c) }
	if key == l.settings {
		if has(ldapschema.ClassGlobalSettings) {
			return KindSettings, firstRDN(e.DN)
		}
		return "", ""
	}
	parent := parentKey(key)
	ok := false
	switch parent {
	case l.sites:
		ok = has(ldapschema.ClassSite)
	case l.pods:
		ok = has(ldapschema.ClassPod)
	case l.entitlements:
		ok = has(ldapschema.ClassGlobalEntitlement)
	case l.homeSites:
		ok = has(ldapschema.ClassHomeSite)
	case l.people:
		ok = has(ldapschema.ClassInetOrgPerson)
	case l.groups:
		ok = has(ldapschema.ClassGroup)
	case l.computers:
		ok = has(ldapschema.ClassDevice)
	case l.sessions:
		ok = has(ldapschema.ClassSession)
	case l.assignments:
		ok = has(ldapschema.ClassPodAssignment)
	}
	switch grand := parentKey(parent); {
	case ok:
	case grand == l.pods:
		ok = has(ldapschema.ClassConnectionServer) || ldapschema.IsPool(e) || has(ldapschema.ClassRDSFarm)
	case parentKey(grand) == l.pods:
		ok = has(ldapschema.ClassRDSHost)
	}
	if !ok {
		return "", ""
	}
	return directory.DescribeEntry(e)
}

// firstRDN renders the first RDN of dn: "ou=Sites".
func firstRDN(dn string) string {
	parsed, err := ldap.ParseDN(dn)
	if err != nil || len(parsed.RDNs) == 0 {
		return dn
	}
	avas := make([]string, len(parsed.RDNs[0].Attributes))
	for i, a := range parsed.RDNs[0].Attributes {
		avas[i] = a.Type + "=" + ldap.EscapeDN(a.Value)
	}
	return strings.Join(avas, "+")
}

// classRules holds what a set of object classes requires and allows
// (ldapschema.ClassRules).
type classRules struct {
	must, may map[string]bool
	unknown   []string
}

// classRulesCache remembers the rules of each set of classes: entries of
// one kind share them.
type classRulesCache map[string]classRules

func (c classRulesCache) of(classes []string) classRules {
	key := strings.ToLower(strings.Join(classes, "\x00"))
	r, ok := c[key]
	if !ok {
		r.must, r.may, r.unknown = ldapschema.ClassRules(classes)
		c[key] = r
	}
	return r
}

// checkEntry lists what the server would refuse in an entry.
func checkEntry(e *Entry, cache classRulesCache) []Problem {
	var out []Problem
	add := func(format string, args ...any) {
		out = append(out, Problem{DN: e.DN, Message: fmt.Sprintf(format, args...)})
	}
	classes := e.Classes()
	if len(classes) == 0 {
		add("has no object class")
		return out
	}
	r := cache.of(classes)
	must, may, unknown := r.must, r.may, r.unknown
	for _, c := range unknown {
		add("object class %s is not defined by cpactl's schema or the standard classes", c)
	}
	for _, name := range sortedNames(e.Attrs) {
		base, _, _ := strings.Cut(strings.ToLower(name), ";")
		values := e.Attrs[name]
		if len(unknown) == 0 && !must[base] && !may[base] {
			add("attribute %s is not allowed by its object classes (%s)", name, strings.Join(classes, ", "))
		}
		if info, _ := ldapschema.LookupAttribute(name); info.Single && len(values) > 1 {
			add("attribute %s takes one value, not %d", name, len(values))
		}
		keys := map[string]bool{}
		for _, v := range values {
			k := ldapschema.ValueKey(name, v)
			if keys[k] {
				add("attribute %s holds the value %q twice", name, v)
			}
			keys[k] = true
		}
	}
	for _, m := range sortedKeys(must) {
		if !hasAttr(e.Attrs, m) {
			name := m
			if info, ok := ldapschema.LookupAttribute(m); ok {
				name = info.Name
			}
			add("required attribute %s is missing", name)
		}
	}
	if dn, err := ldap.ParseDN(e.DN); err == nil && len(dn.RDNs) > 0 {
		for _, ava := range dn.RDNs[0].Attributes {
			info, ok := ldapschema.LookupAttribute(ava.Type)
			if !ok {
				continue
			}
			found := false
			for _, v := range e.Attrs[info.Name] {
				if ldapschema.ValueKey(info.Name, v) == ldapschema.ValueKey(info.Name, ava.Value) {
					found = true
				}
			}
			if !found {
				add("its name %s=%s is missing from its attribute %s", ava.Type, ava.Value, info.Name)
			}
		}
	}
	return out
}

func hasAttr(a ldapschema.Attrs, lowerName string) bool {
	for name, values := range a {
		if strings.EqualFold(name, lowerName) && len(values) > 0 {
			return true
		}
	}
	return false
}

// sortedNames returns the attribute names, objectClass first, then by
// name.
func sortedNames(a ldapschema.Attrs) []string {
	names := make([]string, 0, len(a))
	for n := range a {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		ci, cj := strings.EqualFold(names[i], ldapschema.AttrObjectClass), strings.EqualFold(names[j], ldapschema.AttrObjectClass)
		if ci != cj {
			return ci
		}
		return strings.ToLower(names[i]) < strings.ToLower(names[j])
	})
	return names
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
