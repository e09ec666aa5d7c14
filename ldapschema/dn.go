package ldapschema

import (
	"strings"

	"github.com/go-ldap/ldap/v3"
)

// NormalDN is a distinguished name read once: the text as written, its key
// (NormalizeDN's canonical form, to compare and index by), its name (the
// value of its first RDN, as NameOf gives it), its depth and its parent,
// all found by one scan (one ldap.ParseDN for a DN outside the common
// form), so that code that carries a DN from a read to a plan and its
// writes compares, names and walks it up without parsing it again.
//
// The zero NormalDN is the empty name. A text that does not parse as a DN keeps
// NormalizeDN's key for it (its lower case), with no name, no parent and
// depth 0, as NameOf, ParentOf and NormalizeDN treat it.
type NormalDN struct {
	text, key, name string
	// parent is ParentOf(text): a slice of text for the common form.
	parent string
	// depth is the number of RDNs, 0 when text does not parse.
	depth int
}

// NormalDNOf reads dn once (see NormalDN).
func NormalDNOf(dn string) NormalDN {
	if dn == "" {
		return NormalDN{}
	}
	if rdns, ok := scanSimpleDN(dn); ok {
		return NormalDN{text: dn, key: rdns.normalize(dn), name: dn[rdns.valueStart:rdns.valueEnd],
			parent: rdns.parent(dn), depth: rdns.count}
	}
	parsed, err := ldap.ParseDN(dn)
	if err != nil {
		return NormalDN{text: dn, key: strings.ToLower(dn)}
	}
	d := NormalDN{text: dn, key: normalizeFrom(parsed), depth: len(parsed.RDNs)}
	if len(parsed.RDNs) > 0 && len(parsed.RDNs[0].Attributes) > 0 {
		d.name = parsed.RDNs[0].Attributes[0].Value
	}
	if len(parsed.RDNs) > 1 {
		d.parent = (&ldap.DN{RDNs: parsed.RDNs[1:]}).String()
	}
	return d
}

// String returns the DN as it was written.
func (d NormalDN) String() string { return d.text }

// Key returns the normalized DN (NormalizeDN's): equal keys name the same
// entry.
func (d NormalDN) Key() string { return d.key }

// Name returns the value of the first RDN, the object's name (NameOf's).
func (d NormalDN) Name() string { return d.name }

// Depth returns the number of RDNs: 0 for the empty DN, or one that does
// not parse.
func (d NormalDN) Depth() int { return d.depth }

// Equal reports whether d and o name the same entry (EqualDN's answer).
func (d NormalDN) Equal(o NormalDN) bool { return d.key == o.key }

// Parent returns the DN of d's parent (ParentOf's text, the key a slice
// of d's key), the zero DN when d has none. Its name is read from the
// parent's text, its key sliced from d's.
func (d NormalDN) Parent() NormalDN {
	if d.parent == "" {
		return NormalDN{}
	}
	return keyedDN(d.parent, ParentKey(d.key))
}

// keyedDN is NormalDNOf for a DN whose key is known (a slice of its child's).
func keyedDN(dn, key string) NormalDN {
	if rdns, ok := scanSimpleDN(dn); ok {
		return NormalDN{text: dn, key: key, name: dn[rdns.valueStart:rdns.valueEnd], parent: rdns.parent(dn), depth: rdns.count}
	}
	d := NormalDNOf(dn)
	d.key = key
	return d
}

// ParentKey returns the key of d's parent ("" when it has none): a slice of
// d's key.
func (d NormalDN) ParentKey() string {
	if d.parent == "" {
		return ""
	}
	return ParentKey(d.key)
}

// ParentKey returns the key of the parent of the entry whose key (a
// NormalizeDN result of a DN that parses) is key: what follows its first
// unescaped comma, "" when there is none. NormalizeDN escapes every comma
// inside a value with a backslash, so no parsing is needed.
func ParentKey(key string) string {
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

// IsUnder reports whether d is base or inside base's subtree (IsUnder's
// answer), comparing keys.
func (d NormalDN) IsUnder(base NormalDN) bool {
	cut := len(d.key) - len(base.key)
	return cut == 0 && d.key == base.key ||
		cut > 0 && d.key[cut-1] == ',' && d.key[cut:] == base.key
}
