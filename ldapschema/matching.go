package ldapschema

import (
	"math/big"
	"sort"
	"strings"
	"sync"

	"github.com/cpactl/cpactl/internal/nearest"
)

// AttributeInfo is what comparing and writing values of an attribute type
// needs: its canonical name and how its equality rule compares values.
type AttributeInfo struct {
	// Name is the canonical name ("cn" for commonName), followed by the
	// options of the name looked up (";lang-fr"), if any.
	Name      string
	Equality  Equality
	Single    bool
	Sensitive bool
	// Own is set for cpactl's attribute types.
	Own bool
}

// ClassInfo is one object class cpactl knows: its own, or a standard one.
type ClassInfo struct {
	Name string
	Kind ClassKind
	Sup  string // "" for top
	Must []string
	May  []string
	Own  bool
}

type catalog struct {
	attrs   map[string]AttributeInfo // lower-case name or alias -> info
	classes map[string]ClassInfo     // lower-case name -> info
}

var knownSchema = sync.OnceValue(func() catalog {
	c := catalog{attrs: map[string]AttributeInfo{}, classes: map[string]ClassInfo{}}
	for _, a := range Attributes {
		eq := EqualityCaseIgnore
		switch a.Syntax {
		case Integer:
			eq = EqualityInteger
		case Boolean:
			eq = EqualityBoolean
		case DN:
			eq = EqualityDN
		}
		c.attrs[strings.ToLower(a.Name)] = AttributeInfo{Name: a.Name, Equality: eq, Single: a.Single, Own: true}
	}
	for _, a := range StandardAttributes {
		info := AttributeInfo{Name: a.Name, Equality: a.Equality, Single: a.Single, Sensitive: a.Sensitive}
		for _, n := range append([]string{a.Name}, a.Aliases...) {
			c.attrs[strings.ToLower(n)] = info
		}
	}
	for _, k := range Classes {
		c.classes[strings.ToLower(k.Name)] = ClassInfo{Name: k.Name, Kind: k.Kind, Sup: ClassTop, Must: k.Must, May: k.May, Own: true}
	}
	for _, k := range StandardClasses {
		c.classes[strings.ToLower(k.Name)] = ClassInfo{Name: k.Name, Kind: k.Kind, Sup: k.Sup, Must: k.Must, May: k.May}
	}
	return c
})

// LookupAttribute finds an attribute type by any of its names, ignoring
// case: cpactl's own (Attributes) and the standard ones
// (StandardAttributes). Attribute options ("description;lang-fr") are
// kept, lower-cased, after the canonical name.
func LookupAttribute(name string) (AttributeInfo, bool) {
	base, options, _ := strings.Cut(name, ";")
	info, ok := knownSchema().attrs[strings.ToLower(base)]
	if ok && options != "" {
		info.Name += ";" + strings.ToLower(options)
	}
	return info, ok
}

// NearestAttribute returns the attribute type name nearest to a name no
// schema defines (pae-PreferedSite: pae-PreferredSite), among cpactl's
// attributes and the standard ones; "" when none is near.
func NearestAttribute(name string) string {
	base, _, _ := strings.Cut(name, ";")
	f := nearest.New(base)
	for _, a := range Attributes {
		f.Add(a.Name)
	}
	for _, a := range StandardAttributes {
		f.Add(a.Name)
	}
	best, _ := f.Best()
	return best
}

// LookupClass finds an object class cpactl knows, ignoring case.
func LookupClass(name string) (ClassInfo, bool) {
	c, ok := knownSchema().classes[strings.ToLower(strings.TrimSpace(name))]
	return c, ok
}

// operational lists the operational attributes slapd 2.5 maintains (and
// its memberof and ppolicy overlays add); `ldapsearch '*' +` returns them.
// They are never compared or written.
var operational = map[string]bool{
	"createtimestamp": true, "modifytimestamp": true, "creatorsname": true, "modifiersname": true,
	"entryuuid": true, "entrycsn": true, "entrydn": true, "structuralobjectclass": true,
	"subschemasubentry": true, "hassubordinates": true, "numsubordinates": true, "contextcsn": true,
	"memberof": true, "pwdchangedtime": true, "pwdaccountlockedtime": true, "pwdfailuretime": true,
	"pwdhistory": true, "pwdgraceusetime": true, "pwdreset": true, "pwdpolicysubentry": true,
	"pwdlastsuccess": true, "entryttl": true, "governingstructurerule": true, "namingcsn": true,
	"openldapaci": true, "authzto": true, "authzfrom": true, "monitorcontext": true, "configcontext": true,
}

// IsOperational reports whether name is an operational attribute that the
// server maintains (createTimestamp, entryUUID, memberOf, ...).
func IsOperational(name string) bool {
	base, _, _ := strings.Cut(name, ";")
	return operational[strings.ToLower(base)]
}

// ValueKey returns the form in which the equality rule of attr compares v:
// two values match exactly when their keys are equal. Unknown attributes
// compare as case-ignore strings.
func ValueKey(attr, v string) string {
	eq := EqualityCaseIgnore
	if info, ok := LookupAttribute(attr); ok {
		eq = info.Equality
	}
	return eq.Key(v)
}

// Key returns the form in which the rule compares v (ValueKey for an
// attribute already looked up). A value already in that form is its own
// key, without allocating, for the usual strings and integers.
func (eq Equality) Key(v string) string {
	switch eq {
	case EqualityDN:
		return NormalizeDN(v)
	case EqualityInteger:
		if canonicalInteger(v) {
			return v
		}
		var n big.Int
		if _, ok := n.SetString(strings.TrimSpace(v), 10); ok {
			return n.String()
		}
		return strings.TrimSpace(v)
	case EqualityBoolean:
		return strings.ToUpper(strings.TrimSpace(v))
	case EqualityTelephone:
		return strings.ToLower(strings.Map(func(r rune) rune {
			if r == ' ' || r == '-' {
				return -1
			}
			return r
		}, v))
	case EqualityNumericString:
		return strings.ReplaceAll(v, " ", "")
	case EqualityObjectIdentifier:
		return strings.ToLower(strings.TrimSpace(v))
	case EqualityExact, EqualityNone:
		return v
	}
	if canonicalCaseIgnore(v) {
		return v
	}
	return strings.ToLower(strings.Join(strings.Fields(v), " "))
}

// canonicalInteger reports whether v is an integer as big.Int writes it:
// "0", or digits without a leading zero, after an optional minus.
func canonicalInteger(v string) bool {
	d := strings.TrimPrefix(v, "-")
	if d == "" || d[0] == '0' && (len(d) > 1 || len(v) > 1) {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}

// canonicalCaseIgnore reports whether v is its own case-ignore key: printable
// ASCII without upper case, outer spaces or two spaces in a row.
func canonicalCaseIgnore(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c < ' ' || c > '~' || 'A' <= c && c <= 'Z':
			return false
		case c == ' ' && (i == 0 || i == len(v)-1 || v[i-1] == ' '):
			return false
		}
	}
	return true
}

// EqualValues reports whether a and b hold the same values of attr under
// its matching rule. Values form a set (order does not matter), except the
// ranked preferred-site list, which compares as site names in rank order
// (so {1}US {0}UK equals {0}UK {1}US); a list with malformed values or rank
// gaps compares value by value. The class top, implied for every entry, is
// ignored in objectClass.
func EqualValues(attr string, a, b []string) bool {
	if (len(a) == 0) != (len(b) == 0) && !strings.EqualFold(attr, AttrObjectClass) {
		return false // no key to compute: only objectClass has a value (top) that counts as none
	}
	if IsOrderedAttribute(attr) {
		x, okA := rankedNames(a)
		y, okB := rankedNames(b)
		if okA && okB {
			if len(x) != len(y) {
				return false
			}
			for i := range x {
				if ValueKey(attr, x[i]) != ValueKey(attr, y[i]) {
					return false
				}
			}
			return true
		}
	}
	x, y := ValueKeys(attr, a), ValueKeys(attr, b)
	if strings.EqualFold(attr, AttrObjectClass) {
		top := strings.ToLower(ClassTop)
		delete(x, top)
		delete(y, top)
	}
	return sameKeys(x, y)
}

// IsOrderedAttribute reports whether the values of attr carry a rank and
// compare in rank order (pae-PreferredSite).
func IsOrderedAttribute(attr string) bool {
	base, _, _ := strings.Cut(attr, ";")
	return strings.EqualFold(base, AttrPreferredSite)
}

// rankedNames decodes a preferred-site list into names in rank order;
// false when a value is malformed or the ranks have gaps.
func rankedNames(values []string) ([]string, bool) {
	list, err := DecodePreferredSites(values)
	if err != nil || list.Gaps {
		return nil, false
	}
	return list.Names(), true
}

// ValueKeys returns the set of keys of values (ValueKey).
func ValueKeys(attr string, values []string) map[string]bool {
	keys := make(map[string]bool, len(values))
	for _, v := range values {
		keys[ValueKey(attr, v)] = true
	}
	return keys
}

func sameKeys(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// SortValues orders values for display: a preferred-site list in rank
// order, anything else by value key, then as written.
func SortValues(attr string, values []string) []string {
	out := append([]string(nil), values...)
	if IsOrderedAttribute(attr) {
		sort.SliceStable(out, func(i, j int) bool {
			ri, ei := ParsePreferredSite(out[i])
			rj, ej := ParsePreferredSite(out[j])
			if (ei == nil) != (ej == nil) {
				return ei == nil
			}
			if ei == nil && ri.Rank != rj.Rank {
				return ri.Rank < rj.Rank
			}
			return out[i] < out[j]
		})
		return out
	}
	sort.SliceStable(out, func(i, j int) bool {
		ki, kj := ValueKey(attr, out[i]), ValueKey(attr, out[j])
		if ki != kj {
			return ki < kj
		}
		return out[i] < out[j]
	})
	return out
}

// ClassRules returns what an entry with these object classes (and their
// superclasses) must hold and may hold, by canonical attribute name in
// lower case, and the class names cpactl does not know.
func ClassRules(classes []string) (must, may map[string]bool, unknown []string) {
	must, may = map[string]bool{}, map[string]bool{}
	seen := map[string]bool{}
	var walk func(name string) bool
	walk = func(name string) bool {
		key := strings.ToLower(strings.TrimSpace(name))
		if seen[key] {
			return true
		}
		c, ok := LookupClass(name)
		if !ok {
			return false
		}
		seen[key] = true
		for _, a := range c.Must {
			must[canonicalLower(a)] = true
		}
		for _, a := range c.May {
			may[canonicalLower(a)] = true
		}
		if c.Sup != "" {
			walk(c.Sup)
		}
		return true
	}
	walk(ClassTop)
	for _, c := range classes {
		if !walk(c) {
			unknown = append(unknown, c)
		}
	}
	return must, may, unknown
}

func canonicalLower(name string) string {
	if info, ok := LookupAttribute(name); ok {
		return strings.ToLower(info.Name)
	}
	return strings.ToLower(name)
}

// StructuralClass returns the entry's structural object class: among the
// structural classes listed, the one no other listed class derives from
// ("" when there is none). A change of it cannot be made by a modify: LDAP
// forbids changing an entry's structural class.
func StructuralClass(classes []string) string {
	var structural []ClassInfo
	for _, name := range classes {
		if c, ok := LookupClass(name); ok && c.Kind == Structural {
			structural = append(structural, c)
		}
	}
	isSuperOf := func(super, of ClassInfo) bool {
		for c, ok := of, true; ok && c.Sup != ""; c, ok = LookupClass(c.Sup) {
			if strings.EqualFold(c.Sup, super.Name) {
				return true
			}
		}
		return false
	}
	var best []string
	seen := map[string]bool{}
	for _, c := range structural {
		if seen[strings.ToLower(c.Name)] {
			continue
		}
		seen[strings.ToLower(c.Name)] = true
		derived := false
		for _, o := range structural {
			if isSuperOf(c, o) {
				derived = true
				break
			}
		}
		if !derived {
			best = append(best, c.Name)
		}
	}
	sort.Strings(best)
	return strings.Join(best, "+")
}
