package ldapschema

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"
)

// The DN functions as they were before their fast paths: every call parsed
// the DN. They are the reference the fast paths must match byte for byte.

func referenceNormalizeDN(dn string) string {
	if dn == "" {
		return ""
	}
	parsed, err := ldap.ParseDN(dn)
	if err != nil {
		return strings.ToLower(dn)
	}
	parts := make([]string, 0, len(parsed.RDNs))
	for _, r := range parsed.RDNs {
		avas := make([]string, 0, len(r.Attributes))
		for _, a := range r.Attributes {
			avas = append(avas, strings.ToLower(a.Type)+"="+ldap.EscapeDN(strings.ToLower(a.Value)))
		}
		slices.Sort(avas)
		parts = append(parts, strings.Join(avas, "+"))
	}
	return strings.Join(parts, ",")
}

func referenceNameOf(dn string) string {
	parsed, err := ldap.ParseDN(dn)
	if err != nil || len(parsed.RDNs) == 0 || len(parsed.RDNs[0].Attributes) == 0 {
		return ""
	}
	return parsed.RDNs[0].Attributes[0].Value
}

func referenceParentOf(dn string) string {
	parsed, err := ldap.ParseDN(dn)
	if err != nil || len(parsed.RDNs) < 2 {
		return ""
	}
	return (&ldap.DN{RDNs: parsed.RDNs[1:]}).String()
}

func referenceFirstRDN(dn string) ([]ldap.AttributeTypeAndValue, bool) {
	parsed, err := ldap.ParseDN(dn)
	if err != nil || len(parsed.RDNs) == 0 {
		return nil, false
	}
	var out []ldap.AttributeTypeAndValue
	for _, a := range parsed.RDNs[0].Attributes {
		out = append(out, *a)
	}
	return out, true
}

// dnSamples are DNs of every shape: the common ones the fast paths take,
// and the ones they leave to the parser.
var dnSamples = []string{
	"",
	" ",
	"dc=vdiglobal,dc=vmware,dc=int",
	"uid=alice,ou=People,dc=vdiglobal,dc=vmware,dc=int",
	"cn=Sales Desktop,ou=Entitlements,dc=example,dc=com",
	"CN=UK, OU=Sites ,DC=X",
	" cn = uk , ou = sites ",
	"cn=,ou=x",
	"cn=   ,ou=x",
	"cn=a=b,ou=x",
	"cn=a,",
	",cn=a",
	"cn=a,,dc=x",
	"=a,dc=x",
	" =a,dc=x",
	"cn",
	"cn=a,dc",
	"c n=a b",
	"cn=a\tb,dc=x",
	`cn=R\26D\2C West,ou=Sites,dc=x`,
	`cn=R&D\, West,ou=Sites,dc=x`,
	`cn=\#1,dc=x`,
	"cn=#1,dc=x",
	"cn= #1,dc=x",
	"cn=#0403414243,dc=x",
	"cn=a+sn=b,dc=x",
	"cn=a;dc=x",
	`cn="quoted",dc=x`,
	"cn=a<b,dc=x",
	"cn=Zürich,ou=Sites,dc=x",
	"cn=ΣΑΣ,dc=x",
	"cn=\u212a,dc=x",
	"cn=\xff,dc=x",
	"cn=a\x00,dc=x",
	`cn=trailing\ ,dc=x`,
	`cn=\ leading,dc=x`,
	"cn=Common,ou=Global,ou=Properties,dc=vdiglobal,dc=vmware,dc=int",
	"cn=rds1,cn=farm1,cn=pod1,ou=Pods,dc=x",
	"cn=a,DC=X",
	"CN=a,dc=x",
	"cn=A,dc=x",
	// Parents a NormalDN walks up to: a multi-valued RDN, escaped commas
	// and backslashes at a value's end, an escaped parent.
	"cn=x,uid=b+cn=a,dc=example",
	`cn=a\,,dc=x`,
	`cn=a\\,ou=b\,c,dc=x`,
	`cn=x,ou=R\26D\2C West,dc=x`,
}

func TestDNFastPathsMatchTheParser(t *testing.T) {
	for _, dn := range dnSamples {
		checkDNFastPaths(t, dn)
	}
}

func checkDNFastPaths(t *testing.T, dn string) {
	t.Helper()
	if got, want := NormalizeDN(dn), referenceNormalizeDN(dn); got != want {
		t.Errorf("NormalizeDN(%q) = %q, want %q", dn, got, want)
	}
	if got, want := NameOf(dn), referenceNameOf(dn); got != want {
		t.Errorf("NameOf(%q) = %q, want %q", dn, got, want)
	}
	if got, want := ParentOf(dn), referenceParentOf(dn); got != want {
		t.Errorf("ParentOf(%q) = %q, want %q", dn, got, want)
	}
	for _, base := range []string{"dc=x", "DC=X", "ou=sites,dc=x", " dc = x", "cn=a,dc=x", dn, strings.ToUpper(dn), "x", ""} {
		n, b := referenceNormalizeDN(dn), referenceNormalizeDN(base)
		if got, want := IsUnder(dn, base), n == b || strings.HasSuffix(n, ","+b); got != want {
			t.Errorf("IsUnder(%q, %q) = %v, want %v", dn, base, got, want)
		}
		if got, want := NormalDNOf(dn).IsUnder(NormalDNOf(base)), n == b || strings.HasSuffix(n, ","+b); got != want {
			t.Errorf("NormalDNOf(%q).IsUnder(%q) = %v, want %v", dn, base, got, want)
		}
	}
	checkMakeDN(t, dn)
	if got, ok := FirstRDN(dn); fmt.Sprint(got, ok) != fmt.Sprint(referenceFirstRDN(dn)) {
		want, wantOK := referenceFirstRDN(dn)
		t.Errorf("FirstRDN(%q) = %v %v, want %v %v", dn, got, ok, want, wantOK)
	}
}

// checkMakeDN: a DN read once answers as the functions that read its text
// each time do, and so do its parents, walked up with Parent.
func checkMakeDN(t *testing.T, dn string) {
	t.Helper()
	d := NormalDNOf(dn)
	for depth := 0; ; depth++ {
		text := d.String()
		if depth == 0 && text != dn {
			t.Errorf("NormalDNOf(%q).String() = %q", dn, text)
		}
		if got, want := d.Key(), referenceNormalizeDN(text); got != want {
			t.Errorf("NormalDNOf(%q), %d up: Key() = %q, want %q", dn, depth, got, want)
		}
		if got, want := d.Name(), referenceNameOf(text); got != want {
			t.Errorf("NormalDNOf(%q), %d up: Name() = %q, want %q", dn, depth, got, want)
		}
		if got, want := d.Depth(), referenceDepth(text); got != want {
			t.Errorf("NormalDNOf(%q), %d up: Depth() = %d, want %d", dn, depth, got, want)
		}
		if !d.Equal(NormalDNOf(strings.ToUpper(text))) != (referenceNormalizeDN(text) != referenceNormalizeDN(strings.ToUpper(text))) {
			t.Errorf("NormalDNOf(%q), %d up: Equal to its upper case disagrees with NormalizeDN", dn, depth)
		}
		p := d.Parent()
		if got, want := p.String(), referenceParentOf(text); got != want {
			t.Errorf("NormalDNOf(%q), %d up: Parent() = %q, want %q", dn, depth, got, want)
		}
		if got, want := d.ParentKey(), p.Key(); got != want {
			t.Errorf("NormalDNOf(%q), %d up: ParentKey() = %q, Parent().Key() %q", dn, depth, got, want)
		}
		if p.String() == "" {
			if p != (NormalDN{}) {
				t.Errorf("NormalDNOf(%q), %d up: no parent, but Parent() = %#v", dn, depth, p)
			}
			return
		}
		d = p
	}
}

func referenceDepth(dn string) int {
	parsed, err := ldap.ParseDN(dn)
	if err != nil {
		return 0
	}
	return len(parsed.RDNs)
}

// FuzzDNFastPaths checks that NormalizeDN, NameOf, ParentOf, FirstRDN, IsUnder and NormalDNOf give what
// parsing the DN gives, for any input.
func FuzzDNFastPaths(f *testing.F) {
	for _, dn := range dnSamples {
		f.Add(dn)
	}
	f.Fuzz(func(t *testing.T, dn string) {
		checkDNFastPaths(t, dn)
		// NormalizeDNChecked: an error exactly when go-ldap refuses the DN,
		// and otherwise NormalizeDN's key.
		key, err := NormalizeDNChecked(dn)
		if _, perr := ldap.ParseDN(dn); (err != nil) != (perr != nil && dn != "") {
			t.Errorf("NormalizeDNChecked(%q): error %v, ParseDN error %v", dn, err, perr)
		} else if err == nil && key != NormalizeDN(dn) {
			t.Errorf("NormalizeDNChecked(%q) = %q, NormalizeDN %q", dn, key, NormalizeDN(dn))
		}
		if a, b := NormalizeDN(dn), NormalizeDN(strings.ToUpper(dn)); EqualDN(dn, strings.ToUpper(dn)) != (a == b) {
			t.Errorf("EqualDN(%q, upper case) disagrees with NormalizeDN", dn)
		}
	})
}

func TestNormalizeDNKeepsCanonicalDNs(t *testing.T) {
	dn := "uid=alice,ou=people,dc=example,dc=com"
	if n := testing.AllocsPerRun(100, func() { _ = NormalizeDN(dn) }); n != 0 {
		t.Errorf("NormalizeDN of a canonical DN allocates %v times", n)
	}
}

func BenchmarkNormalizeDN(b *testing.B) {
	for _, bc := range []struct{ name, dn string }{
		{"canonical", "uid=u12345,ou=people,dc=vdiglobal,dc=vmware,dc=int"},
		{"common", "uid=u12345,ou=People,dc=vdiglobal,dc=vmware,dc=int"},
		{"escaped", `cn=R\26D\2C West,ou=Sites,dc=vdiglobal,dc=vmware,dc=int`},
	} {
		b.Run(bc.name+"/fast", func(b *testing.B) {
			for b.Loop() {
				_ = NormalizeDN(bc.dn)
			}
		})
		b.Run(bc.name+"/parsed", func(b *testing.B) {
			for b.Loop() {
				_ = referenceNormalizeDN(bc.dn)
			}
		})
	}
}

// A multi-valued RDN is a set of AVAs: their order does not name another
// entry, and ParentOf's rendering (go-ldap sorts them) keys as the DN does.
func TestNormalizeDNMultiValuedRDNIsASet(t *testing.T) {
	a := NormalizeDN("cn=x,uid=b+cn=a,dc=example")
	b := NormalizeDN("CN=x,cn=A+UID=b,dc=example")
	if a != b {
		t.Errorf("AVA order changes the key: %q vs %q", a, b)
	}
	if p := NormalizeDN(ParentOf("cn=x,uid=b+cn=a,dc=example")); p != NormalizeDN("uid=b+cn=a,dc=example") {
		t.Errorf("parent key %q, want the key of uid=b+cn=a,dc=example", p)
	}
}

func TestLayoutsAround(t *testing.T) {
	for _, tc := range []struct {
		rule, base string
		want       []string
	}{
		{"a layout's container", "ou=Sites,dc=vdiglobal,dc=vmware,dc=int", []string{"dc=vdiglobal,dc=vmware,dc=int"}},
		{"a container's case does not count", "OU=sites,DC=vdiglobal,DC=vmware,DC=int", []string{"dc=vdiglobal,dc=vmware,dc=int"}},
		{"a nested container", "ou=Global,ou=Properties,dc=example", []string{"dc=example"}},
		{"an object of the layout", "cn=India,ou=Sites,dc=example", []string{"dc=example"}},
		{"the trash", "ou=Trash,dc=example", []string{"dc=example"}},
		{"a base beside the containers is its own federation", "ou=Tenant2,dc=example", nil},
		{"a suffix", "dc=example", nil},
		{"a name that is not a container", "ou=Site,dc=example", nil},
		{"two layouts deep, nearest first", "ou=Pods,ou=Sites,dc=example", []string{"ou=Sites,dc=example", "dc=example"}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got := LayoutsAround(tc.base)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("LayoutsAround(%q) = %q, want %q", tc.base, got, tc.want)
			}
		})
	}
}

// TestParentKey: the parent of a key, sliced off it, is the key of the
// parent.
func TestParentKey(t *testing.T) {
	dit := DIT{Base: DefaultBase}
	for _, dn := range []string{
		dit.Base, dit.Site(`R&D, "West" <1>+;=*()\ Zürich`), dit.Host("p,1", `f\2`, "h+3"), `cn=a\,b,dc=x`, `cn=a\\,dc=x`,
		`cn=\#a+sn=b\ ,ou=c\;d,dc=x`, "dc=x",
	} {
		if got, want := ParentKey(NormalizeDN(dn)), NormalizeDN(ParentOf(dn)); got != want {
			t.Errorf("ParentKey(%q) = %q, want %q", dn, got, want)
		}
	}
}
