package ldapschema

import (
	"math/big"
	"strings"
	"testing"
)

func TestValueKeyFollowsTheMatchingRules(t *testing.T) {
	tests := []struct {
		name  string
		attr  string
		a, b  string
		equal bool
	}{
		{"strings ignore case", AttrDescription, "Bangalore Office", "bangalore OFFICE", true},
		{"strings ignore outer and repeated spaces", AttrDescription, " Bangalore   Office ", "Bangalore Office", true},
		{"strings still differ by letters", AttrDescription, "Bangalore", "Bengaluru", false},
		{"enumerations ignore case", AttrPodStatus, "offline", "OFFLINE", true},
		{"DNs compare as DNs: case and spaces", AttrSiteDN, "cn=UK,ou=Sites,dc=x", "CN=uk, OU=sites,DC=X", true},
		{"DNs compare as DNs: escaping variants", AttrSiteDN, `cn=R\26D\2C West,ou=Sites,dc=x`, `cn=R&D\, West,ou=Sites,dc=x`, true},
		{"DNs naming other entries differ", AttrSiteDN, "cn=UK,ou=Sites,dc=x", "cn=US,ou=Sites,dc=x", false},
		{"member is a DN", AttrMember, "uid=Bob,ou=People,dc=x", "UID=bob,ou=people,dc=x", true},
		{"integers by value: leading zeros", AttrCapacity, "050", "50", true},
		{"integers by value: sign and spaces", AttrLoadIndex, " +5", "5", true},
		{"integers by value: negative", AttrLoadIndex, "-1", "-01", true},
		{"integers that differ", AttrCapacity, "50", "60", false},
		{"booleans ignore case", AttrEnabled, "true", "TRUE", true},
		{"booleans that differ", AttrEnabled, "TRUE", "FALSE", false},
		{"object classes ignore case", AttrObjectClass, "pae-site", "pae-Site", true},
		{"telephone numbers ignore spaces and hyphens", "telephoneNumber", "+1 555-0100", "+15550100", true},
		{"passwords are exact", "userPassword", "Secret", "secret", false},
		{"labeledURI is case-exact", "labeledURI", "http://a/B", "http://a/b", false},
		{"aliases share the rule", "commonName", "Alice", "ALICE", true},
		{"unknown attributes ignore case", "x-unknown", "A", "a", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ValueKey(tt.attr, tt.a) == ValueKey(tt.attr, tt.b); got != tt.equal {
				t.Errorf("ValueKey(%s, %q) == ValueKey(%s, %q): %v, want %v", tt.attr, tt.a, tt.attr, tt.b, got, tt.equal)
			}
		})
	}
}

func TestEqualValues(t *testing.T) {
	tests := []struct {
		name  string
		attr  string
		a, b  []string
		equal bool
	}{
		{"values form a set", AttrTag, []string{"external", "contractors"}, []string{"Contractors", "EXTERNAL"}, true},
		{"a missing value differs", AttrTag, []string{"external", "contractors"}, []string{"external"}, false},
		{"absent equals empty", AttrTag, nil, []string{}, true},
		{"a value differs from none", AttrTag, []string{"external"}, nil, false},
		{"none differs from a value", AttrMember, nil, []string{"uid=a,ou=People,dc=x"}, false},
		{"preferred sites differ from none", AttrPreferredSite, []string{"{0}UK"}, nil, false},
		{"the class top alone equals none", AttrObjectClass, []string{"top"}, nil, true},
		{"preferred sites in rank order, whatever the value order", AttrPreferredSite,
			[]string{"{1}US", "{0}UK"}, []string{"{0}UK", "{1}US"}, true},
		{"preferred sites reordered differ", AttrPreferredSite,
			[]string{"{0}US", "{1}UK"}, []string{"{0}UK", "{1}US"}, false},
		{"preferred site names ignore case", AttrPreferredSite, []string{"{0}uk"}, []string{"{0}UK"}, true},
		{"preferred sites with a rank gap compare by value", AttrPreferredSite,
			[]string{"{0}UK", "{2}US"}, []string{"{0}UK", "{1}US"}, false},
		{"malformed preferred sites compare by value", AttrPreferredSite,
			[]string{"UK"}, []string{"uk"}, true},
		{"the class top is implied", AttrObjectClass, []string{"pae-Site"}, []string{"top", "pae-site"}, true},
		{"another class differs", AttrObjectClass, []string{"top", "pae-Pod"}, []string{"top", "pae-Site"}, false},
		{"DN sets", AttrMember, []string{"uid=a,ou=People,dc=x", "cn=G,ou=Groups,dc=x"},
			[]string{"CN=g,ou=Groups,dc=x", "uid=A,ou=People,dc=x"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EqualValues(tt.attr, tt.a, tt.b); got != tt.equal {
				t.Errorf("EqualValues(%s, %q, %q) = %v, want %v", tt.attr, tt.a, tt.b, got, tt.equal)
			}
		})
	}
}

func TestSortValues(t *testing.T) {
	if got := SortValues(AttrPreferredSite, []string{"{2}B", "{10}C", "{0}A", "bad"}); strings.Join(got, " ") != "{0}A {2}B {10}C bad" {
		t.Errorf("preferred sites sort by rank, malformed last: %q", got)
	}
	if got := SortValues(AttrTag, []string{"b", "A", "c"}); strings.Join(got, " ") != "A b c" {
		t.Errorf("values sort by key: %q", got)
	}
}

func TestLookupAttribute(t *testing.T) {
	tests := []struct {
		name, want string
		own, ok    bool
	}{
		{"cn", AttrCN, false, true},
		{"commonName", AttrCN, false, true},
		{"OBJECTCLASS", AttrObjectClass, false, true},
		{"pae-capacity", AttrCapacity, true, true},
		{"description;lang-FR", AttrDescription + ";lang-fr", false, true},
		{"rfc822Mailbox", "mail", false, true},
		{"x-unknown", "", false, false},
	}
	for _, tt := range tests {
		info, ok := LookupAttribute(tt.name)
		if ok != tt.ok || info.Name != tt.want || info.Own != tt.own {
			t.Errorf("LookupAttribute(%q) = %+v, %v; want %s, own %v, %v", tt.name, info, ok, tt.want, tt.own, tt.ok)
		}
	}
	if info, _ := LookupAttribute("userPassword"); !info.Sensitive {
		t.Error("userPassword must be sensitive")
	}
	for _, name := range []string{"modifyTimestamp", "entryUUID", "memberOf", "structuralObjectClass", "createTimestamp;x"} {
		if !IsOperational(name) {
			t.Errorf("%s is operational", name)
		}
	}
	if IsOperational(AttrCN) {
		t.Error("cn is not operational")
	}
}

func TestClassRules(t *testing.T) {
	must, may, unknown := ClassRules([]string{ClassTop, ClassSite})
	if !must["cn"] || !may["pae-preferredsite"] || may["pae-capacity"] || len(unknown) != 0 {
		t.Errorf("pae-Site: must %v may %v unknown %v", must, may, unknown)
	}
	must, may, _ = ClassRules([]string{ClassInetOrgPerson, ClassUserIdentity})
	if !must["sn"] || !must["cn"] || !must["objectclass"] || !may["uid"] || !may["pae-domain"] || !may["telephonenumber"] {
		t.Errorf("inetOrgPerson inherits person's rules: must %v", must)
	}
	_, _, unknown = ClassRules([]string{"posixAccount", ClassDevice})
	if len(unknown) != 1 || unknown[0] != "posixAccount" {
		t.Errorf("unknown classes: %v", unknown)
	}
}

func TestStructuralClass(t *testing.T) {
	tests := []struct {
		classes []string
		want    string
	}{
		{[]string{"top", "person", "organizationalPerson", "inetOrgPerson", "pae-UserIdentity"}, ClassInetOrgPerson},
		{[]string{"inetOrgPerson"}, ClassInetOrgPerson},
		{[]string{"top", "pae-desktoppool"}, ClassDesktopPool},
		{[]string{"dcObject", "organization"}, ClassOrganization},
		{[]string{"top", "pae-UserIdentity"}, ""},
	}
	for _, tt := range tests {
		if got := StructuralClass(tt.classes); got != tt.want {
			t.Errorf("StructuralClass(%v) = %q, want %q", tt.classes, got, tt.want)
		}
	}
}

// referenceKey is ValueKey's rule before its shortcuts.
func referenceKey(eq Equality, v string) string {
	switch eq {
	case EqualityInteger:
		var n big.Int
		if _, ok := n.SetString(strings.TrimSpace(v), 10); ok {
			return n.String()
		}
		return strings.TrimSpace(v)
	case EqualityCaseIgnore:
		return strings.ToLower(strings.Join(strings.Fields(v), " "))
	}
	return eq.Key(v)
}

func FuzzValueKeyShortcuts(f *testing.F) {
	for _, v := range []string{"", "0", "-0", "00", "+5", "-1", "-01", "12", " 12", "1_0", "abc", "Abc", "a  b", " a", "a ",
		"a\tb", "zürich", "a\u00a0b", "-", "--1"} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		for _, eq := range []Equality{EqualityInteger, EqualityCaseIgnore} {
			if got, want := eq.Key(v), referenceKey(eq, v); got != want {
				t.Fatalf("Key(%d, %q) = %q, want %q", eq, v, got, want)
			}
		}
	})
}
