package directory

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	ber "github.com/go-asn1-ber/asn1-ber"
	"github.com/go-ldap/ldap/v3"
	"github.com/go-ldap/ldif"

	"github.com/cpactl/cpactl/ldapschema"
)

// Snapshot is a read-only directory held in memory, loaded from an LDIF
// file such as `cpactl export` or `ldapsearch -LLL` writes. It answers the
// same searches a server would (base, one-level and subtree scopes; and, or,
// not, equality, presence, substring and ordering filters, matched as
// cpactl's schema says), so every read command works on it unchanged.
type Snapshot struct {
	entries []*ldap.Entry
	byDN    map[string]*ldap.Entry // normalized DN -> entry
}

// LoadSnapshot reads an LDIF file ("-" is standard input).
func LoadSnapshot(path string) (*Snapshot, error) {
	var r io.Reader
	if path == "-" {
		r = os.Stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("cannot read snapshot: %v", err)
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("cannot read snapshot %s: %v", path, err)
	}
	s, err := ParseSnapshot(string(data))
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %v", path, err)
	}
	return s, nil
}

// ParseSnapshot parses LDIF content entries (change records are refused).
func ParseSnapshot(data string) (*Snapshot, error) {
	var l ldif.LDIF
	if err := ldif.Unmarshal(strings.NewReader(data), &l); err != nil {
		return nil, fmt.Errorf("not valid LDIF: %s", lowerFirst(err.Error()))
	}
	s := &Snapshot{byDN: map[string]*ldap.Entry{}}
	for _, e := range l.Entries {
		entry := e.Entry
		if entry == nil && e.Add != nil {
			entry = ldap.NewEntry(e.Add.DN, nil)
			for _, a := range e.Add.Attributes {
				entry.Attributes = append(entry.Attributes, ldap.NewEntryAttribute(a.Type, a.Vals))
			}
		}
		if entry == nil {
			return nil, fmt.Errorf("holds a change record; a snapshot holds entries only")
		}
		if _, err := ldap.ParseDN(entry.DN); err != nil {
			return nil, fmt.Errorf("entry %q: bad DN: %v", entry.DN, err)
		}
		key := ldapschema.NormalizeDN(entry.DN)
		if _, dup := s.byDN[key]; dup {
			return nil, fmt.Errorf("entry %q appears twice", entry.DN)
		}
		s.byDN[key] = entry
		s.entries = append(s.entries, entry)
	}
	return s, nil
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// Entries returns every entry of the snapshot, in file order.
func (s *Snapshot) Entries() []*ldap.Entry { return s.entries }

// Close does nothing.
func (s *Snapshot) Close() error { return nil }

// Add refuses: a snapshot is read-only.
func (s *Snapshot) Add(*ldap.AddRequest) error { return ErrReadOnly }

// Modify refuses: a snapshot is read-only.
func (s *Snapshot) Modify(*ldap.ModifyRequest) error { return ErrReadOnly }

// ModifyDN refuses: a snapshot is read-only.
func (s *Snapshot) ModifyDN(*ldap.ModifyDNRequest) error { return ErrReadOnly }

// Del refuses: a snapshot is read-only.
func (s *Snapshot) Del(*ldap.DelRequest) error { return ErrReadOnly }

// Transaction refuses: a snapshot is read-only.
func (s *Snapshot) Transaction(func(Writer) error) error { return ErrReadOnly }

// Search answers a search like a server: noSuchObject (32) when the base does
// not exist, entries in file order, only the requested attributes.
func (s *Snapshot) Search(req *ldap.SearchRequest) (*ldap.SearchResult, error) {
	base := ldapschema.NormalizeDN(req.BaseDN)
	if _, ok := s.byDN[base]; !ok && base != "" {
		return nil, s.noSuchObject(req.BaseDN)
	}
	filter, err := ldap.CompileFilter(req.Filter)
	if err != nil {
		return nil, err
	}
	res := &ldap.SearchResult{}
	for _, e := range s.entries {
		if !inScope(ldapschema.NormalizeDN(e.DN), base, req.Scope) {
			continue
		}
		ok, err := matches(filter, e)
		if err != nil {
			return nil, err
		}
		if ok {
			res.Entries = append(res.Entries, project(e, req.Attributes))
		}
		if req.SizeLimit > 0 && len(res.Entries) >= req.SizeLimit {
			return res, ldap.NewError(ldap.LDAPResultSizeLimitExceeded, fmt.Errorf("size limit exceeded"))
		}
	}
	return res, nil
}

// SearchEach answers a search like Search, one entry at a time.
func (s *Snapshot) SearchEach(req *ldap.SearchRequest, each func(*ldap.Entry) error) error {
	res, err := s.Search(req)
	if err != nil {
		return err
	}
	for _, e := range res.Entries {
		if err := each(e); err != nil {
			return err
		}
	}
	return nil
}

// noSuchObject is the server's answer for a missing base: result 32 with
// the deepest existing ancestor as the matched DN.
func (s *Snapshot) noSuchObject(dn string) error {
	err := &ldap.Error{ResultCode: ldap.LDAPResultNoSuchObject, Err: fmt.Errorf("no such object: %s", dn)}
	for p := ldapschema.ParentOf(dn); p != ""; p = ldapschema.ParentOf(p) {
		if _, ok := s.byDN[ldapschema.NormalizeDN(p)]; ok {
			err.MatchedDN = p
			break
		}
	}
	return err
}

func inScope(dn, base string, scope int) bool {
	switch scope {
	case ldap.ScopeBaseObject:
		return dn == base
	case ldap.ScopeSingleLevel:
		if base == "" {
			return !strings.Contains(dn, ",")
		}
		return strings.HasSuffix(dn, ","+base) && ldapschema.NormalizeDN(ldapschema.ParentOf(dn)) == base
	default:
		return base == "" || dn == base || strings.HasSuffix(dn, ","+base)
	}
}

func project(e *ldap.Entry, attrs []string) *ldap.Entry {
	if len(attrs) == 0 {
		return e
	}
	out := ldap.NewEntry(e.DN, nil)
	for _, a := range e.Attributes {
		for _, want := range attrs {
			if want == "*" || strings.EqualFold(want, a.Name) {
				out.Attributes = append(out.Attributes, a)
				break
			}
		}
	}
	return out
}

// matches evaluates a compiled filter against an entry.
func matches(f *ber.Packet, e *ldap.Entry) (bool, error) {
	switch f.Tag {
	case ldap.FilterAnd:
		for _, c := range f.Children {
			ok, err := matches(c, e)
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case ldap.FilterOr:
		for _, c := range f.Children {
			ok, err := matches(c, e)
			if err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	case ldap.FilterNot:
		ok, err := matches(f.Children[0], e)
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
	var rule, attr, value string
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
	if strings.EqualFold(attr, ldapschema.AttrEntryDN) && strings.EqualFold(rule, ldapschema.MatchDNOneLevel) {
		return ldapschema.EqualDN(ldapschema.ParentOf(e.DN), value), nil
	}
	return false, fmt.Errorf("filter (%s:%s:=...) is not supported on a snapshot", attr, rule)
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
	syntax := ldapschema.DirectoryString
	if at, ok := ldapschema.Attribute(attr); ok {
		syntax = at.Syntax
	} else if strings.EqualFold(attr, ldapschema.AttrMember) {
		syntax = ldapschema.DN
	}
	switch syntax {
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
	return strings.Compare(foldSpace(a), foldSpace(b))
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
