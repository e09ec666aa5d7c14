package directory

import (
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/internal/dirtest"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

var dit = ldapschema.DIT{Base: ldapschema.DefaultBase}

func dns(entries []*ldap.Entry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = ldapschema.NormalizeDN(e.DN)
	}
	sort.Strings(out)
	return out
}

// TestSnapshotAnswersLikeSlapd loads the same LDIF into a real slapd and a
// snapshot and compares the entries every search returns.
func TestSnapshotAnswersLikeSlapd(t *testing.T) {
	text := dirtest.Sample()
	s := slapdtest.Start(t, slapdtest.Config{LDIF: text})
	admin := s.Account(slapdtest.Admin)
	live, err := ldapconn.Dial(ldapconn.Options{URLs: []string{s.URL}, BindDN: admin.DN, Password: admin.Password})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	// The server holds the harness's role groups and accounts too.
	snap, err := ParseSnapshot(text + "\n" + slapdtest.Accounts(s.Base))
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range dirtest.Searches() {
		want, err := live.Search(req)
		if err != nil {
			t.Fatalf("live %s: %v", req.Filter, err)
		}
		got, err := snap.Search(req)
		if err != nil {
			t.Fatalf("snapshot %s: %v", req.Filter, err)
		}
		if len(want.Entries) == 0 && req.Scope != ldap.ScopeBaseObject && !strings.Contains(req.Filter, "<=") &&
			!strings.Contains(req.Filter, "x,ou=Sites") {
			t.Errorf("search %s under %s finds nothing live: the test is not testing", req.Filter, req.BaseDN)
		}
		if w, g := strings.Join(dns(want.Entries), "\n"), strings.Join(dns(got.Entries), "\n"); w != g {
			t.Errorf("search %s (scope %d) under %s:\nslapd:\n%s\nsnapshot:\n%s", req.Filter, req.Scope, req.BaseDN, w, g)
		}
	}
	missing := ldap.NewSearchRequest("ou=Nope,"+dit.Base, ldap.ScopeBaseObject, 0, 0, 0, false, "(objectClass=*)", nil, nil)
	_, errLive := live.Search(missing)
	_, errSnap := snap.Search(missing)
	if !ldapclient.IsCode(errLive, ldap.LDAPResultNoSuchObject) || !ldapclient.IsCode(errSnap, ldap.LDAPResultNoSuchObject) {
		t.Errorf("missing base: live %v, snapshot %v; want noSuchObject from both", errLive, errSnap)
	}
}

func TestSnapshotIsReadOnly(t *testing.T) {
	snap, err := ParseSnapshot(dirtest.Sample())
	if err != nil {
		t.Fatal(err)
	}
	if err := snap.Add(ldap.NewAddRequest("cn=x,"+dit.Sites(), nil)); !errors.Is(err, ldapclient.ErrReadOnly) {
		t.Errorf("add: %v", err)
	}
	if err := snap.Transaction(func(ldapclient.Writer) error { return nil }); !errors.Is(err, ldapclient.ErrReadOnly) {
		t.Errorf("transaction: %v", err)
	}
}

func TestSnapshotRejectsBadInput(t *testing.T) {
	for name, text := range map[string]string{
		"change record": "dn: cn=x,dc=example\nchangetype: delete\n",
		"duplicate":     "dn: dc=example\ndc: example\n\ndn: DC=Example\ndc: example\n",
		"not ldif":      "this is not ldif\n",
		"bad base64":    "dn: dc=example\ndc:: !!!\n",
		"bad dn":        "dn: cn=a\"b,dc=example\ncn: x\n",
	} {
		if _, err := ParseSnapshot(text); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func FuzzParseSnapshot(f *testing.F) {
	f.Add(dirtest.Sample())
	f.Add("dn: dc=x\nobjectClass: top\n")
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseSnapshot(text)
		if err != nil {
			return
		}
		for _, req := range dirtest.Searches() {
			_, _ = s.Search(req)
		}
	})
}

func TestTransactionIsAllOrNothing(t *testing.T) {
	s := slapdtest.Start(t, slapdtest.Config{LDIF: dirtest.Sample()})
	c, err := ldapconn.Dial(ldapconn.Options{URLs: []string{s.URL}, BindDN: s.AdminDN(), Password: slapdtest.AdminPassword})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := NewStore(c, dit.Base)
	// The second add fails (the entry exists): the first must not land.
	err = c.Transaction(func(w ldapclient.Writer) error {
		if err := st.Add(w, dit.Site("NEW"), ldapschema.Site{Name: "NEW"}.Attrs()); err != nil {
			return err
		}
		return st.Add(w, dit.Site("UK"), ldapschema.Site{Name: "UK"}.Attrs())
	})
	if err == nil {
		t.Fatal("transaction with a failing add succeeded")
	}
	if e, err := st.Entry(dit.Site("NEW")); err != nil || e != nil {
		t.Fatalf("half-written transaction: entry %v, err %v", e, err)
	}
	// A good transaction lands entirely.
	err = c.Transaction(func(w ldapclient.Writer) error {
		if err := st.Add(w, dit.Site("A"), ldapschema.Site{Name: "A"}.Attrs()); err != nil {
			return err
		}
		return st.Add(w, dit.Site("B"), ldapschema.Site{Name: "B"}.Attrs())
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"A", "B"} {
		if _, err := st.Site(n); err != nil {
			t.Errorf("site %s: %v", n, err)
		}
	}
	// fn's own error aborts.
	sentinel := errors.New("changed my mind")
	err = c.Transaction(func(w ldapclient.Writer) error {
		_ = st.Add(w, dit.Site("C"), ldapschema.Site{Name: "C"}.Attrs())
		return sentinel
	})
	if !errors.Is(err, sentinel) {
		t.Fatalf("err %v", err)
	}
	if _, err := st.Site("C"); err == nil {
		t.Error("aborted transaction wrote site C")
	}
}

func TestAssertionControlDetectsAChange(t *testing.T) {
	s := slapdtest.Start(t, slapdtest.Config{LDIF: dirtest.Sample()})
	c, err := ldapconn.Dial(ldapconn.Options{URLs: []string{s.URL}, BindDN: s.AdminDN(), Password: slapdtest.AdminPassword})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := NewStore(c, dit.Base)
	stale, _ := ldapconn.AssertionControl(ldapclient.Filter(ldapschema.AttrDescription, "something else"))
	change := []ldap.Change{{Operation: ldap.ReplaceAttribute, Modification: ldap.PartialAttribute{Type: ldapschema.AttrDescription, Vals: []string{"x"}}}}
	err = st.ApplyChanges(c, dit.Site("US"), change, stale)
	var conflict *ldapclient.ConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("stale assertion: %v, want a ConflictError", err)
	}
	fresh, _ := ldapconn.AssertionControl(ldapclient.Filter(ldapschema.AttrDescription, "East coast"))
	if err := st.ApplyChanges(c, dit.Site("US"), change, fresh); err != nil {
		t.Fatal(err)
	}
}

func TestParseUserName(t *testing.T) {
	tests := []struct {
		in      string
		want    UserName
		wantErr bool
	}{
		{"alice", UserName{UID: "alice"}, false},
		{`CORP\alice`, UserName{UID: "alice", Domain: "CORP"}, false},
		{"alice@corp.example.com", UserName{UID: "alice", Domain: "corp.example.com"}, false},
		{"*)(uid=*", UserName{UID: "*)(uid=*"}, false},
		{`\alice`, UserName{}, true},
		{"alice@", UserName{}, true},
		{"", UserName{}, true},
	}
	for _, tt := range tests {
		got, err := ParseUserName(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseUserName(%q) = %+v, %v", tt.in, got, err)
		}
	}
}

// TestWriteLDIFRoundTrips: what export writes loads into a fresh slapd and
// parses as a snapshot, with every entry and value intact.
func TestWriteLDIFRoundTrips(t *testing.T) {
	s := slapdtest.Start(t, slapdtest.Config{LDIF: dirtest.Sample()})
	// Every value, passwords included: only the root DN reads them all.
	live, err := ldapconn.Dial(ldapconn.Options{URLs: []string{s.URL}, BindDN: s.RootDN, Password: slapdtest.RootPassword})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	all := ldap.NewSearchRequest(dit.Base, ldap.ScopeWholeSubtree, 0, 0, 0, false, "(objectClass=*)", []string{"*"}, nil)
	res, err := live.Search(all)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := WriteLDIF(&out, res.Entries); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "dn:: ") {
		t.Error("a non-ASCII DN was not base64-encoded")
	}
	snap, err := ParseSnapshot(out.String())
	if err != nil {
		t.Fatalf("export does not parse: %v\n%s", err, out.String())
	}
	again, err := snap.Search(all)
	if err != nil {
		t.Fatal(err)
	}
	flatten := func(entries []*ldap.Entry) string {
		var lines []string
		for _, e := range entries {
			for _, a := range e.Attributes {
				for _, v := range a.Values {
					lines = append(lines, ldapschema.NormalizeDN(e.DN)+"|"+strings.ToLower(a.Name)+"|"+v)
				}
			}
		}
		sort.Strings(lines)
		return strings.Join(lines, "\n")
	}
	if flatten(res.Entries) != flatten(again.Entries) {
		t.Errorf("snapshot of the export differs from the server")
	}
	// A bare server: the dump holds the base (and ou=Roles), which only
	// the root DN can load there.
	fresh := slapdtest.Start(t, slapdtest.Config{Bare: true})
	if err := fresh.Load(out.String()); err != nil {
		t.Fatalf("export does not load into an empty slapd: %v", err)
	}
}

func FuzzParseUserName(f *testing.F) {
	for _, s := range []string{"alice", `CORP\alice`, "alice@corp.example.com", "*)(uid=*", `\`, "@", "a@b@c", `a\b\c`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		n, err := ParseUserName(arg)
		if err != nil {
			return
		}
		if n.UID == "" {
			t.Fatalf("%q parsed to an empty uid", arg)
		}
		// The parts come from the argument: nothing is invented.
		if !strings.Contains(arg, n.UID) || !strings.Contains(arg, n.Domain) {
			t.Fatalf("%q parsed to %+v", arg, n)
		}
		// A DN and a filter built from the uid always parse.
		if _, err := ldap.ParseDN(dit.User(n.UID)); err != nil {
			t.Fatalf("uid %q gives a bad DN: %v", n.UID, err)
		}
		if _, err := ldap.CompileFilter(ldapclient.Filter(ldapschema.AttrUID, n.UID)); err != nil {
			t.Fatalf("uid %q gives a bad filter: %v", n.UID, err)
		}
	})
}

// ParseSnapshot reads a snapshot from LDIF text.
func ParseSnapshot(data string) (*snapshot.Snapshot, error) {
	return snapshot.ReadSnapshot(strings.NewReader(data))
}
