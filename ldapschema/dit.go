package ldapschema

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/go-ldap/ldap/v3"
)

// DefaultBase is the base DN of Horizon's global data layer (docs/schema.md).
const DefaultBase = "dc=vdiglobal,dc=vmware,dc=int"

// DIT builds the DNs of cpactl's directory layout under one base DN. Every
// name is escaped with ldap.EscapeDN: no raw input ever reaches a DN.
//
//	<base>
//	  ou=Properties / ou=Global / cn=Common
//	  ou=Sites        cn=<site>
//	  ou=Pods         cn=<pod> / cn=<connection server|pool|farm> / cn=<rds host>
//	  ou=Entitlements cn=<global entitlement>
//	  ou=HomeSites    cn=<row id>
//	  ou=People       uid=<user>
//	  ou=Groups       cn=<group>
//	  ou=Computers    cn=<client computer>
//	  ou=Sessions     cn=<session id>
//	  ou=Assignments  cn=<row id>
type DIT struct {
	Base string
}

func (d DIT) under(rdn string) string { return rdn + "," + d.Base }

// RDN renders the relative DN attr=value, value escaped (RFC 4514): the one
// place a DN component is built.
func RDN(attr, value string) string { return attr + "=" + ldap.EscapeDN(value) }

// RDNOf renders a parsed RDN, its attribute values escaped and joined by
// "+" (a multi-valued RDN).
func RDNOf(avas []*ldap.AttributeTypeAndValue) string {
	if len(avas) == 1 {
		return RDN(avas[0].Type, avas[0].Value)
	}
	parts := make([]string, len(avas))
	for i, a := range avas {
		parts[i] = RDN(a.Type, a.Value)
	}
	return strings.Join(parts, "+")
}

// Properties is ou=Properties,<base>.
func (d DIT) Properties() string { return d.under("ou=Properties") }

// Global is ou=Global,ou=Properties,<base>.
func (d DIT) Global() string { return "ou=Global," + d.Properties() }

// Settings is the DN of the global settings entry, cn=Common.
func (d DIT) Settings() string { return "cn=Common," + d.Global() }

// Sites is the container of sites.
func (d DIT) Sites() string { return d.under("ou=Sites") }

// Pods is the container of pods (and, below them, of Connection Servers,
// pools, farms and RDS hosts).
func (d DIT) Pods() string { return d.under("ou=Pods") }

// Entitlements is the container of global entitlements.
func (d DIT) Entitlements() string { return d.under("ou=Entitlements") }

// HomeSites is the container of home-site rows.
func (d DIT) HomeSites() string { return d.under("ou=HomeSites") }

// People is the container of users.
func (d DIT) People() string { return d.under("ou=People") }

// Groups is the container of groups.
func (d DIT) Groups() string { return d.under("ou=Groups") }

// Computers is the container of client computers.
func (d DIT) Computers() string { return d.under("ou=Computers") }

// Sessions is the container of session records.
func (d DIT) Sessions() string { return d.under("ou=Sessions") }

// Assignments is the container of pod assignments.
func (d DIT) Assignments() string { return d.under("ou=Assignments") }

// Trash is the container where a transaction moves the entries it deletes
// (slapd 2.5's back-mdb cannot delete, inside a transaction, an entry whose
// parent is left without children); cpactl empties it right after the
// commit. It is not part of the layout `cpactl init` creates.
func (d DIT) Trash() string { return d.under("ou=Trash") }

// LayoutsAround returns the DNs above base that would hold base inside
// their layout: every ancestor X of base such that base is one of the
// containers of a layout under X (ou=Sites,X, ou=Global,ou=Properties,X,
// ou=Trash,X...) or lies below one (cn=India,ou=Sites,X), nearest first.
// A base given as ou=Sites,dc=example is then the layout's container, not
// the federation's base: `cpactl init` there would nest a second layout
// inside the first.
func LayoutsAround(base string) []string {
	var out []string
	for x := ParentOf(base); x != ""; x = ParentOf(x) {
		d := DIT{Base: x}
		for _, c := range append(d.Containers(), d.Trash()) {
			if IsUnder(base, c) {
				out = append(out, x)
				break
			}
		}
	}
	return out
}

// Containers returns the organizational units cpactl creates, parents first.
func (d DIT) Containers() []string {
	return []string{d.Properties(), d.Global(), d.Sites(), d.Pods(), d.Entitlements(), d.HomeSites(),
		d.People(), d.Groups(), d.Computers(), d.Sessions(), d.Assignments()}
}

// Site is the DN of the named site.
func (d DIT) Site(name string) string { return RDN(AttrCN, name) + "," + d.Sites() }

// Pod is the DN of the named pod.
func (d DIT) Pod(name string) string { return RDN(AttrCN, name) + "," + d.Pods() }

// ConnectionServer is the DN of a Connection Server of a pod.
func (d DIT) ConnectionServer(pod, name string) string { return RDN(AttrCN, name) + "," + d.Pod(pod) }

// Pool is the DN of a pool of a pod.
func (d DIT) Pool(pod, name string) string { return RDN(AttrCN, name) + "," + d.Pod(pod) }

// Farm is the DN of an RDS farm of a pod.
func (d DIT) Farm(pod, name string) string { return RDN(AttrCN, name) + "," + d.Pod(pod) }

// Host is the DN of an RDS host of a farm.
func (d DIT) Host(pod, farm, name string) string { return RDN(AttrCN, name) + "," + d.Farm(pod, farm) }

// Entitlement is the DN of the named global entitlement.
func (d DIT) Entitlement(name string) string { return RDN(AttrCN, name) + "," + d.Entitlements() }

// User is the DN of the user with this uid.
func (d DIT) User(uid string) string { return RDN(AttrUID, uid) + "," + d.People() }

// Group is the DN of the named group.
func (d DIT) Group(name string) string { return RDN(AttrCN, name) + "," + d.Groups() }

// Computer is the DN of the named client computer.
func (d DIT) Computer(name string) string { return RDN(AttrCN, name) + "," + d.Computers() }

// Session is the DN of the session with this ID.
func (d DIT) Session(id string) string { return RDN(AttrCN, id) + "," + d.Sessions() }

// HomeSite is the DN of the home-site row of a user or group (principalDN)
// for one global entitlement (entitlementDN, "" for the global home site).
// There is one row per (principal, entitlement): the RDN is derived from
// both, so setting a home site again replaces the row.
func (d DIT) HomeSite(principalDN, entitlementDN string) string {
	return RDN(AttrCN, RowID(principalDN, entitlementDN)) + "," + d.HomeSites()
}

// Assignment is the DN of the pod assignment of a user for one entitlement.
func (d DIT) Assignment(userDN, entitlementDN string) string {
	return RDN(AttrCN, RowID(userDN, entitlementDN)) + "," + d.Assignments()
}

// RowID derives a stable row name from DNs, compared case-insensitively
// and independent of spacing and escaping variants.
func RowID(dns ...string) string {
	h := sha256.New()
	for _, dn := range dns {
		fmt.Fprintf(h, "%s\x00", NormalizeDN(dn))
	}
	return hex.EncodeToString(h.Sum(nil))[:20]
}

// NormalizeDN returns a canonical form of dn for comparisons and map keys:
// attribute types and values lower-cased, escaping re-done by cpactl's
// rules. A DN that does not parse is returned lower-cased.
//
// The common DN (printable ASCII, no escapes, quotes, '#', '+' or ';') is
// normalized without parsing, and a DN already in canonical form is
// returned as it is, without allocating; any other DN goes through
// ldap.ParseDN. Both give the same result (FuzzDNFastPaths checks it).
func NormalizeDN(dn string) string {
	if dn == "" {
		return ""
	}
	if rdns, ok := scanSimpleDN(dn); ok {
		return rdns.normalize(dn)
	}
	return normalizeParsed(dn)
}

// NormalizeDNChecked is NormalizeDN for a DN that must parse: it returns
// go-ldap's parse error for one that does not, and otherwise the same key,
// with one parse at most (none for a simple DN).
func NormalizeDNChecked(dn string) (string, error) {
	if dn == "" {
		return "", nil
	}
	if rdns, ok := scanSimpleDN(dn); ok {
		return rdns.normalize(dn), nil
	}
	parsed, err := ldap.ParseDN(dn)
	if err != nil {
		return "", err
	}
	return normalizeFrom(parsed), nil
}

// normalizeParsed is NormalizeDN through ldap.ParseDN.
func normalizeParsed(dn string) string {
	parsed, err := ldap.ParseDN(dn)
	if err != nil {
		return strings.ToLower(dn)
	}
	return normalizeFrom(parsed)
}

func normalizeFrom(parsed *ldap.DN) string {
	parts := make([]string, 0, len(parsed.RDNs))
	for _, r := range parsed.RDNs {
		avas := make([]string, 0, len(r.Attributes))
		for _, a := range r.Attributes {
			avas = append(avas, RDN(strings.ToLower(a.Type), strings.ToLower(a.Value)))
		}
		// A multi-valued RDN is a set: "a=1+b=2" and "b=2+a=1" name the
		// same entry.
		slices.Sort(avas)
		parts = append(parts, strings.Join(avas, "+"))
	}
	return strings.Join(parts, ",")
}

// EqualDN reports whether two DNs name the same entry.
func EqualDN(a, b string) bool { return a == b || NormalizeDN(a) == NormalizeDN(b) }

// NameOf returns the value of the first RDN of dn: the object's name. It
// returns "" when dn does not parse.
func NameOf(dn string) string {
	if rdns, ok := scanSimpleDN(dn); ok {
		return dn[rdns.valueStart:rdns.valueEnd]
	}
	parsed, err := ldap.ParseDN(dn)
	if err != nil || len(parsed.RDNs) == 0 || len(parsed.RDNs[0].Attributes) == 0 {
		return ""
	}
	return parsed.RDNs[0].Attributes[0].Value
}

// FirstRDN returns the attribute types and values of dn's first RDN (types
// as written, values decoded); false when dn does not parse or is empty.
func FirstRDN(dn string) ([]ldap.AttributeTypeAndValue, bool) {
	if rdns, ok := scanSimpleDN(dn); ok {
		return []ldap.AttributeTypeAndValue{{Type: dn[rdns.typeStart:rdns.typeEnd],
			Value: dn[rdns.valueStart:rdns.valueEnd]}}, true
	}
	parsed, err := ldap.ParseDN(dn)
	if err != nil || len(parsed.RDNs) == 0 {
		return nil, false
	}
	out := make([]ldap.AttributeTypeAndValue, len(parsed.RDNs[0].Attributes))
	for i, a := range parsed.RDNs[0].Attributes {
		out[i] = *a
	}
	return out, true
}

// ParentOf returns the DN of dn's parent, "" when it has none or does not
// parse.
func ParentOf(dn string) string {
	if rdns, ok := scanSimpleDN(dn); ok {
		return rdns.parent(dn)
	}
	parsed, err := ldap.ParseDN(dn)
	if err != nil || len(parsed.RDNs) < 2 {
		return ""
	}
	return (&ldap.DN{RDNs: parsed.RDNs[1:]}).String()
}

// simpleDN is what scanSimpleDN learns of a simple DN.
type simpleDN struct {
	// The first RDN's type is dn[typeStart:typeEnd] and its value
	// dn[valueStart:valueEnd] (outer spaces excluded); the RDN ends at
	// firstEnd (its comma, or the end of dn).
	typeStart, typeEnd, valueStart, valueEnd, firstEnd int
	// canonical is set when dn is already what NormalizeDN returns: no upper
	// case letter, no space around a type or a value; tight when there is no
	// space around a type or a value (so that NormalizeDN lower-cases dn).
	canonical, tight bool
	// parentCanonical is the same for the part after the first RDN, as
	// ParentOf renders it (which keeps the values' case).
	parentCanonical bool
	// count is the number of RDNs.
	count int
}

// simpleDNByte reports whether c may appear in a simple DN: printable ASCII
// except those that are escaped, decoded or refused (RFC 4514): backslash,
// '"', the separators '+' and ';', '<', '>', and '#', which may start a
// BER-encoded value.
func simpleDNByte(c byte) bool { return simpleDNBytes[c] }

var simpleDNBytes = func() (t [256]bool) {
	for c := ' '; c <= '~'; c++ {
		t[c] = !strings.ContainsRune(`\"+;<>#`, c)
	}
	return t
}()

// scanSimpleDN reports whether dn is a simple DN: one or more comma-separated
// RDNs type=value of simpleDNByte characters, each type non-empty once its
// outer spaces are trimmed. For such a DN, ldap.ParseDN succeeds with one
// attribute per RDN whose type and value are the trimmed text, and
// ldap.EscapeDN of a lower-cased value changes nothing; so the fast paths
// agree with the parsing ones.
func scanSimpleDN(dn string) (simpleDN, bool) {
	d := simpleDN{canonical: true, tight: true, parentCanonical: true}
	if dn == "" {
		return d, false
	}
	start, eq, n := 0, -1, 0
	for i := 0; i <= len(dn); i++ {
		c := byte(',') // the end of dn closes the last RDN
		if i < len(dn) {
			c = dn[i]
			if !simpleDNByte(c) {
				return d, false
			}
			if 'A' <= c && c <= 'Z' {
				d.canonical = false
				if n > 0 && eq < 0 {
					d.parentCanonical = false // in a type: ParentOf lower-cases it
				}
			}
		}
		switch {
		case c == '=' && eq < 0:
			eq = i
		case c == ',':
			if eq < 0 {
				return d, false
			}
			ts, te := trimSpaces(dn, start, eq)
			vs, ve := trimSpaces(dn, eq+1, i)
			if ts == te {
				return d, false
			}
			if ts != start || te != eq || vs != eq+1 || ve != i {
				d.canonical, d.tight = false, false
				if n > 0 {
					d.parentCanonical = false
				}
			}
			if n == 0 {
				d.typeStart, d.typeEnd, d.valueStart, d.valueEnd, d.firstEnd = ts, te, vs, ve, i
			}
			start, eq, n = i+1, -1, n+1
		}
	}
	d.count = n
	return d, true
}

// trimSpaces returns the bounds of dn[from:to] without its outer spaces.
func trimSpaces(dn string, from, to int) (int, int) {
	for from < to && dn[from] == ' ' {
		from++
	}
	for to > from && dn[to-1] == ' ' {
		to--
	}
	return from, to
}

// normalize renders a simple DN as NormalizeDN does: each RDN's trimmed type
// and value, lower-cased.
func (d simpleDN) normalize(dn string) string {
	switch {
	case d.canonical:
		return dn
	case d.tight:
		var b strings.Builder
		b.Grow(len(dn))
		writeLower(&b, dn)
		return b.String()
	}
	return writeRDNs(dn, 0, true)
}

// parent renders the RDNs after the first as ParentOf does: types
// lower-cased, values as written.
func (d simpleDN) parent(dn string) string {
	if d.firstEnd >= len(dn) {
		return ""
	}
	if d.parentCanonical {
		return dn[d.firstEnd+1:]
	}
	return writeRDNs(dn, d.firstEnd+1, false)
}

// writeRDNs renders the RDNs of a simple DN, from the one starting at from,
// each as its trimmed type in lower case, '=' and its trimmed value
// (lower-cased with lowerValues), separated by commas.
func writeRDNs(dn string, from int, lowerValues bool) string {
	var b strings.Builder
	b.Grow(len(dn) - from)
	for start := from; start <= len(dn); {
		end := strings.IndexByte(dn[start:], ',')
		if end < 0 {
			end = len(dn)
		} else {
			end += start
		}
		eq := start + strings.IndexByte(dn[start:end], '=')
		ts, te := trimSpaces(dn, start, eq)
		vs, ve := trimSpaces(dn, eq+1, end)
		if start > from {
			b.WriteByte(',')
		}
		writeLower(&b, dn[ts:te])
		b.WriteByte('=')
		if lowerValues {
			writeLower(&b, dn[vs:ve])
		} else {
			b.WriteString(dn[vs:ve])
		}
		start = end + 1
	}
	return b.String()
}

func writeLower(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
}

// IsUnder reports whether dn is base or inside base's subtree. Two simple
// DNs without spaces around their types and values (whose normalized forms
// are their lower case) compare without allocating.
func IsUnder(dn, base string) bool {
	if d, ok := scanSimpleDN(dn); ok && d.tight {
		if b, ok := scanSimpleDN(base); ok && b.tight {
			if len(dn) == len(base) {
				return asciiEqualFold(dn, base)
			}
			cut := len(dn) - len(base)
			return cut > 0 && dn[cut-1] == ',' && asciiEqualFold(dn[cut:], base)
		}
	}
	n, b := NormalizeDN(dn), NormalizeDN(base)
	return n == b || strings.HasSuffix(n, ","+b)
}

// asciiEqualFold compares ASCII strings ignoring the case of letters.
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
