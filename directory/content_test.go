package directory

import (
	"regexp"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/ldapschema"
)

func TestContainerKey(t *testing.T) {
	const nbase = "dc=vdiglobal,dc=vmware,dc=int"
	for _, tc := range []struct{ dn, want string }{
		{"dc=vdiglobal,dc=vmware,dc=int", nbase},
		{"DC=VDIGlobal, dc=vmware,dc=int", nbase},
		{"ou=Sites,dc=vdiglobal,dc=vmware,dc=int", "ou=sites," + nbase},
		{"cn=UK,ou=Sites,dc=vdiglobal,dc=vmware,dc=int", "ou=sites," + nbase},
		{"cn=h1,cn=f1,cn=pod1,ou=Pods,dc=vdiglobal,dc=vmware,dc=int", "ou=pods," + nbase},
		{`cn=a\,b,ou=People,dc=vdiglobal,dc=vmware,dc=int`, "ou=people," + nbase},
		{`cn=x,ou=a\,b,dc=vdiglobal,dc=vmware,dc=int`, `ou=a\,b,` + nbase},
		{`cn=x,ou=a\\,dc=vdiglobal,dc=vmware,dc=int`, `ou=a\\,` + nbase},
		{"cn=Common,ou=Global,ou=Properties,dc=vdiglobal,dc=vmware,dc=int", "ou=properties," + nbase},
		{"dc=other,dc=example", ""},
		{"dc=xvdiglobal,dc=vmware,dc=int", ""},
		{`cn=a\,dc=vdiglobal,dc=vmware,dc=int`, ""},
	} {
		if got := containerKey(tc.dn, nbase); got != tc.want {
			t.Errorf("containerKey(%q) = %q, want %q", tc.dn, got, tc.want)
		}
	}
}

// TestDigestOrder: the digest of a set does not depend on the order of
// its entries, and changes with any entry's CSN.
func TestDigestOrder(t *testing.T) {
	pairs := [][2]string{{"u1", "c1"}, {"u2", "c2"}, {"u3", "c3"}}
	var a, b, c digest
	for _, p := range pairs {
		a.add(p[0], p[1])
	}
	for i := len(pairs) - 1; i >= 0; i-- {
		b.add(pairs[i][0], pairs[i][1])
	}
	c.add("u1", "c1")
	c.add("u2", "c2")
	c.add("u3", "c3-newer")
	if a.hex() != b.hex() {
		t.Errorf("order changes the digest: %s %s", a.hex(), b.hex())
	}
	if a.hex() == c.hex() {
		t.Error("a newer CSN leaves the digest alone")
	}
	var empty digest
	if a.hex() == empty.hex() || len(a.hex()) != 64 {
		t.Errorf("digest %q", a.hex())
	}
}

func TestCompareContent(t *testing.T) {
	ref := []ContainerContent{{DN: "ou=A,dc=x", Entries: 2, Digest: "d1"}, {DN: "ou=B,dc=x", Entries: 1, Digest: "d2"}, {DN: "ou=C,dc=x", Entries: 3, Digest: "d3"}}
	for _, tc := range []struct {
		name  string
		other []ContainerContent
		want  []ContainerDiff
	}{
		{"same content, other spelling", []ContainerContent{{DN: "OU=a,DC=X", Entries: 2, Digest: "d1"}, {DN: "ou=B,dc=x", Entries: 1, Digest: "d2"}, {DN: "ou=C,dc=x", Entries: 3, Digest: "d3"}}, nil},
		{"a container short", []ContainerContent{{DN: "ou=A,dc=x", Entries: 1, Digest: "dx"}, {DN: "ou=B,dc=x", Entries: 1, Digest: "d2"}, {DN: "ou=C,dc=x", Entries: 3, Digest: "d3"}},
			[]ContainerDiff{{DN: "ou=A,dc=x", Entries: 1, ReferenceHas: 2}}},
		{"same count, other versions", []ContainerContent{{DN: "ou=A,dc=x", Entries: 2, Digest: "d1"}, {DN: "ou=B,dc=x", Entries: 1, Digest: "d2"}, {DN: "ou=C,dc=x", Entries: 3, Digest: "dy"}},
			[]ContainerDiff{{DN: "ou=C,dc=x", Entries: 3, ReferenceHas: 3}}},
		{"a container missing", []ContainerContent{{DN: "ou=A,dc=x", Entries: 2, Digest: "d1"}, {DN: "ou=C,dc=x", Entries: 3, Digest: "d3"}},
			[]ContainerDiff{{DN: "ou=B,dc=x", Entries: 0, ReferenceHas: 1}}},
		{"a container more", append(append([]ContainerContent{}, ref...), ContainerContent{DN: "ou=D,dc=x", Entries: 5, Digest: "d4"}),
			[]ContainerDiff{{DN: "ou=D,dc=x", Entries: 5, ReferenceHas: 0}}},
	} {
		got := CompareContent(ref, tc.other)
		if len(got) != len(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			}
		}
	}
}

var attributeType = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9-]*|[0-9]+(\.[0-9]+)*)$`)

// FuzzContainerKey checks the container of a DN (one scan of its
// normalized form) against a walk up its parents.
func FuzzContainerKey(f *testing.F) {
	const base = "dc=vdiglobal,dc=vmware,dc=int"
	for _, seed := range []string{base, "cn=UK,ou=Sites," + base, `cn=a\,b,ou=x\\,` + base, `cn=h,cn=f,cn=p,ou=Pods,` + base,
		`cn=#41,ou=a+cn=b,` + base, `CN=x, OU=Y ,` + base, "dc=other", `ou=a\2Cb,` + base} {
		f.Add(seed)
	}
	nbase := ldapschema.NormalizeDN(base)
	f.Fuzz(func(t *testing.T, dn string) {
		parsed, err := ldap.ParseDN(dn)
		if err != nil {
			return // servers send DNs that parse
		}
		for _, r := range parsed.RDNs {
			for _, a := range r.Attributes {
				if !attributeType.MatchString(a.Type) {
					return // and whose types are names or OIDs (RFC 4512)
				}
			}
		}
		want := ""
		if ldapschema.NormalizeDN(dn) == nbase {
			want = nbase
		}
		for p := dn; want == "" && p != ""; p = ldapschema.ParentOf(p) {
			if parent := ldapschema.ParentOf(p); parent != "" && ldapschema.NormalizeDN(parent) == nbase {
				want = ldapschema.NormalizeDN(p)
			}
		}
		if got := containerKey(dn, nbase); got != want {
			t.Errorf("containerKey(%q) = %q, walking up the parents gives %q", dn, got, want)
		}
	})
}
