package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/ldapschema"
)

const overlayBase = `dn: dc=ex
objectClass: top
objectClass: domain
dc: ex

dn: ou=Pods,dc=ex
objectClass: organizationalUnit
ou: Pods

dn: cn=p1,ou=Pods,dc=ex
objectClass: pae-Pod
cn: p1
pae-PodStatus: ONLINE

dn: cn=d1,cn=p1,ou=Pods,dc=ex
objectClass: pae-DesktopPool
cn: d1
pae-Sessions: 5

dn: cn=d2,cn=p1,ou=Pods,dc=ex
objectClass: pae-DesktopPool
cn: d2
pae-Sessions: 50

dn: cn=p2,ou=Pods,dc=ex
objectClass: pae-Pod
cn: p2
pae-PodStatus: OFFLINE
`

func overlayFixture(t *testing.T) *Overlay {
	t.Helper()
	snap, err := ReadSnapshot(strings.NewReader(overlayBase))
	if err != nil {
		t.Fatal(err)
	}
	return NewOverlay(snap)
}

func searchNames(t *testing.T, c ldapclient.Client, base string, scope int, filter string) []string {
	t.Helper()
	var out []string
	err := c.SearchEach(ldap.NewSearchRequest(base, scope, ldap.NeverDerefAliases, 0, 0, false, filter, []string{"cn"}, nil),
		func(e *ldap.Entry) error {
			out = append(out, ldapschema.NameOf(e.DN))
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestOverlaySearch: one row per rule of how an overlay answers a search.
func TestOverlaySearch(t *testing.T) {
	pod3 := ldapschema.Attrs{"objectClass": {"pae-Pod"}, "cn": {"p3"}, "pae-PodStatus": {"OFFLINE"}}
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, o *Overlay)
		base   string
		scope  int
		filter string
		want   []string
	}{
		{name: "no change: the underlying answer", base: "ou=Pods,dc=ex", scope: ldap.ScopeWholeSubtree,
			filter: "(pae-Sessions>=10)", want: []string{"d2"}},
		{name: "a changed entry that now matches is returned",
			change: func(t *testing.T, o *Overlay) { mustReplace(t, o, "cn=d1,cn=p1,ou=Pods,dc=ex", "pae-Sessions", "40") },
			base:   "ou=Pods,dc=ex", scope: ldap.ScopeWholeSubtree, filter: "(pae-Sessions>=10)", want: []string{"d1", "d2"}},
		{name: "a changed entry that no longer matches is dropped",
			change: func(t *testing.T, o *Overlay) { mustReplace(t, o, "cn=d2,cn=p1,ou=Pods,dc=ex", "pae-Sessions", "1") },
			base:   "ou=Pods,dc=ex", scope: ldap.ScopeWholeSubtree, filter: "(pae-Sessions>=10)", want: nil},
		{name: "a removed attribute no longer matches a presence filter",
			change: func(t *testing.T, o *Overlay) { mustReplace(t, o, "cn=d2,cn=p1,ou=Pods,dc=ex", "pae-Sessions") },
			base:   "ou=Pods,dc=ex", scope: ldap.ScopeWholeSubtree, filter: "(pae-Sessions=*)", want: []string{"d1"}},
		{name: "a deleted entry is dropped",
			change: func(t *testing.T, o *Overlay) { o.Delete("cn=d1,cn=p1,ou=Pods,dc=ex") },
			base:   "cn=p1,ou=Pods,dc=ex", scope: ldap.ScopeSingleLevel, filter: ldapclient.AnyEntry, want: []string{"d2"}},
		{name: "an added entry is returned in a one-level scope",
			change: func(t *testing.T, o *Overlay) { o.Put("cn=p3,ou=Pods,dc=ex", pod3) },
			base:   "ou=Pods,dc=ex", scope: ldap.ScopeSingleLevel, filter: "(pae-PodStatus=offline)", want: []string{"p2", "p3"}},
		{name: "an added entry outside the scope is not",
			change: func(t *testing.T, o *Overlay) { o.Put("cn=p3,ou=Pods,dc=ex", pod3) },
			base:   "cn=p1,ou=Pods,dc=ex", scope: ldap.ScopeWholeSubtree, filter: ldapclient.AnyEntry, want: []string{"d1", "d2", "p1"}},
		{name: "an added entry below the base of a subtree search is returned",
			change: func(t *testing.T, o *Overlay) {
				o.Put("cn=d3,cn=p2,ou=Pods,dc=ex", ldapschema.Attrs{"objectClass": {"pae-DesktopPool"}, "cn": {"d3"}})
			},
			base: "dc=ex", scope: ldap.ScopeWholeSubtree, filter: "(objectClass=pae-DesktopPool)", want: []string{"d1", "d2", "d3"}},
		{name: "a base search finds the changed entry",
			change: func(t *testing.T, o *Overlay) { mustReplace(t, o, "cn=p2,ou=Pods,dc=ex", "pae-PodStatus", "ONLINE") },
			base:   "cn=p2,ou=Pods,dc=ex", scope: ldap.ScopeBaseObject, filter: "(pae-PodStatus=ONLINE)", want: []string{"p2"}},
		{name: "the children filter (entryDN:dnOneLevelMatch:=) matches added entries",
			change: func(t *testing.T, o *Overlay) {
				o.Put("cn=d3,cn=p2,ou=Pods,dc=ex", ldapschema.Attrs{"objectClass": {"pae-DesktopPool"}, "cn": {"d3"}})
			},
			base: "ou=Pods,dc=ex", scope: ldap.ScopeWholeSubtree, filter: "(" + ldapschema.AttrEntryDN + ":" + ldapschema.MatchDNOneLevel + ":=cn=p2,ou=Pods,dc=ex)", want: []string{"d3"}},
		{name: "a search below an added entry works",
			change: func(t *testing.T, o *Overlay) {
				o.Put("cn=p3,ou=Pods,dc=ex", pod3)
				o.Put("cn=d9,cn=p3,ou=Pods,dc=ex", ldapschema.Attrs{"objectClass": {"pae-DesktopPool"}, "cn": {"d9"}})
			},
			base: "cn=p3,ou=Pods,dc=ex", scope: ldap.ScopeSingleLevel, filter: ldapclient.AnyEntry, want: []string{"d9"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := overlayFixture(t)
			if tc.change != nil {
				tc.change(t, o)
			}
			if got := searchNames(t, o, tc.base, tc.scope, tc.filter); !slices.Equal(got, tc.want) {
				t.Fatalf("found %q, want %q", got, tc.want)
			}
			res, err := o.Search(ldap.NewSearchRequest(tc.base, tc.scope, ldap.NeverDerefAliases, 0, 0, false, tc.filter, nil, nil))
			if err != nil || len(res.Entries) != len(tc.want) {
				t.Fatalf("Search: %v, %d entries, want %d", err, len(res.Entries), len(tc.want))
			}
		})
	}
}

func mustReplace(t *testing.T, o *Overlay, dn, attr string, values ...string) {
	t.Helper()
	if err := o.Replace("entry", dn, dn, attr, values); err != nil {
		t.Fatal(err)
	}
}

func TestOverlayRefusesWritesAndKeepsTheUnderlyingClient(t *testing.T) {
	o := overlayFixture(t)
	mustReplace(t, o, "cn=d1,cn=p1,ou=Pods,dc=ex", "pae-Sessions", "40")
	for _, err := range []error{o.Add(&ldap.AddRequest{}), o.Modify(&ldap.ModifyRequest{}), o.Del(&ldap.DelRequest{}),
		o.ModifyDN(&ldap.ModifyDNRequest{}), o.Transaction(func(ldapclient.Writer) error { return nil })} {
		if !errors.Is(err, ErrWhatIf) {
			t.Fatalf("write: %v, want ErrWhatIf", err)
		}
	}
	if got := searchNames(t, o.under, "ou=Pods,dc=ex", ldap.ScopeWholeSubtree, "(pae-Sessions>=10)"); !slices.Equal(got, []string{"d2"}) {
		t.Fatalf("the underlying client changed: %q", got)
	}
	if err := o.Replace("pool", "nope", "cn=nope,ou=Pods,dc=ex", "cn", []string{"x"}); err == nil {
		t.Fatal("replace of a missing entry succeeded")
	}
	o.Delete("cn=p2,ou=Pods,dc=ex")
	err := o.SearchEach(ldap.NewSearchRequest("cn=p2,ou=Pods,dc=ex", ldap.ScopeBaseObject, 0, 0, 0, false, ldapclient.AnyEntry, nil, nil),
		func(*ldap.Entry) error { return nil })
	if !ldapclient.IsCode(err, ldap.LDAPResultNoSuchObject) {
		t.Fatalf("search of a deleted base: %v, want no such object (32)", err)
	}
}

// TestOverlayChangeSet: one row per ldapmodify rule a change set follows.
func TestOverlayChangeSet(t *testing.T) {
	for _, tc := range []struct {
		name, ldif string
		wantErr    string // "" for none
		base       string
		filter     string
		want       []string
	}{
		{name: "modify replace", ldif: "dn: cn=d1,cn=p1,ou=Pods,dc=ex\nchangetype: modify\nreplace: pae-Sessions\npae-Sessions: 70\n-\n",
			base: "ou=Pods,dc=ex", filter: "(pae-Sessions>=10)", want: []string{"d1", "d2"}},
		{name: "modify increment", ldif: "dn: cn=d1,cn=p1,ou=Pods,dc=ex\nchangetype: modify\nincrement: pae-Sessions\npae-Sessions: 5\n-\n",
			base: "ou=Pods,dc=ex", filter: "(pae-Sessions=10)", want: []string{"d1"}},
		{name: "modify delete of the whole attribute", ldif: "dn: cn=d2,cn=p1,ou=Pods,dc=ex\nchangetype: modify\ndelete: pae-Sessions\n-\n",
			base: "ou=Pods,dc=ex", filter: "(pae-Sessions=*)", want: []string{"d1"}},
		{name: "modify add of a value already there is refused",
			ldif:    "dn: cn=d2,cn=p1,ou=Pods,dc=ex\nchangetype: modify\nadd: cn\ncn: D2\n-\n",
			wantErr: `line 1: modify cn=d2,cn=p1,ou=Pods,dc=ex: line 3: cn: value "D2" already exists (20)`},
		{name: "modify of a missing entry is refused", ldif: "dn: cn=zz,ou=Pods,dc=ex\nchangetype: modify\nreplace: cn\ncn: zz\n-\n",
			wantErr: "no such entry (32)"},
		{name: "add, then a later record sees it", ldif: "dn: cn=p3,ou=Pods,dc=ex\nchangetype: add\nobjectClass: pae-Pod\ncn: p3\n\n" +
			"dn: cn=d3,cn=p3,ou=Pods,dc=ex\nchangetype: add\nobjectClass: pae-DesktopPool\ncn: d3\npae-Sessions: 11\n",
			base: "ou=Pods,dc=ex", filter: "(pae-Sessions>=10)", want: []string{"d2", "d3"}},
		{name: "add of an existing entry is refused", ldif: "dn: cn=p1,ou=Pods,dc=ex\nchangetype: add\nobjectClass: pae-Pod\ncn: p1\n",
			wantErr: "the entry already exists (68)"},
		{name: "add without a parent is refused", ldif: "dn: cn=x,cn=nope,ou=Pods,dc=ex\nchangetype: add\nobjectClass: pae-Pod\ncn: x\n",
			wantErr: "its parent cn=nope,ou=Pods,dc=ex does not exist (32)"},
		{name: "delete of a leaf", ldif: "dn: cn=d2,cn=p1,ou=Pods,dc=ex\nchangetype: delete\n",
			base: "ou=Pods,dc=ex", filter: "(objectClass=pae-DesktopPool)", want: []string{"d1"}},
		{name: "delete of an entry with children is refused", ldif: "dn: cn=p1,ou=Pods,dc=ex\nchangetype: delete\n",
			wantErr: "has children"},
		{name: "modrdn of a leaf", ldif: "dn: cn=d2,cn=p1,ou=Pods,dc=ex\nchangetype: modrdn\nnewrdn: cn=d5\ndeleteoldrdn: 1\nnewsuperior: cn=p2,ou=Pods,dc=ex\n",
			base: "cn=p2,ou=Pods,dc=ex", filter: "(cn=d5)", want: []string{"d5"}},
		{name: "modrdn under a newsuperior that does not parse is refused (it was laid with no parent)",
			ldif:    "dn: cn=d2,cn=p1,ou=Pods,dc=ex\nchangetype: modrdn\nnewrdn: cn=d5\ndeleteoldrdn: 1\nnewsuperior: c;In=p2,ou=Pods,dc=ex\n",
			wantErr: `line 1: modrdn cn=d2,cn=p1,ou=Pods,dc=ex: the new DN "cn=d5,c;In=p2,ou=Pods,dc=ex" does not parse`},
		{name: "an entry without changetype is refused", ldif: "dn: cn=p3,ou=Pods,dc=ex\nobjectClass: pae-Pod\ncn: p3\n",
			wantErr: "an entry without changetype: in a change set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "change.ldif")
			if err := os.WriteFile(path, []byte(tc.ldif), 0o644); err != nil {
				t.Fatal(err)
			}
			o := overlayFixture(t)
			_, err := o.ApplyChangeSet(path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := searchNames(t, o, tc.base, ldap.ScopeWholeSubtree, tc.filter); !slices.Equal(got, tc.want) {
				t.Fatalf("found %q, want %q", got, tc.want)
			}
		})
	}
}

func TestIsChangeSet(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		text string
		want bool
	}{
		"entries":       {overlayBase, false},
		"an add record": {overlayBase + "\ndn: cn=p9,ou=Pods,dc=ex\nchangetype: add\ncn: p9\n", true},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := IsChangeSet(path); err != nil || got != tc.want {
			t.Fatalf("%s: %t, %v; want %t", name, got, err, tc.want)
		}
	}
}
