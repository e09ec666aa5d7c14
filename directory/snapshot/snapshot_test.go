package snapshot

import (
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/internal/dirtest"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/ldapschema"
)

// scan is the reference a snapshot's indexes must agree with: every entry
// decoded, its scope found from its ancestors (by ParentOf), the filter
// matched.
type scan struct {
	s       *Snapshot
	entries []*ldap.Entry
	dn      []string          // normalized
	parent  []string          // normalized
	above   []map[string]bool // normalized DNs of the entry and its ancestors
}

func newScan(s *Snapshot) *scan {
	sc := &scan{s: s, entries: s.Entries()}
	for _, e := range sc.entries {
		sc.dn = append(sc.dn, ldapschema.NormalizeDN(e.DN))
		sc.parent = append(sc.parent, ldapschema.NormalizeDN(ldapschema.ParentOf(e.DN)))
		above := map[string]bool{"": true}
		for p := e.DN; p != ""; p = ldapschema.ParentOf(p) {
			above[ldapschema.NormalizeDN(p)] = true
		}
		sc.above = append(sc.above, above)
	}
	return sc
}

func (sc *scan) search(req *ldap.SearchRequest) ([]string, error) {
	base := ldapschema.NormalizeDN(req.BaseDN)
	filter, err := ldap.CompileFilter(req.Filter)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, e := range sc.entries {
		var in bool
		switch req.Scope {
		case ldap.ScopeBaseObject:
			in = sc.dn[i] == base
		case ldap.ScopeSingleLevel:
			in = sc.parent[i] == base
		default:
			in = sc.above[i][base]
		}
		if !in {
			continue
		}
		ok, err := Matches(filter, e)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, e.DN)
		}
	}
	return out, nil
}

// indexedSearch is what Search answers, as DNs in order.
func indexedSearch(s *Snapshot, req *ldap.SearchRequest) ([]string, error) {
	res, err := s.Search(req)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range res.Entries {
		out = append(out, e.DN)
	}
	return out, nil
}

// equalitySearches asks, for values of n entries spread over the
// snapshot, every kind of search its indexes serve, from several bases
// and scopes.
func equalitySearches(s *Snapshot, n int) []*ldap.SearchRequest {
	var reqs []*ldap.SearchRequest
	bases := []string{""}
	for i := 0; i < s.Len() && i < 6; i++ {
		bases = append(bases, s.entries[i].dn)
	}
	var filters []string
	for k := 0; k < s.Len() && k < n; k++ {
		e := s.decode(int32(k * s.Len() / min(n, s.Len())))
		for _, a := range e.Attributes {
			v := a.Values[len(a.Values)-1]
			filters = append(filters, ldapclient.Filter(a.Name, v), ldapclient.Filter(strings.ToUpper(a.Name), " "+strings.ToUpper(v)+" "),
				ldapclient.And(ldapclient.ClassFilter("top"), ldapclient.Filter(a.Name, v)), ldapclient.Or(ldapclient.Filter(a.Name, v), ldapclient.Filter(ldapschema.AttrCN, "nothing")))
		}
		filters = append(filters, ldapclient.ChildrenFilter(e.DN), ldapclient.And(ldapclient.ChildrenFilter(strings.ToUpper(e.DN)), "(objectClass=*)"))
	}
	for _, b := range bases {
		for _, scope := range []int{ldap.ScopeBaseObject, ldap.ScopeSingleLevel, ldap.ScopeWholeSubtree} {
			for _, f := range filters {
				reqs = append(reqs, ldap.NewSearchRequest(b, scope, 0, 0, 0, false, f, nil, nil))
			}
		}
	}
	return reqs
}

func compareWithScan(t *testing.T, s *Snapshot, reqs []*ldap.SearchRequest) {
	t.Helper()
	sc := newScan(s)
	for _, req := range reqs {
		want, errScan := sc.search(req)
		got, errIndex := indexedSearch(s, req)
		if ldapclient.IsCode(errIndex, ldap.LDAPResultNoSuchObject) {
			continue // a missing base: the scan does not judge that
		}
		if (errIndex == nil) != (errScan == nil) {
			t.Fatalf("search %s (scope %d) under %q: scan error %v, indexed error %v", req.Filter, req.Scope, req.BaseDN,
				errScan, errIndex)
		}
		if strings.Join(want, "\n") != strings.Join(got, "\n") {
			t.Fatalf("search %s (scope %d) under %q:\nscan:\n%s\nindexed:\n%s", req.Filter, req.Scope, req.BaseDN,
				strings.Join(want, "\n"), strings.Join(got, "\n"))
		}
	}
}

// TestSnapshotIndexesAnswerAsAScan: every search, through the indexes,
// finds what decoding and matching every entry finds, in the same (file)
// order.
func TestSnapshotIndexesAnswerAsAScan(t *testing.T) {
	snap, err := ParseSnapshot(dirtest.Sample())
	if err != nil {
		t.Fatal(err)
	}
	compareWithScan(t, snap, dirtest.Searches())
	compareWithScan(t, snap, equalitySearches(snap, snap.Len()))
	text, _ := dirtest.Synthetic{Sessions: 200}.Text()
	big, err := ParseSnapshot(text)
	if err != nil {
		t.Fatal(err)
	}
	compareWithScan(t, big, equalitySearches(big, 12))
}

// TestEqualityKeyFollowsTheMatchingRules: values compareValues finds equal
// share an index key (integers by value, DNs as DNs, strings ignoring case
// and spaces).
func TestEqualityKeyFollowsTheMatchingRules(t *testing.T) {
	for _, tt := range []struct{ attr, a, b string }{
		{ldapschema.AttrSessions, "7", " +7 "},
		{ldapschema.AttrSessions, "007", "7"},
		{ldapschema.AttrSessions, "seven", "SEVEN"},
		{ldapschema.AttrUserDN, "uid=A,ou=People,dc=x", "UID=a, OU=people,DC=X"},
		{ldapschema.AttrMember, `cn=a\,b,dc=x`, `CN=A\2Cb,dc=x`},
		{ldapschema.AttrCN, "  Alice   Martin", "alice martin "},
	} {
		if compareValues(tt.attr, tt.a, tt.b) != 0 {
			t.Errorf("%s: %q and %q do not compare equal", tt.attr, tt.a, tt.b)
		}
		if equalityKey(tt.attr, tt.a) != equalityKey(tt.attr, tt.b) {
			t.Errorf("%s: %q and %q have different keys", tt.attr, tt.a, tt.b)
		}
	}
	if equalityKey(ldapschema.AttrSessions, "7") == equalityKey(ldapschema.AttrSessions, "8") {
		t.Error("7 and 8 share a key")
	}
}

func FuzzEqualityKey(f *testing.F) {
	f.Add(0, "7", "07")
	f.Add(1, "uid=a,dc=x", "UID=A, DC=x")
	f.Add(2, " a  b", "A B ")
	attrs := []string{ldapschema.AttrSessions, ldapschema.AttrUserDN, ldapschema.AttrCN, ldapschema.AttrMember}
	f.Fuzz(func(t *testing.T, which int, a, b string) {
		attr := attrs[(which%len(attrs)+len(attrs))%len(attrs)]
		if compareValues(attr, a, b) == 0 && equalityKey(attr, a) != equalityKey(attr, b) {
			t.Fatalf("%s: %q and %q are equal but keyed %q and %q", attr, a, b, equalityKey(attr, a), equalityKey(attr, b))
		}
	})
}

// FuzzSnapshotSearch: on any LDIF a snapshot accepts, searches through the
// indexes answer as a scan does, and the parent index agrees with
// ParentOf.
func FuzzSnapshotSearch(f *testing.F) {
	f.Add(dirtest.Sample())
	f.Add("dn: dc=x\nobjectClass: top\n\ndn: cn=a\\,b,dc=x\ncn: a,b\nmember: CN=A\\,B, DC=X\n\ndn: cn=c,cn=a\\,b,dc=x\ncn: c\n")
	f.Add("dn: cn=b,dc=y\ncn: b\npae-Sessions: 07\n\ndn: dc=y\ndc: y\n")
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseSnapshot(text)
		if err != nil {
			return
		}
		for _, e := range s.entries {
			if p := ldapschema.ParentOf(e.dn); p != "" && ldapschema.ParentKey(e.key) != ldapschema.NormalizeDN(p) {
				t.Fatalf("%q: parent key %q, ParentOf %q", e.dn, ldapschema.ParentKey(e.key), ldapschema.NormalizeDN(p))
			}
		}
		compareWithScan(t, s, dirtest.Searches())
		compareWithScan(t, s, equalitySearches(s, 6))
	})
}

// ParseSnapshot reads a snapshot from LDIF text.
func ParseSnapshot(data string) (*Snapshot, error) { return ReadSnapshot(strings.NewReader(data)) }

// FuzzCompareASCIIFold: when the fast comparison answers, it answers as
// comparing foldSpace's results does.
func FuzzCompareASCIIFold(f *testing.F) {
	for _, p := range [][2]string{{"top", "pae-Session"}, {"pae-Session", "PAE-session"}, {"ab", "abc"},
		{"a b", "A B"}, {"é", "É"}, {"Zeta", "alpha"}, {"", "x"}} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		c, ok := compareASCIIFold(a, b)
		if !ok {
			return
		}
		if want := strings.Compare(foldSpace(a), foldSpace(b)); c != want {
			t.Fatalf("compareASCIIFold(%q, %q) = %d, foldSpace comparison %d", a, b, c, want)
		}
	})
}

func TestCompareASCIIFold(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		c    int
		ok   bool
	}{
		{"top", "pae-Session", 1, true},
		{"pae-Session", "PAE-SESSION", 0, true},
		{"ab", "abc", -1, true},
		{"a b", "a b", 0, false},
		{"é", "e", 0, false},
	} {
		c, ok := compareASCIIFold(tt.a, tt.b)
		if c != tt.c || ok != tt.ok {
			t.Errorf("compareASCIIFold(%q, %q) = %d, %v; want %d, %v", tt.a, tt.b, c, ok, tt.c, tt.ok)
		}
	}
}
