package snapshot

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/internal/dirtest"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/ldapschema"
)

// everyEntry matches an entry with or without objectClass.
const everyEntry = "(|(objectClass=*)(!(objectClass=*)))"

// FuzzChangeSet: any LDIF is read by IsChangeSet and ApplyChangeSet
// without a panic; a refusal is one line naming the file and a line; a
// change set that is accepted, laid over a small snapshot, leaves the
// overlay consistent: every DN once, each entry's parent there, Entry
// agreeing with the search, and every search (each base, scope, a few
// filters) finding what a scan of the whole overlay finds.
func FuzzChangeSet(f *testing.F) {
	for _, s := range []string{
		"dn: cn=d1,cn=p1,ou=Pods,dc=ex\nchangetype: modify\nreplace: pae-Sessions\npae-Sessions: 70\n-\n",
		"dn: cn=d1,cn=p1,ou=Pods,dc=ex\nchangetype: modify\nincrement: pae-Sessions\npae-Sessions: 5\n-\n",
		"dn: cn=d2,cn=p1,ou=Pods,dc=ex\nchangetype: modify\ndelete: pae-Sessions\n-\nadd: cn\ncn: D2\n-\n",
		"dn: cn=p3,ou=Pods,dc=ex\nchangetype: add\nobjectClass: pae-Pod\ncn: p3\n\n" +
			"dn: cn=d3,cn=p3,ou=Pods,dc=ex\nchangetype: add\nobjectClass: pae-DesktopPool\ncn: d3\npae-Sessions: 11\n",
		"dn: cn=d2,cn=p1,ou=Pods,dc=ex\nchangetype: delete\n\ndn: cn=p1,ou=Pods,dc=ex\nchangetype: delete\n",
		"dn: cn=d2,cn=p1,ou=Pods,dc=ex\nchangetype: modrdn\nnewrdn: cn=d5\ndeleteoldrdn: 1\nnewsuperior: cn=p2,ou=Pods,dc=ex\n",
		"dn: cn=p2,ou=Pods,dc=ex\nchangetype: modrdn\nnewrdn: cn=P2+pae-PodStatus=x\ndeleteoldrdn: 0\n",
		"dn: cn=p3,ou=Pods,dc=ex\nobjectClass: pae-Pod\ncn: p3\n",
		"version: 1\ndn: cn=x,dc=new\nchangetype: add\ncn: x\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		path := filepath.Join(t.TempDir(), "change.ldif")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		isSet, err := IsChangeSet(path)
		if err != nil {
			assertLineError(t, path, err)
		}
		o := overlayFixture(t)
		n, err := o.ApplyChangeSet(path)
		if err != nil {
			assertLineError(t, path, err)
			return
		}
		if n > 0 && !isSet {
			t.Fatalf("%d records applied from a file IsChangeSet does not take for a change set", n)
		}
		all := overlaySearch(t, o, "", ldap.ScopeWholeSubtree, everyEntry)
		byKey := map[string]*ldap.Entry{}
		for _, e := range all {
			k := ldapschema.NormalizeDN(e.DN)
			if byKey[k] != nil {
				t.Fatalf("%q is found twice", e.DN)
			}
			byKey[k] = e
		}
		for k, e := range byKey {
			if p := ldapschema.ParentKey(k); p != "" && byKey[p] == nil {
				t.Fatalf("%q is there, its parent %q is not", e.DN, p)
			}
			got, err := o.Entry(e.DN)
			if err != nil || got == nil || dirtest.Flatten([]*ldap.Entry{got}) != dirtest.Flatten([]*ldap.Entry{e}) {
				t.Fatalf("Entry(%q) = %v, %v; the search found %v", e.DN, got, err, e)
			}
		}
		bases := []string{""}
		for _, e := range all {
			bases = append(bases, e.DN)
		}
		for _, base := range bases {
			bk := ldapschema.NormalizeDN(base)
			for _, scope := range []int{ldap.ScopeBaseObject, ldap.ScopeSingleLevel, ldap.ScopeWholeSubtree} {
				for _, filter := range []string{everyEntry, ldapclient.AnyEntry, "(cn=*)", "(objectClass=pae-DesktopPool)", "(pae-Sessions>=10)"} {
					compiled, err := ldap.CompileFilter(filter)
					if err != nil {
						t.Fatal(err)
					}
					var want []string
					for _, e := range all {
						k := ldapschema.NormalizeDN(e.DN)
						in := false
						switch scope {
						case ldap.ScopeBaseObject:
							in = k == bk
						case ldap.ScopeSingleLevel:
							in = k != "" && ldapschema.ParentKey(k) == bk
						default:
							in = withinKey(k, bk)
						}
						if ok, _ := Matches(compiled, e); in && ok {
							want = append(want, k)
						}
					}
					var got []string
					for _, e := range overlaySearch(t, o, base, scope, filter) {
						got = append(got, ldapschema.NormalizeDN(e.DN))
					}
					slices.Sort(want)
					slices.Sort(got)
					if !slices.Equal(got, want) {
						t.Fatalf("search %s (scope %d) under %q found\n%q\na scan finds\n%q", filter, scope, base, got, want)
					}
				}
			}
		}
	})
}

func assertLineError(t *testing.T, path string, err error) {
	t.Helper()
	msg := err.Error()
	if !strings.HasPrefix(msg, path) || !strings.Contains(msg, "line ") || strings.Contains(msg, "\n") {
		t.Fatalf("error %q: want one line naming %s and a line", msg, path)
	}
}

func overlaySearch(t *testing.T, o *Overlay, base string, scope int, filter string) []*ldap.Entry {
	t.Helper()
	var out []*ldap.Entry
	err := o.SearchEach(ldap.NewSearchRequest(base, scope, ldap.NeverDerefAliases, 0, 0, false, filter, nil, nil),
		func(e *ldap.Entry) error {
			out = append(out, e)
			return nil
		})
	if err != nil {
		t.Fatalf("search %s (scope %d) under %q: %v", filter, scope, base, err)
	}
	return out
}
