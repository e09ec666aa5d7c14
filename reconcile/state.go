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
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
)

// kindRank orders kinds for reports and plans: the layout first, then the
// objects in the order of docs/topology.md and docs/entitlements.md.
var kindRank = map[string]int{
	objkind.Base: 0, objkind.Container: 1, objkind.Settings: 2, objkind.Site: 3, objkind.Pod: 4,
	objkind.ConnectionServer: 5, objkind.Farm: 6, objkind.Host: 7, objkind.Pool: 8,
	objkind.User: 9, objkind.Computer: 10, objkind.Group: 11, objkind.Entitlement: 12,
	objkind.HomeSiteRow: 13, objkind.Session: 14, objkind.Assignment: 15,
}

// IsStructure reports whether a kind is part of the layout (the base entry
// and the containers), which is created but never compared or deleted.
func IsStructure(kind string) bool { return kind == objkind.Base || kind == objkind.Container }

// Entry is one entry of a federation as diff and apply see it.
type Entry struct {
	DN   string
	Key  string // ldapschema.NormalizeDN(DN)
	Kind string // objkind.Base, objkind.Container, objkind.Settings or another objkind word
	Name string // the object's name for people (a row's description)
	// attrs holds the compared attributes, by canonical name with
	// objectClass first, then by name ignoring case (attrLess): every attribute cpactl's
	// schema or the standard classes define, operational attributes left
	// out. Their values are values[lo:hi], one slice for the whole entry.
	attrs  []attribute
	values []string
	// csn is the entryCSN read with an entry of a current state
	// (NewCurrentState), "" when the server sent none: apply's delete of
	// the entry asserts it.
	csn string
}

// attribute is one attribute of an entry.
type attribute struct {
	t      *attrType
	lo, hi int32
}

// attrType is what an attribute name read tells, looked up once per
// state.
type attrType struct {
	name        string // canonical, with its options
	lower       string // name in lower case
	info        ldapschema.AttributeInfo
	known       bool
	operational bool
}

func (e *Entry) valuesOf(a attribute) []string { return e.values[a.lo:a.hi:a.hi] }

// Attrs returns the compared attributes under their canonical names: every
// attribute cpactl's schema or the standard classes define, operational
// attributes left out. The map is built for the call.
func (e *Entry) Attrs() ldapschema.Attrs {
	out := make(ldapschema.Attrs, len(e.attrs))
	for _, a := range e.attrs {
		out[a.t.name] = e.valuesOf(a)
	}
	return out
}

// Values returns the values of the attribute name (compared without regard
// to case), nil when the entry has none.
func (e *Entry) Values(name string) []string {
	if a, ok := e.attribute(name); ok {
		return e.valuesOf(a)
	}
	return nil
}

func (e *Entry) attribute(name string) (attribute, bool) {
	for _, a := range e.attrs {
		if a.t.name == name {
			return a, true
		}
	}
	for _, a := range e.attrs {
		if strings.EqualFold(a.t.name, name) {
			return a, true
		}
	}
	return attribute{}, false
}

// Classes returns the entry's object classes.
func (e *Entry) Classes() []string { return e.Values(ldapschema.AttrObjectClass) }

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
	others  map[string]bool // the other DNs read: foreign, outside the base
	// same holds, in a current state read against a desired one
	// (NewCurrentState), the DNs of the entries that match their desired
	// entry: they are not kept.
	same map[string]struct{}
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

	// desired is the state a current state is compared with as it is read
	// (NewCurrentState); nil otherwise.
	desired *State
	layout  layoutKeys
	cache   stateCache
}

// NewStateFrom classifies the entries each streams (Snapshot.Each, for
// one), holding the state and never all the entries at once. The state
// keeps the entries' strings, never the entries or their slices: each may
// reuse them once the call returns.
func NewStateFrom(dit ldapschema.DIT, each func(func(*ldap.Entry) error) error) (*State, error) {
	s := newState(dit)
	err := each(func(e *ldap.Entry) error {
		s.Add(e)
		return nil
	})
	return s, err
}

func newState(dit ldapschema.DIT) *State {
	return &State{DIT: dit, entries: map[string]*Entry{}, others: map[string]bool{}, same: map[string]struct{}{},
		layout: newLayoutKeys(dit), cache: newStateCache()}
}

// NewCurrentState returns an empty current state under desired's base, to
// be compared with desired (which must be complete) and filled with Add as
// the entries are read, from a paged search for instance. It keeps only the
// entries that differ from their desired entry, or that desired lacks: one
// that matches (or is structure desired holds too) is only remembered as
// read (Present; Compare counts it unchanged; Entry and Entries leave it
// out), so that reading a whole directory holds little more than what
// differs. Compare and PlanApply take it as they take NewState's.
func NewCurrentState(desired *State) *State {
	s := newState(desired.DIT)
	s.desired = desired
	// Most entries read match their desired entry: room for all of them,
	// so that the set is not rehashed as it grows.
	s.same = make(map[string]struct{}, len(desired.entries))
	return s
}

// Add classifies one more entry (NewState adds each of its entries). An
// entry of a DN already added replaces it.
func (s *State) Add(raw *ldap.Entry) { s.commit(s.prepare(&s.cache, raw)) }

// prepared is an entry classified and checked (prepare), not yet in its
// state (commit). It holds the entry's strings, not the entry.
type prepared struct {
	key      string
	skip     bool // one of cpactl's temporary entries
	other    bool // not one of the state's entries: outside the base, or foreign
	e        *Entry
	problems []Problem
	foreign  *Problem
}

// prepare does the work of Add that depends on the entry alone and reads
// only what does not change while a state is filled (the layout, the base,
// the desired state), so that entries can be prepared on several
// processors, each with its own cache, and committed in order.
func (s *State) prepare(c *stateCache, raw *ldap.Entry) prepared {
	key := ldapschema.NormalizeDN(raw.DN)
	p := prepared{key: key}
	if s.layout.transient.Is(key) || s.layout.transient.IsRoles(key) {
		p.skip = true
		return p
	}
	if key != s.layout.base && !strings.HasSuffix(key, s.layout.commaBase) {
		p.problems = []Problem{{DN: raw.DN, Message: "is not under the base " + s.DIT.Base}}
		p.other = true
		return p
	}
	e := &Entry{DN: raw.DN, Key: key}
	p.problems = c.readAttributes(e, raw, p.problems)
	e.Kind, e.Name = classify(s.layout, key, raw)
	if e.Kind == "" {
		p.foreign = &Problem{DN: raw.DN, Message: fmt.Sprintf(
			"is not a cpactl object or container (object classes %s, at this place in the layout)",
			strings.Join(raw.GetEqualFoldAttributeValues(ldapschema.AttrObjectClass), ", "))}
		p.other = true
		return p
	}
	if s.desired == nil {
		// A current state is what the server holds, which its schema
		// checked; nothing reads its Problems but those of the layout.
		p.problems = append(p.problems, c.checkEntry(e)...)
	} else {
		e.csn = raw.GetEqualFoldAttributeValue(ldapschema.AttrEntryCSN)
	}
	p.e = e
	return p
}

// commit puts a prepared entry in the state.
func (s *State) commit(p prepared) {
	if p.skip {
		return
	}
	s.Problems = append(s.Problems, p.problems...)
	if p.foreign != nil {
		s.Foreign = append(s.Foreign, *p.foreign)
	}
	if p.other {
		s.other(p.key)
		return
	}
	key, e := p.key, p.e
	if s.desired != nil {
		if d := s.desired.entries[key]; d != nil && (IsStructure(d.Kind) || len(attributeChanges(d, e)) == 0) {
			delete(s.entries, key)
			s.same[d.Key] = struct{}{} // desired's copy of the key: this one goes
			return
		}
		delete(s.same, key)
	}
	s.entries[key] = e
}

// NewStateFromSnapshot is NewStateFrom(dit, snap.Each), with the entries
// decoded and prepared on every processor and committed in file order:
// the same state.
func NewStateFromSnapshot(dit ldapschema.DIT, snap *snapshot.Snapshot) *State {
	return newStateFromSnapshot(dit, snap, runtime.GOMAXPROCS(0))
}

func newStateFromSnapshot(dit ldapschema.DIT, snap *snapshot.Snapshot, workers int) *State {
	s := newState(dit)
	caches := make([]stateCache, workers)
	for i := range caches {
		caches[i] = newStateCache()
	}
	snapshot.EachPrepared(snap, workers, func(w int, e *ldap.Entry) prepared { return s.prepare(&caches[w], e) }, s.commit)
	return s
}

// other records a DN read that is not one of the state's entries.
func (s *State) other(key string) {
	if !s.present(key) {
		s.others[key] = true
	}
}

// stateCache remembers what names and class lists tell, for one
// goroutine filling a state.
type stateCache struct {
	rules   classRulesCache
	types   map[string]*attrType // by attribute name as read
	scratch []byte
}

func newStateCache() stateCache {
	return stateCache{rules: classRulesCache{}, types: map[string]*attrType{}}
}

// typeOf looks an attribute name up, once per name and cache.
func (c *stateCache) typeOf(name string) *attrType {
	if t, ok := c.types[name]; ok {
		return t
	}
	t := &attrType{operational: ldapschema.IsOperational(name)}
	t.info, t.known = ldapschema.LookupAttribute(name)
	t.name, t.lower = t.info.Name, strings.ToLower(t.info.Name)
	c.types[name] = t
	return t
}

// readAttributes copies the compared attributes of raw into e: under their
// canonical names (values of the same attribute under two of its names
// joined), in attrLess's order, all values in one slice. Attributes no
// schema defines are appended to problems.
func (c *stateCache) readAttributes(e *Entry, raw *ldap.Entry, problems []Problem) []Problem {
	type read struct {
		t     *attrType
		first int // index in raw.Attributes of its first name
		more  bool
	}
	var buf [16]read
	reads := buf[:0]
	n, merged := 0, false
	for i, a := range raw.Attributes {
		t := c.typeOf(a.Name)
		if t.operational {
			continue
		}
		if !t.known {
			problems = append(problems, Problem{DN: raw.DN, Message: unknownAttribute(a.Name)})
			continue
		}
		n += len(a.Values)
		found := false
		for k := range reads {
			if reads[k].t.name == t.name {
				reads[k].more, merged, found = true, true, true
				break
			}
		}
		if !found {
			reads = append(reads, read{t: t, first: i})
		}
	}
	slices.SortFunc(reads, func(a, b read) int {
		switch {
		case attrLess(a.t, b.t):
			return -1
		case attrLess(b.t, a.t):
			return 1
		}
		return 0
	})
	e.attrs, e.values = make([]attribute, len(reads)), make([]string, 0, n)
	for k, r := range reads {
		lo := len(e.values)
		e.values = append(e.values, raw.Attributes[r.first].Values...)
		if merged && r.more {
			for _, a := range raw.Attributes[r.first+1:] {
				if t := c.typeOf(a.Name); t.name == r.t.name && t.known && !t.operational {
					e.values = append(e.values, a.Values...)
				}
			}
		}
		e.attrs[k] = attribute{t: r.t, lo: int32(lo), hi: int32(len(e.values))}
	}
	return problems
}

// attrLess orders attributes as reports list them: objectClass first,
// then by name ignoring case.
func attrLess(a, b *attrType) bool {
	ca, cb := a.lower == objectClassLower, b.lower == objectClassLower
	if ca != cb {
		return ca
	}
	return a.lower < b.lower
}

var objectClassLower = strings.ToLower(ldapschema.AttrObjectClass)

// Present reports whether dn was read, cpactl's object or not.
func (s *State) Present(dn string) bool { return s.present(ldapschema.NormalizeDN(dn)) }

func (s *State) present(key string) bool {
	_, same := s.same[key]
	return same || s.entries[key] != nil || s.others[key]
}

// sortEntries sorts items by the kind rank (rankOf) of their entry
// (entry(item)), then its name ignoring case, then its normalized DN, each
// name lowered once: O(n log n). With rank it is report order: by kind
// (layout order), then name, then DN.
func sortEntries[T any](items []T, entry func(T) *Entry, rankOf func(kind string) int) {
	type keyed struct {
		rank int
		name string
		item T
	}
	ks := make([]keyed, len(items))
	for i, it := range items {
		e := entry(it)
		ks[i] = keyed{rankOf(e.Kind), strings.ToLower(e.Name), it}
	}
	sort.SliceStable(ks, func(i, j int) bool {
		a, b := &ks[i], &ks[j]
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		if a.name != b.name {
			return a.name < b.name
		}
		return entry(a.item).Key < entry(b.item).Key
	})
	for i := range ks {
		items[i] = ks[i].item
	}
}

func itself(e *Entry) *Entry { return e }

func rank(kind string) int {
	if r, ok := kindRank[kind]; ok {
		return r
	}
	return len(kindRank)
}

// layoutKeys holds the normalized DNs of the layout, to classify entries
// without parsing DNs again.
type layoutKeys struct {
	base, commaBase, settings                        string
	sites, pods, entitlements, homeSites             string
	people, groups, computers, sessions, assignments string

	containers map[string]bool
	transient  directory.TransientKeys
}

func newLayoutKeys(dit ldapschema.DIT) layoutKeys {
	n := ldapschema.NormalizeDN
	k := layoutKeys{base: n(dit.Base), commaBase: "," + n(dit.Base), settings: n(dit.Settings()), sites: n(dit.Sites()), pods: n(dit.Pods()),
		entitlements: n(dit.Entitlements()), homeSites: n(dit.HomeSites()), people: n(dit.People()),
		groups: n(dit.Groups()), computers: n(dit.Computers()), sessions: n(dit.Sessions()),
		assignments: n(dit.Assignments()), containers: map[string]bool{}, transient: directory.NewTransientKeys(dit)}
	for _, c := range dit.Containers() {
		k.containers[n(c)] = true
	}
	return k
}

// classify finds what an entry is from its place in the layout and its
// object classes: "" when it is not cpactl's.
func classify(l layoutKeys, key string, e *ldap.Entry) (kind, name string) {
	if key == l.base {
		return objkind.Base, e.DN
	}
	if l.containers[key] {
		return objkind.Container, firstRDN(e.DN)
	}
	has := func(c string) bool { return ldapschema.HasClass(e, c) }
	if key == l.settings {
		if has(ldapschema.ClassGlobalSettings) {
			return objkind.Settings, firstRDN(e.DN)
		}
		return "", ""
	}
	parent := ldapschema.ParentKey(key)
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
	switch grand := ldapschema.ParentKey(parent); {
	case ok:
	case grand == l.pods:
		ok = has(ldapschema.ClassConnectionServer) || ldapschema.IsPool(e) || has(ldapschema.ClassRDSFarm)
	case ldapschema.ParentKey(grand) == l.pods:
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
	return ldapschema.RDNOf(parsed.RDNs[0].Attributes)
}

// classRules holds what a set of object classes requires and allows
// (ldapschema.ClassRules), and the required attributes in order with the
// names the problems give them.
type classRules struct {
	must, may map[string]bool
	unknown   []string
	required  []required
}

type required struct{ lower, name string }

// classRulesCache remembers the rules of each list of classes, as spelled
// (an unknown class is named as written): entries of one kind share them.
type classRulesCache map[string]*classRules

// of returns the rules of classes; buf is scratch space for the key.
func (c classRulesCache) of(classes []string, buf *[]byte) *classRules {
	b := (*buf)[:0]
	for i, cl := range classes {
		if i > 0 {
			b = append(b, 0)
		}
		b = append(b, cl...)
	}
	*buf = b
	if r, ok := c[string(b)]; ok {
		return r
	}
	r := &classRules{}
	r.must, r.may, r.unknown = ldapschema.ClassRules(classes)
	for _, m := range sortedKeys(r.must) {
		name := m
		if info, ok := ldapschema.LookupAttribute(m); ok {
			name = info.Name
		}
		r.required = append(r.required, required{m, name})
	}
	c[string(b)] = r
	return r
}

// checkEntry lists what the server would refuse in an entry: O(attributes
// + values), the rules of its classes looked up once per list of classes.
func (c *stateCache) checkEntry(e *Entry) []Problem {
	var out []Problem
	add := func(format string, args ...any) {
		out = append(out, Problem{DN: e.DN, Message: fmt.Sprintf(format, args...)})
	}
	classes := e.Classes()
	if len(classes) == 0 {
		add("has no object class")
		return out
	}
	r := c.rules.of(classes, &c.scratch)
	for _, c := range r.unknown {
		add("object class %s is not defined by cpactl's schema or the standard classes", c)
	}
	for _, a := range e.attrs {
		name, values := a.t.name, e.valuesOf(a)
		base, _, _ := strings.Cut(a.t.lower, ";")
		if len(r.unknown) == 0 && !r.must[base] && !r.may[base] {
			add("attribute %s is not allowed by its object classes (%s)", name, strings.Join(classes, ", "))
		}
		if a.t.info.Single && len(values) > 1 {
			add("attribute %s takes one value, not %d", name, len(values))
		}
		if len(values) > 1 {
			keys := make(map[string]bool, len(values))
			for _, v := range values {
				k := a.t.info.Equality.Key(v)
				if keys[k] {
					add("attribute %s holds the value %q twice", name, v)
				}
				keys[k] = true
			}
		}
	}
	for _, m := range r.required {
		if !e.has(m.lower) {
			add("required attribute %s is missing", m.name)
		}
	}
	if rdn, ok := ldapschema.FirstRDN(e.DN); ok {
		for _, ava := range rdn {
			info, ok := ldapschema.LookupAttribute(ava.Type)
			if !ok {
				continue
			}
			key := info.Equality.Key(ava.Value)
			found := false
			if a, ok := e.exact(info.Name); ok {
				for _, v := range e.valuesOf(a) {
					if info.Equality.Key(v) == key {
						found = true
						break
					}
				}
			}
			if !found {
				add("its name %s=%s is missing from its attribute %s", ava.Type, ava.Value, info.Name)
			}
		}
	}
	return out
}

// has reports whether the entry holds values of the attribute whose
// canonical name in lower case is lowerName (options excluded).
func (e *Entry) has(lowerName string) bool {
	for _, a := range e.attrs {
		if a.t.lower == lowerName && a.hi > a.lo {
			return true
		}
	}
	return false
}

// exact finds the attribute of this exact canonical name.
func (e *Entry) exact(name string) (attribute, bool) {
	for _, a := range e.attrs {
		if a.t.name == name {
			return a, true
		}
	}
	return attribute{}, false
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// unknownAttribute says that no schema defines the attribute name, and
// which attribute it may have meant (pae-PreferedSite: pae-PreferredSite).
func unknownAttribute(name string) string {
	msg := fmt.Sprintf("attribute %s is not defined by cpactl's schema or the standard classes", name)
	if near := ldapschema.NearestAttribute(name); near != "" {
		msg += " (did you mean " + near + "?)"
	}
	return msg
}
