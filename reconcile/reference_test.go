package reconcile

// The reconcile package of commit 4f8a022 (state building, comparison and
// planning), its names prefixed with "ref": the reference the leaner states
// must match (reports, problems and plans).

import (
	"container/heap"
	"fmt"
	"sort"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
)

// Entry is one entry of a federation as diff and apply see it.
type refEntry struct {
	DN   string
	Key  string // ldapschema.NormalizeDN(DN)
	Kind string // objkind.Base, objkind.Container, objkind.Settings or another objkind word
	Name string // the object's name for people (a row's description)
	// Attrs holds the compared attributes under their canonical names:
	// every attribute cpactl's schema or the standard classes define,
	// operational attributes left out.
	Attrs ldapschema.Attrs
}

// Classes returns the entry's object classes.
func (e *refEntry) Classes() []string { return e.Attrs[ldapschema.AttrObjectClass] }

// Object names the entry for people: "site UK".
func (e *refEntry) Object() string { return e.Kind + " " + e.Name }

// State is one side of a comparison: the entries of a federation under one
// base DN, classified.
type refState struct {
	DIT     ldapschema.DIT
	entries map[string]*refEntry
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
func refNewState(dit ldapschema.DIT, entries []*ldap.Entry) *refState {
	s := &refState{DIT: dit, entries: map[string]*refEntry{}, present: map[string]bool{}}
	layout := refnewLayoutKeys(dit)
	rules := refclassRulesCache{}
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
		e := &refEntry{DN: raw.DN, Key: key, Attrs: ldapschema.Attrs{}}
		for _, a := range raw.Attributes {
			if ldapschema.IsOperational(a.Name) {
				continue
			}
			info, ok := ldapschema.LookupAttribute(a.Name)
			if !ok {
				s.Problems = append(s.Problems, Problem{DN: raw.DN,
					Message: unknownAttribute(a.Name)})
				continue
			}
			e.Attrs[info.Name] = append(e.Attrs[info.Name], a.Values...)
		}
		e.Kind, e.Name = refclassify(layout, key, raw)
		if e.Kind == "" {
			s.Foreign = append(s.Foreign, Problem{DN: raw.DN, Message: fmt.Sprintf(
				"is not a cpactl object or container (object classes %s, at this place in the layout)",
				strings.Join(raw.GetEqualFoldAttributeValues(ldapschema.AttrObjectClass), ", "))})
			continue
		}
		s.Problems = append(s.Problems, refcheckEntry(e, rules)...)
		s.entries[key] = e
	}
	return s
}

// Entry returns the entry with this DN, or nil.
func (s *refState) refEntry(dn string) *refEntry { return s.entries[ldapschema.NormalizeDN(dn)] }

// Entries returns the entries in report order.
func (s *refState) Entries() []*refEntry {
	out := make([]*refEntry, 0, len(s.entries))
	for _, e := range s.entries {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return refless(out[i], out[j]) })
	return out
}

// Present reports whether dn was read, cpactl's object or not.
func (s *refState) Present(dn string) bool { return s.present[ldapschema.NormalizeDN(dn)] }

// less orders entries by kind (layout order), then name, then DN.
func refless(a, b *refEntry) bool {
	if ra, rb := refrank(a.Kind), refrank(b.Kind); ra != rb {
		return ra < rb
	}
	if x, y := strings.ToLower(a.Name), strings.ToLower(b.Name); x != y {
		return x < y
	}
	return a.Key < b.Key
}

func refrank(kind string) int {
	if r, ok := kindRank[kind]; ok {
		return r
	}
	return len(kindRank)
}

// layoutKeys holds the normalized DNs of the layout, to classify entries
// without parsing DNs again.
type reflayoutKeys struct {
	base, settings                                   string
	sites, pods, entitlements, homeSites             string
	people, groups, computers, sessions, assignments string

	containers map[string]bool
}

func refnewLayoutKeys(dit ldapschema.DIT) reflayoutKeys {
	n := ldapschema.NormalizeDN
	k := reflayoutKeys{base: n(dit.Base), settings: n(dit.Settings()), sites: n(dit.Sites()), pods: n(dit.Pods()),
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
func refparentKey(key string) string {
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
func refclassify(l reflayoutKeys, key string, e *ldap.Entry) (kind, name string) {
	if key == l.base {
		return objkind.Base, e.DN
	}
	if l.containers[key] {
		return objkind.Container, reffirstRDN(e.DN)
	}
	has := func(c string) bool { return ldapschema.HasClass(e, c) }
	if key == l.settings {
		if has(ldapschema.ClassGlobalSettings) {
			return objkind.Settings, reffirstRDN(e.DN)
		}
		return "", ""
	}
	parent := refparentKey(key)
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
	switch grand := refparentKey(parent); {
	case ok:
	case grand == l.pods:
		ok = has(ldapschema.ClassConnectionServer) || ldapschema.IsPool(e) || has(ldapschema.ClassRDSFarm)
	case refparentKey(grand) == l.pods:
		ok = has(ldapschema.ClassRDSHost)
	}
	if !ok {
		return "", ""
	}
	return directory.DescribeEntry(e)
}

// firstRDN renders the first RDN of dn: "ou=Sites".
func reffirstRDN(dn string) string {
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
type refclassRules struct {
	must, may map[string]bool
	unknown   []string
}

// classRulesCache remembers the rules of each set of classes: entries of
// one kind share them.
type refclassRulesCache map[string]refclassRules

func (c refclassRulesCache) of(classes []string) refclassRules {
	key := strings.ToLower(strings.Join(classes, "\x00"))
	r, ok := c[key]
	if !ok {
		r.must, r.may, r.unknown = ldapschema.ClassRules(classes)
		c[key] = r
	}
	return r
}

// checkEntry lists what the server would refuse in an entry.
func refcheckEntry(e *refEntry, cache refclassRulesCache) []Problem {
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
	for _, name := range refsortedNames(e.Attrs) {
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
	for _, m := range refsortedKeys(must) {
		if !refhasAttr(e.Attrs, m) {
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

func refhasAttr(a ldapschema.Attrs, lowerName string) bool {
	for name, values := range a {
		if strings.EqualFold(name, lowerName) && len(values) > 0 {
			return true
		}
	}
	return false
}

// sortedNames returns the attribute names, objectClass first, then by
// name.
func refsortedNames(a ldapschema.Attrs) []string {
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

func refsortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Report is the comparison of a desired state with the current one. Its
// JSON form is a stable contract (snake_case, pinned by a golden file).
type refReport struct {
	// Identical is true when nothing differs.
	Identical bool       `json:"identical"`
	Summary   refSummary `json:"summary"`
	// Entries lists the entries that differ, layout order (containers,
	// settings, sites, pods, ...), then by name.
	Entries []refEntryChange `json:"entries"`
}

// Summary counts the entries by what happened to them.
type refSummary struct {
	Added   int `json:"added"`
	Removed int `json:"removed"`
	Changed int `json:"changed"`
	// Unchanged counts the objects (not the structure) both states hold
	// with the same values.
	Unchanged int `json:"unchanged"`
}

// EntryChange is one entry that differs.
type refEntryChange struct {
	Change string `json:"change"` // Added, Removed or Changed
	Kind   string `json:"kind"`   // "site", "pod", ..., "container", "settings"
	Name   string `json:"name"`
	DN     string `json:"dn"`
	// Attributes lists the attributes that differ (for an added or removed
	// entry, all of them), by name, objectClass first.
	Attributes []refAttributeChange `json:"attributes"`

	desired, current *refEntry
}

// Object names the entry for people: "site UK".
func (c refEntryChange) Object() string { return c.Kind + " " + c.Name }

// AttributeChange is one attribute that differs.
type refAttributeChange struct {
	Attribute string `json:"attribute"`
	// Current and Desired hold every value on each side: a preferred-site
	// list in rank order, other values sorted.
	Current []string `json:"current"`
	Desired []string `json:"desired"`
	// Removed and Added hold the values only one side has (compared by
	// the attribute's matching rule).
	Removed []string `json:"removed"`
	Added   []string `json:"added"`
}

// Compare compares the desired state with the current one. Entries that
// only the current state holds are reported removed, except the structure
// and the settings entry, which apply never deletes; the structure is
// never compared.
func refCompare(desired, current *refState) *refReport {
	r := &refReport{Entries: []refEntryChange{}}
	for _, d := range desired.Entries() {
		c := current.entries[d.Key]
		switch {
		case c == nil:
			r.Entries = append(r.Entries, refEntryChange{Change: Added, Kind: d.Kind, Name: d.Name, DN: d.DN,
				Attributes: refattributeChanges(d.Attrs, nil), desired: d})
			r.Summary.Added++
		case IsStructure(d.Kind):
		default:
			changes := refattributeChanges(d.Attrs, c.Attrs)
			if len(changes) == 0 {
				r.Summary.Unchanged++
				continue
			}
			r.Entries = append(r.Entries, refEntryChange{Change: Changed, Kind: d.Kind, Name: d.Name, DN: d.DN,
				Attributes: changes, desired: d, current: c})
			r.Summary.Changed++
		}
	}
	for _, c := range current.Entries() {
		if desired.entries[c.Key] != nil || IsStructure(c.Kind) || c.Kind == objkind.Settings {
			continue
		}
		r.Entries = append(r.Entries, refEntryChange{Change: Removed, Kind: c.Kind, Name: c.Name, DN: c.DN,
			Attributes: refattributeChanges(nil, c.Attrs), current: c})
		r.Summary.Removed++
	}
	sort.SliceStable(r.Entries, func(i, j int) bool { return refless(r.Entries[i].entry(), r.Entries[j].entry()) })
	r.Identical = len(r.Entries) == 0
	return r
}

func (c refEntryChange) entry() *refEntry {
	if c.desired != nil {
		return c.desired
	}
	return c.current
}

// attributeChanges compares two entries' attributes under the schema's
// matching rules.
func refattributeChanges(desired, current ldapschema.Attrs) []refAttributeChange {
	names := map[string]string{} // lower-case -> canonical
	for n := range desired {
		names[strings.ToLower(n)] = n
	}
	for n := range current {
		if _, ok := names[strings.ToLower(n)]; !ok {
			names[strings.ToLower(n)] = n
		}
	}
	all := ldapschema.Attrs{}
	for _, n := range names {
		all[n] = nil
	}
	out := []refAttributeChange{}
	for _, name := range refsortedNames(all) {
		d, c := reflookupFold(desired, name), reflookupFold(current, name)
		if ldapschema.EqualValues(name, d, c) {
			continue
		}
		// Since issue 22: an attribute export leaves out (a password)
		// that the desired entry lacks is no change.
		if info, _ := ldapschema.LookupAttribute(name); desired != nil && len(d) == 0 && info.Sensitive {
			continue
		}
		out = append(out, refdescribeChange(name, d, c))
	}
	return out
}

func refdescribeChange(name string, desired, current []string) refAttributeChange {
	dk, ck := ldapschema.ValueKeys(name, desired), ldapschema.ValueKeys(name, current)
	ch := refAttributeChange{Attribute: name, Current: ldapschema.SortValues(name, current),
		Desired: ldapschema.SortValues(name, desired), Removed: []string{}, Added: []string{}}
	for _, v := range ch.Current {
		if k := ldapschema.ValueKey(name, v); !dk[k] && ck[k] {
			ch.Removed = append(ch.Removed, v)
		}
	}
	for _, v := range ch.Desired {
		if k := ldapschema.ValueKey(name, v); !ck[k] && dk[k] {
			ch.Added = append(ch.Added, v)
		}
	}
	if ch.Current == nil {
		ch.Current = []string{}
	}
	if ch.Desired == nil {
		ch.Desired = []string{}
	}
	if info, _ := ldapschema.LookupAttribute(name); info.Sensitive {
		for _, list := range [][]string{ch.Current, ch.Desired, ch.Removed, ch.Added} {
			for i := range list {
				list[i] = HiddenValue
			}
		}
	}
	return ch
}

func reflookupFold(a ldapschema.Attrs, name string) []string {
	if v, ok := a[name]; ok {
		return v
	}
	for k, v := range a {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return nil
}

// Plan is what `cpactl apply` writes to make the current state match the
// desired one, in order: adds (parents before children, referred entries
// before the entries that refer to them), modifies, then, when pruning,
// deletes (children before parents, referrers before what they refer to).
// directory.Store.ApplyPlan runs it, as one transaction when the server
// can take it.
type refPlan struct {
	directory.Plan
	// Adds, Updates and Deletes count the entries added, modified and
	// deleted (not the writes that break reference cycles).
	Adds, Updates, Deletes int
	// Kept lists the objects only the current state holds, left in place
	// because pruning was not asked for.
	Kept []refEntryChange
}

// PlanApply plans the writes that turn current into desired, from their
// comparison r. With prune, objects only the current state holds are
// deleted. The problems say why the plan cannot be written (nothing is
// then planned): a structural object class that changes, an entry whose
// parent exists nowhere, an entry that exists in the directory but is not
// cpactl's.
func refPlanApply(desired, current *refState, r *refReport, prune bool) (*refPlan, []Problem) {
	p := &refPlan{}
	p.Conflict = "the directory"
	problems := refcheckParents(desired, current)
	var adds, deletes []*refEntry
	var updates []refEntryChange
	for _, c := range r.Entries {
		switch c.Change {
		case Added:
			if current.Present(c.DN) {
				problems = append(problems, Problem{DN: c.DN, Message: "exists in the directory but is not a cpactl " + c.Kind + " there: remove or rename it first"})
				continue
			}
			adds = append(adds, c.desired)
		case Changed:
			from, to := ldapschema.StructuralClass(c.current.Classes()), ldapschema.StructuralClass(c.desired.Classes())
			if !strings.EqualFold(from, to) {
				problems = append(problems, Problem{DN: c.DN, Message: fmt.Sprintf(
					"%s: its structural object class changes from %s to %s, which LDAP cannot do in place: delete the object first (or apply a file without it, with --prune), then apply again",
					c.Object(), from, to)})
				continue
			}
			updates = append(updates, c)
		case Removed:
			if prune {
				deletes = append(deletes, c.current)
			} else {
				p.Kept = append(p.Kept, c)
			}
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}

	for _, e := range reforderAdds(desired.DIT, adds) {
		p.Add(directory.AddWrite("add", e.Object(), e.DN, e.Attrs))
		p.Adds++
	}
	for _, c := range updates {
		w, err := refupdateWrite(desired.DIT, c)
		if err != nil {
			return nil, []Problem{{DN: c.DN, Message: err.Error()}}
		}
		p.Add(w)
		p.Updates++
	}
	ordered, breakers := reforderDeletes(current.DIT, deletes)
	p.Add(breakers...)
	for _, e := range ordered {
		p.Add(directory.DeleteWrite("delete", e.Object(), e.DN))
		p.Deletes++
	}
	return p, nil
}

// checkParents checks that the parent of every desired entry will exist:
// it is in the file, or it is in the directory and is structure (an object
// missing from the file would be pruned, or left with children the file
// does not explain).
func refcheckParents(desired, current *refState) []Problem {
	var out []Problem
	for _, d := range desired.Entries() {
		if d.Kind == objkind.Base {
			continue
		}
		parent := ldapschema.ParentOf(d.DN)
		switch pc := current.refEntry(parent); {
		case desired.refEntry(parent) != nil:
		case pc != nil && !IsStructure(pc.Kind):
			out = append(out, Problem{DN: d.DN, Message: fmt.Sprintf("its parent %s %s is not in the file: add it", pc.Kind, pc.Name)})
		case !current.Present(parent):
			out = append(out, Problem{DN: d.DN, Message: fmt.Sprintf(
				"its parent %s is neither in the directory nor in the file: add it to the file, or run `cpactl init` first", parent)})
		}
	}
	return out
}

// updateWrite is the modify of a changed entry: each attribute that differs
// replaced by the desired values (or removed), asserting the values read so
// that a concurrent change makes the whole apply fail with a conflict
// rather than be overwritten.
func refupdateWrite(dit ldapschema.DIT, c refEntryChange) (directory.Write, error) {
	var changes []ldap.Change
	var names, asserts, refs []string
	for _, a := range c.Attributes {
		// Since issue 22: the write names the references it adds.
		refs = append(refs, AddedReferences(dit, a.Attribute, reflookupFold(c.desired.Attrs, a.Attribute), reflookupFold(c.current.Attrs, a.Attribute))...)
		want := reflookupFold(c.desired.Attrs, a.Attribute)
		if len(want) == 0 {
			changes = append(changes, ldap.Change{Operation: ldap.DeleteAttribute,
				Modification: ldap.PartialAttribute{Type: a.Attribute}})
		} else {
			changes = append(changes, ldap.Change{Operation: ldap.ReplaceAttribute,
				Modification: ldap.PartialAttribute{Type: a.Attribute, Vals: want}})
		}
		names = append(names, a.Attribute)
		asserts = append(asserts, refAssertion(a.Attribute, reflookupFold(c.current.Attrs, a.Attribute)))
	}
	ctl, err := ldapconn.AssertionControl(ldapclient.And(asserts...))
	if err != nil {
		return directory.Write{}, err
	}
	return directory.ModifyWrite("update", fmt.Sprintf("%s (%s)", c.Object(), strings.Join(names, ", ")), c.DN, changes, ctl).
		Referring(refs...), nil
}

// Assertion returns the RFC 4528 filter that holds while attr still has
// the values read: the ranked preferred-site list pinned as
// directory.PreferredAssertion does; every value read present; no value
// when none was read. Values of attributes without an equality rule, and
// sensitive ones, are asserted present only.
func refAssertion(attr string, values []string) string {
	if ldapschema.IsOrderedAttribute(attr) {
		return directory.PreferredAssertion(values)
	}
	if len(values) == 0 {
		return "(!(" + attr + "=*))"
	}
	info, _ := ldapschema.LookupAttribute(attr)
	if info.Equality == ldapschema.EqualityNone || info.Sensitive {
		return "(" + attr + "=*)"
	}
	fs := make([]string, len(values))
	for i, v := range values {
		fs[i] = ldapclient.Filter(attr, v)
	}
	return ldapclient.And(fs...)
}

// references returns the entries e refers to (normalized DNs): the values
// of its DN-valued attributes, and the sites its preferred-site list names.
func refreferences(dit ldapschema.DIT, e *refEntry) []string {
	var out []string
	for name, values := range e.Attrs {
		if ldapschema.IsOrderedAttribute(name) {
			list, _ := ldapschema.DecodePreferredSites(values)
			for _, n := range list.Names() {
				out = append(out, ldapschema.NormalizeDN(dit.Site(n)))
			}
			continue
		}
		if info, _ := ldapschema.LookupAttribute(name); info.Equality == ldapschema.EqualityDN {
			for _, v := range values {
				out = append(out, ldapschema.NormalizeDN(v))
			}
		}
	}
	return out
}

// orderAdds puts parents before their children (the server needs it) and
// referred entries before their referrers (a reference never dangles; a
// cycle, such as two sites preferring each other, is cut at the first
// entry in report order, which is harmless as the adds go in one
// transaction).
func reforderAdds(dit ldapschema.DIT, adds []*refEntry) []*refEntry {
	set := map[string]*refEntry{}
	for _, e := range adds {
		set[e.Key] = e
	}
	hard, soft := map[*refEntry][]*refEntry{}, map[*refEntry][]*refEntry{}
	for _, e := range adds {
		if p := set[ldapschema.NormalizeDN(ldapschema.ParentOf(e.DN))]; p != nil {
			hard[e] = append(hard[e], p)
		}
		for _, k := range refreferences(dit, e) {
			if r := set[k]; r != nil && r != e {
				soft[e] = append(soft[e], r)
			}
		}
	}
	out, _ := reforder(adds, refless, hard, soft)
	return out
}

// orderDeletes puts children before their parents and referrers before
// what they refer to, the reverse of orderAdds. Deleted entries that refer
// to each other in a cycle (groups nested in each other, sites preferring
// each other) would leave a reference dangling between two deletes when
// the server cannot take them in one transaction: the returned writes,
// which go first, remove those references from the referrers.
func reforderDeletes(dit ldapschema.DIT, deletes []*refEntry) ([]*refEntry, []directory.Write) {
	set := map[string]*refEntry{}
	for _, e := range deletes {
		set[e.Key] = e
	}
	hard, soft := map[*refEntry][]*refEntry{}, map[*refEntry][]*refEntry{}
	for _, e := range deletes {
		if p := set[ldapschema.NormalizeDN(ldapschema.ParentOf(e.DN))]; p != nil {
			hard[p] = append(hard[p], e) // the child goes first
		}
		for _, k := range refreferences(dit, e) {
			if r := set[k]; r != nil && r != e {
				soft[r] = append(soft[r], e) // the referrer goes first
			}
		}
	}
	deleteFirst := func(a, b *refEntry) bool {
		if ra, rb := refrank(a.Kind), refrank(b.Kind); ra != rb {
			return ra > rb
		}
		return refless(a, b)
	}
	out, broken := reforder(deletes, deleteFirst, hard, soft)
	var writes []directory.Write
	preferred := map[*refEntry][]string{} // sites rewritten so far: their lists
	for _, b := range broken {
		target, referrer := b[0], b[1]
		if w, ok := refdropReference(dit, referrer, target, preferred); ok {
			writes = append(writes, w)
		}
	}
	return out, writes
}

// dropReference plans removing referrer's references to target, when its
// classes allow it to lose them.
func refdropReference(dit ldapschema.DIT, referrer, target *refEntry, preferred map[*refEntry][]string) (directory.Write, bool) {
	must, _, _ := ldapschema.ClassRules(referrer.Classes())
	var changes []ldap.Change
	var names []string
	for _, name := range refsortedNames(referrer.Attrs) {
		values := referrer.Attrs[name]
		if ldapschema.IsOrderedAttribute(name) {
			list, ok := preferred[referrer]
			if !ok {
				decoded, _ := ldapschema.DecodePreferredSites(values)
				list = decoded.Names()
			}
			var keep []string
			for _, n := range list {
				if ldapschema.NormalizeDN(dit.Site(n)) != target.Key {
					keep = append(keep, n)
				}
			}
			if len(keep) == len(list) {
				continue
			}
			preferred[referrer] = keep
			change := ldap.Change{Operation: ldap.ReplaceAttribute,
				Modification: ldap.PartialAttribute{Type: name, Vals: ldapschema.EncodePreferredSites(keep)}}
			if len(keep) == 0 {
				change = ldap.Change{Operation: ldap.DeleteAttribute, Modification: ldap.PartialAttribute{Type: name}}
			}
			changes = append(changes, change)
			names = append(names, name)
			continue
		}
		info, _ := ldapschema.LookupAttribute(name)
		if info.Equality != ldapschema.EqualityDN || must[strings.ToLower(name)] {
			continue
		}
		var drop []string
		for _, v := range values {
			if ldapschema.NormalizeDN(v) == target.Key {
				drop = append(drop, v)
			}
		}
		if len(drop) > 0 {
			changes = append(changes, ldap.Change{Operation: ldap.DeleteAttribute,
				Modification: ldap.PartialAttribute{Type: name, Vals: drop}})
			names = append(names, name)
		}
	}
	if len(changes) == 0 {
		return directory.Write{}, false
	}
	return directory.ModifyWrite("remove", fmt.Sprintf("%s from %s (%s)", target.Object(), referrer.Object(),
		strings.Join(names, ", ")), referrer.DN, changes), true
}

// order sorts entries so that each one comes after its hard and soft
// dependencies, the first in priority order (first) among those ready. A
// cycle of soft dependencies is cut at the first entry, in priority order,
// whose hard dependencies are met: the cut pairs (entry, dependency still
// pending) are returned.
func reforder(entries []*refEntry, first func(a, b *refEntry) bool, hard, soft map[*refEntry][]*refEntry) ([]*refEntry, [][2]*refEntry) {
	sorted := append([]*refEntry(nil), entries...)
	sort.SliceStable(sorted, func(i, j int) bool { return first(sorted[i], sorted[j]) })
	index := make(map[*refEntry]int, len(sorted))
	for i, e := range sorted {
		index[e] = i
	}
	n := len(sorted)
	hardLeft, softLeft := make([]int, n), make([]int, n)
	type dependent struct {
		i    int
		hard bool
	}
	dependents := make([][]dependent, n)
	for i, e := range sorted {
		for _, d := range hard[e] {
			hardLeft[i]++
			dependents[index[d]] = append(dependents[index[d]], dependent{i, true})
		}
		for _, d := range soft[e] {
			softLeft[i]++
			dependents[index[d]] = append(dependents[index[d]], dependent{i, false})
		}
	}
	done, queued := make([]bool, n), make([]bool, n)
	ready := &refintHeap{}
	for i := range sorted {
		if hardLeft[i] == 0 && softLeft[i] == 0 {
			heap.Push(ready, i)
			queued[i] = true
		}
	}
	out := make([]*refEntry, 0, n)
	var cut [][2]*refEntry
	next := 0 // every entry before it is done
	for len(out) < n {
		if ready.Len() == 0 {
			for next < n && done[next] {
				next++
			}
			pick := -1
			for i := next; i < n; i++ {
				if !done[i] && !queued[i] && hardLeft[i] == 0 {
					pick = i
					break
				}
			}
			if pick < 0 { // cannot happen: parents form a tree
				for i := next; i < n; i++ {
					if !done[i] && !queued[i] {
						pick = i
						break
					}
				}
			}
			for _, d := range soft[sorted[pick]] {
				if !done[index[d]] {
					cut = append(cut, [2]*refEntry{sorted[pick], d})
				}
			}
			heap.Push(ready, pick)
			queued[pick] = true
		}
		i := heap.Pop(ready).(int)
		done[i] = true
		out = append(out, sorted[i])
		for _, d := range dependents[i] {
			if d.hard {
				hardLeft[d.i]--
			} else {
				softLeft[d.i]--
			}
			if !done[d.i] && !queued[d.i] && hardLeft[d.i] <= 0 && softLeft[d.i] <= 0 {
				heap.Push(ready, d.i)
				queued[d.i] = true
			}
		}
	}
	return out, cut
}

// intHeap is a min-heap of indices (priority order).
type refintHeap []int

func (h refintHeap) Len() int           { return len(h) }
func (h refintHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h refintHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *refintHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *refintHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
