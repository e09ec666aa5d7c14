package snapshot

import (
	"cmp"
	"fmt"
	"sort"
	"strconv"
	"strings"

	ber "github.com/go-asn1-ber/asn1-ber"
	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/ldapschema"
)

// How a snapshot matches filters: as cpactl's schema says a server would.

func project(e *ldap.Entry, attrs []string) *ldap.Entry {
	if len(attrs) == 0 {
		return e
	}
	out := &ldap.Entry{DN: e.DN, Attributes: make([]*ldap.EntryAttribute, 0, len(e.Attributes))}
	out.Attributes = keepAttrs(out.Attributes, e.Attributes, attrs)
	return out
}

// projectInPlace is project for an entry the caller owns (a snapshot's
// fresh decoding): it is cut down in place, with no copy.
func projectInPlace(e *ldap.Entry, attrs []string) *ldap.Entry {
	if len(attrs) == 0 {
		return e
	}
	out := keepAttrs(e.Attributes[:0], e.Attributes, attrs)
	clear(e.Attributes[len(out):])
	e.Attributes = out
	return e
}

// keepAttrs appends to dst the attributes of from that attrs asks for.
func keepAttrs(dst, from []*ldap.EntryAttribute, attrs []string) []*ldap.EntryAttribute {
	for _, a := range from {
		for _, want := range attrs {
			if want == "*" || strings.EqualFold(want, a.Name) {
				dst = append(dst, a)
				break
			}
		}
	}
	return dst
}

// Matches evaluates a compiled filter against an entry, as cpactl's
// schema says a server would.
func Matches(f *ber.Packet, e *ldap.Entry) (bool, error) {
	switch f.Tag {
	case ldap.FilterAnd:
		for _, c := range f.Children {
			ok, err := Matches(c, e)
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case ldap.FilterOr:
		for _, c := range f.Children {
			ok, err := Matches(c, e)
			if err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	case ldap.FilterNot:
		ok, err := Matches(f.Children[0], e)
		return !ok, err
	case ldap.FilterPresent:
		name := packetString(f)
		if strings.EqualFold(name, ldapschema.AttrObjectClass) {
			return true, nil
		}
		return len(e.GetEqualFoldAttributeValues(name)) > 0, nil
	case ldap.FilterEqualityMatch, ldap.FilterApproxMatch:
		name, want := packetString(f.Children[0]), packetString(f.Children[1])
		for _, v := range e.GetEqualFoldAttributeValues(name) {
			if compareValues(name, v, want) == 0 {
				return true, nil
			}
		}
		return false, nil
	case ldap.FilterGreaterOrEqual, ldap.FilterLessOrEqual:
		name, want := packetString(f.Children[0]), packetString(f.Children[1])
		for _, v := range e.GetEqualFoldAttributeValues(name) {
			c := compareValues(name, v, want)
			if (f.Tag == ldap.FilterGreaterOrEqual && c >= 0) || (f.Tag == ldap.FilterLessOrEqual && c <= 0) {
				return true, nil
			}
		}
		return false, nil
	case ldap.FilterSubstrings:
		name := packetString(f.Children[0])
		for _, v := range e.GetEqualFoldAttributeValues(name) {
			if substringMatch(strings.ToLower(v), f.Children[1].Children) {
				return true, nil
			}
		}
		return false, nil
	}
	if f.Tag == ldap.FilterExtensibleMatch {
		return extensibleMatch(f, e)
	}
	return false, fmt.Errorf("filter %q is not supported on a snapshot", ldap.FilterMap[uint64(f.Tag)])
}

// extensibleMatch evaluates the one extensible match cpactl sends:
// entryDN:dnOneLevelMatch:=DN (directory.ChildrenFilter).
func extensibleMatch(f *ber.Packet, e *ldap.Entry) (bool, error) {
	rule, attr, value := extensibleParts(f)
	if isChildrenMatch(rule, attr) {
		return ldapschema.EqualDN(ldapschema.ParentOf(e.DN), value), nil
	}
	return false, fmt.Errorf("filter (%s:%s:=...) is not supported on a snapshot", attr, rule)
}

func extensibleParts(f *ber.Packet) (rule, attr, value string) {
	for _, c := range f.Children {
		switch c.Tag {
		case ldap.MatchingRuleAssertionMatchingRule:
			rule = ber.DecodeString(c.Data.Bytes())
		case ldap.MatchingRuleAssertionType:
			attr = ber.DecodeString(c.Data.Bytes())
		case ldap.MatchingRuleAssertionMatchValue:
			value = ber.DecodeString(c.Data.Bytes())
		}
	}
	return rule, attr, value
}

func isChildrenMatch(rule, attr string) bool {
	return strings.EqualFold(attr, ldapschema.AttrEntryDN) && strings.EqualFold(rule, ldapschema.MatchDNOneLevel)
}

func packetString(p *ber.Packet) string {
	if s, ok := p.Value.(string); ok {
		return s
	}
	return p.Data.String()
}

func substringMatch(v string, parts []*ber.Packet) bool {
	pos := 0
	for _, p := range parts {
		s := strings.ToLower(packetString(p))
		switch p.Tag {
		case ldap.FilterSubstringsInitial:
			if !strings.HasPrefix(v, s) {
				return false
			}
			pos = len(s)
		case ldap.FilterSubstringsAny:
			i := strings.Index(v[pos:], s)
			if i < 0 {
				return false
			}
			pos += i + len(s)
		case ldap.FilterSubstringsFinal:
			if len(v)-len(s) < pos || !strings.HasSuffix(v, s) {
				return false
			}
		}
	}
	return true
}

// compareValues compares two values of an attribute the way the schema's
// matching rules do: integers numerically, DNs as DNs, booleans and strings
// ignoring case.
func compareValues(attr, a, b string) int {
	switch syntaxOf(attr) {
	case ldapschema.Integer:
		x, errA := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
		y, errB := strconv.ParseInt(strings.TrimSpace(b), 10, 64)
		if errA == nil && errB == nil {
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		}
	case ldapschema.DN:
		return strings.Compare(ldapschema.NormalizeDN(a), ldapschema.NormalizeDN(b))
	}
	if a == b {
		return 0
	}
	if c, ok := compareASCIIFold(a, b); ok {
		return c
	}
	return strings.Compare(foldSpace(a), foldSpace(b))
}

// compareASCIIFold compares a and b as foldSpace's results would compare,
// without building them, when both are ASCII with no space (objectClass
// names, most names): false when it cannot tell.
func compareASCIIFold(a, b string) (int, bool) {
	for i := 0; i < len(a) || i < len(b); i++ {
		if i == len(a) || i == len(b) {
			if !plainASCII(a[i:]) || !plainASCII(b[i:]) {
				return 0, false
			}
			return cmp.Compare(len(a), len(b)), true
		}
		x, y := a[i], b[i]
		if x >= 0x80 || y >= 0x80 || isFoldSpace(x) || isFoldSpace(y) {
			return 0, false
		}
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			if !plainASCII(a[i:]) || !plainASCII(b[i:]) {
				return 0, false
			}
			return cmp.Compare(x, y), true
		}
	}
	return 0, true
}

// plainASCII reports whether s holds only ASCII bytes that strings.Fields
// does not treat as space.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 || isFoldSpace(s[i]) {
			return false
		}
	}
	return true
}

func isFoldSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

// syntaxOf returns the syntax compareValues compares an attribute's
// values by.
func syntaxOf(attr string) ldapschema.Syntax {
	if at, ok := ldapschema.Attribute(attr); ok {
		return at.Syntax
	}
	if strings.EqualFold(attr, ldapschema.AttrMember) {
		return ldapschema.DN
	}
	return ldapschema.DirectoryString
}

// equalityKey returns the key of a value in an equality index of attr:
// two values compareValues finds equal have the same key, and values with
// different keys are never equal.
func equalityKey(attr, v string) string { return equalityKeyOf(syntaxOf(attr), v) }

func equalityKeyOf(syntax ldapschema.Syntax, v string) string {
	switch syntax {
	case ldapschema.Integer:
		// An integer and a value that does not parse as one are never
		// equal: the latter compare as strings, and a string that folds
		// to an integer's digits parses as that integer.
		if x, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			return "\x00" + strconv.FormatInt(x, 10)
		}
	case ldapschema.DN:
		return ldapschema.NormalizeDN(v)
	}
	return foldSpace(v)
}

// foldSpace applies caseIgnoreMatch's preparation: case folded, leading and
// trailing spaces removed, inner runs of spaces collapsed.
func foldSpace(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// SortEntries orders entries by DN for stable output.
func SortEntries(entries []*ldap.Entry) {
	sort.Slice(entries, func(i, j int) bool {
		return ldapschema.NormalizeDN(entries[i].DN) < ldapschema.NormalizeDN(entries[j].DN)
	})
}
