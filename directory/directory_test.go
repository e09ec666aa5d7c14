package directory

import (
	"encoding/base64"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

var dit = ldapschema.DIT{Base: ldapschema.DefaultBase}

// sample is a small directory with awkward names, integers and DNs.
func sample() string {
	weird := `R&D, "West" <1>+;=*()\ Zürich`
	var b strings.Builder
	add := func(dn string, a ldapschema.Attrs) {
		b.WriteString("dn: " + dn + "\n")
		for _, name := range []string{ldapschema.AttrObjectClass} {
			for _, v := range a[name] {
				b.WriteString(name + ": " + v + "\n")
			}
		}
		for name, vals := range a {
			if name == ldapschema.AttrObjectClass {
				continue
			}
			for _, v := range vals {
				b.WriteString(name + ":: " + b64(v) + "\n")
			}
		}
		b.WriteString("\n")
	}
	add(dit.Base, ldapschema.Attrs{"objectClass": {"top", "domain"}, "dc": {"vdiglobal"}})
	for _, c := range dit.Containers() {
		add(c, ldapschema.Attrs{"objectClass": {"top", "organizationalUnit"}, "ou": {ldapschema.NameOf(c)}})
	}
	add(dit.Site("UK"), ldapschema.Site{Name: "UK", PreferredSites: []string{"US", weird}}.Attrs())
	add(dit.Site("US"), ldapschema.Site{Name: "US", Description: "East coast"}.Attrs())
	add(dit.Site(weird), ldapschema.Site{Name: weird}.Attrs())
	add(dit.Pod("pod-uk"), ldapschema.Pod{Name: "pod-uk", SiteDN: dit.Site("UK"), Online: true}.Attrs())
	add(dit.Pod("pod-w"), ldapschema.Pod{Name: "pod-w", SiteDN: dit.Site(weird)}.Attrs())
	add(dit.Pool("pod-uk", "pool-a"), ldapschema.Pool{Name: "pool-a", Kind: ldapschema.KindDesktop, Capacity: 10, Sessions: 9, Enabled: true}.Attrs())
	add(dit.Pool("pod-uk", "pool-b"), ldapschema.Pool{Name: "pool-b", Kind: ldapschema.KindDesktop, Capacity: 100, Sessions: 20, Enabled: true}.Attrs())
	add(dit.User("*)(uid=*"), ldapschema.User{UID: "*)(uid=*"}.Attrs())
	add(dit.User("alice"), ldapschema.User{UID: "alice", Domain: "CORP", FullName: "Alice Martin"}.Attrs())
	add(dit.User("bob"), ldapschema.User{UID: "bob", FullName: "Bob  Smith"}.Attrs())
	// For the snapshot's indexes: a farm and its hosts, groups and
	// sessions whose DN values are written in other cases and spacings,
	// and an entry whose name holds ",ou=Sites" (it is not below ou=Sites).
	add(dit.Farm("pod-uk", "farm-1"), ldapschema.Farm{Name: "farm-1", MaxSessionsPerHost: 5}.Attrs())
	for _, h := range []string{"h1", "h2", weird} {
		add(dit.Host("pod-uk", "farm-1", h), ldapschema.Host{Name: h, LoadIndex: 3, Enabled: true}.Attrs())
	}
	spaced := func(dn string) string { return strings.ToUpper(strings.ReplaceAll(dn, ",", ", ")) }
	add(dit.Group("staff"), ldapschema.Group{Name: "staff", Members: []string{spaced(dit.User("alice")), dit.User("bob")}}.Attrs())
	add(dit.Group("all"), ldapschema.Group{Name: "all", Members: []string{dit.Group("STAFF"), dit.User("*)(uid=*")}}.Attrs())
	for i, u := range []string{"alice", "alice", "bob"} {
		add(dit.Session(fmt.Sprintf("s-%d", i)), ldapschema.Session{ID: fmt.Sprintf("s-%d", i), UserDN: spaced(dit.User(u)),
			EntitlementDN: dit.Entitlement(fmt.Sprintf("GE %d", i%2)), PodDN: dit.Pod("pod-uk"), State: ldapschema.StateConnected}.Attrs())
	}
	add("cn=x\\,ou=Sites,"+dit.Base, ldapschema.Attrs{"objectClass": {"top", "device"}, "cn": {"x,ou=Sites"}})
	return b.String()
}

// searches cover scopes, escaping, integer ordering, DN equality,
// substrings, presence, and, or, not.
func searches() []*ldap.SearchRequest {
	weird := `R&D, "West" <1>+;=*()\ Zürich`
	req := func(base string, scope int, filter string) *ldap.SearchRequest {
		return ldap.NewSearchRequest(base, scope, ldap.NeverDerefAliases, 0, 0, false, filter, []string{"*"}, nil)
	}
	return []*ldap.SearchRequest{
		req(dit.Base, ldap.ScopeWholeSubtree, "(objectClass=*)"),
		req(dit.Sites(), ldap.ScopeSingleLevel, ClassFilter(ldapschema.ClassSite)),
		req(dit.Sites(), ldap.ScopeBaseObject, "(objectClass=*)"),
		req(dit.Sites(), ldap.ScopeSingleLevel, Filter(ldapschema.AttrCN, weird)),
		req(dit.Sites(), ldap.ScopeSingleLevel, Filter(ldapschema.AttrCN, "uk")),
		req(dit.Sites(), ldap.ScopeSingleLevel, Filter(ldapschema.AttrPreferredSite, "{1}"+weird)),
		req(dit.Sites(), ldap.ScopeSingleLevel, "(pae-PreferredSite={0}*)"),
		req(dit.Sites(), ldap.ScopeSingleLevel, "(description=*coast)"),
		req(dit.Sites(), ldap.ScopeSingleLevel, "(!(pae-PreferredSite=*))"),
		req(dit.Pods(), ldap.ScopeWholeSubtree, Filter(ldapschema.AttrSiteDN, dit.Site(weird))),
		req(dit.Pods(), ldap.ScopeWholeSubtree, Filter(ldapschema.AttrSiteDN, strings.ToUpper(dit.Site("uk")))),
		req(dit.Pods(), ldap.ScopeWholeSubtree, "(&(objectClass=pae-DesktopPool)(pae-Sessions>=10))"),
		req(dit.Pods(), ldap.ScopeWholeSubtree, "(&(objectClass=pae-DesktopPool)(pae-Sessions<=9))"),
		req(dit.Pods(), ldap.ScopeWholeSubtree, "(|(cn=pool-a)(cn=pod-w))"),
		req(dit.Pods(), ldap.ScopeSingleLevel, "(objectClass=*)"),
		req(dit.Pods(), ldap.ScopeWholeSubtree, Or(ChildrenFilter(dit.Pod("pod-uk")), ChildrenFilter(strings.ToUpper(dit.Pod("pod-w"))))),
		req(dit.Base, ldap.ScopeWholeSubtree, And(ClassFilter(ldapschema.ClassDesktopPool), ChildrenFilter(dit.Pod("POD-UK")))),
		req(dit.Base, ldap.ScopeWholeSubtree, ChildrenFilter(dit.Base)),
		req(dit.People(), ldap.ScopeSingleLevel, Filter(ldapschema.AttrUID, "*)(uid=*")),
		req(dit.People(), ldap.ScopeSingleLevel, "(uid=*)"),
		req(dit.People(), ldap.ScopeSingleLevel, "(cn=alice martin)"),
		// What the snapshot's indexes serve: equality in and, or; DNs in
		// other spellings; integers; space folding; several scopes.
		req(dit.People(), ldap.ScopeSingleLevel, "(cn=  BOB   smith )"),
		req(dit.People(), ldap.ScopeSingleLevel, And(ClassFilter(ldapschema.ClassInetOrgPerson), Or(Filter(ldapschema.AttrUID, "ALICE"), Filter(ldapschema.AttrUID, "bob")))),
		req(dit.Sessions(), ldap.ScopeSingleLevel, And(ClassFilter(ldapschema.ClassSession), Filter(ldapschema.AttrUserDN, dit.User("alice")))),
		req(dit.Sessions(), ldap.ScopeSingleLevel, And(ClassFilter(ldapschema.ClassSession), Filter(ldapschema.AttrUserDN, strings.ToUpper(dit.User("Alice"))),
			Filter(ldapschema.AttrEntitlementDN, dit.Entitlement("ge 1")))),
		req(dit.Base, ldap.ScopeWholeSubtree, Filter(ldapschema.AttrUserDN, dit.User("bob"))),
		req(dit.Groups(), ldap.ScopeSingleLevel, And(ClassFilter(ldapschema.ClassGroup), Or(Filter(ldapschema.AttrMember, dit.User("alice")), Filter(ldapschema.AttrMember, dit.Group("staff"))))),
		req(dit.Pods(), ldap.ScopeWholeSubtree, "(pae-Sessions=20)"),
		req(dit.Pods(), ldap.ScopeWholeSubtree, And(ClassFilter(ldapschema.ClassRDSHost), Filter(ldapschema.AttrCN, weird))),
		req(dit.Farm("pod-uk", "farm-1"), ldap.ScopeSingleLevel, ClassFilter(ldapschema.ClassRDSHost)),
		req(dit.Pods(), ldap.ScopeWholeSubtree, And(ClassFilter(ldapschema.ClassRDSHost), ChildrenFilter(dit.Farm("pod-uk", "FARM-1")))),
		req(dit.Pod("pod-uk"), ldap.ScopeSingleLevel, "(|(objectClass=pae-RDSFarm)(cn=pool-a))"),
		req(dit.Base, ldap.ScopeWholeSubtree, "(|(objectClass=pae-Site)(cn=h1))"),
		req(dit.Sites(), ldap.ScopeWholeSubtree, "(objectClass=*)"),
		req(dit.Base, ldap.ScopeSingleLevel, Filter(ldapschema.AttrCN, "x,ou=Sites")),
		req(dit.Sites(), ldap.ScopeWholeSubtree, Filter(ldapschema.AttrCN, "x,ou=Sites")),
	}
}

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
	text := sample()
	s := slapdtest.Start(t, slapdtest.Config{LDIF: text})
	admin := s.Account(slapdtest.Admin)
	live, err := Dial(Options{URLs: []string{s.URL}, BindDN: admin.DN, Password: admin.Password})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	// The server holds the harness's role groups and accounts too.
	snap, err := ParseSnapshot(text + "\n" + slapdtest.Accounts(s.Base))
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range searches() {
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
	if !IsCode(errLive, ldap.LDAPResultNoSuchObject) || !IsCode(errSnap, ldap.LDAPResultNoSuchObject) {
		t.Errorf("missing base: live %v, snapshot %v; want noSuchObject from both", errLive, errSnap)
	}
}

func TestSnapshotIsReadOnly(t *testing.T) {
	snap, err := ParseSnapshot(sample())
	if err != nil {
		t.Fatal(err)
	}
	if err := snap.Add(ldap.NewAddRequest("cn=x,"+dit.Sites(), nil)); !errors.Is(err, ErrReadOnly) {
		t.Errorf("add: %v", err)
	}
	if err := snap.Transaction(func(Writer) error { return nil }); !errors.Is(err, ErrReadOnly) {
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
	f.Add(sample())
	f.Add("dn: dc=x\nobjectClass: top\n")
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseSnapshot(text)
		if err != nil {
			return
		}
		for _, req := range searches() {
			_, _ = s.Search(req)
		}
	})
}

func TestTransactionIsAllOrNothing(t *testing.T) {
	s := slapdtest.Start(t, slapdtest.Config{LDIF: sample()})
	c, err := Dial(Options{URLs: []string{s.URL}, BindDN: s.AdminDN(), Password: slapdtest.AdminPassword})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := NewStore(c, dit.Base)
	// The second add fails (the entry exists): the first must not land.
	err = c.Transaction(func(w Writer) error {
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
	err = c.Transaction(func(w Writer) error {
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
	err = c.Transaction(func(w Writer) error {
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
	s := slapdtest.Start(t, slapdtest.Config{LDIF: sample()})
	c, err := Dial(Options{URLs: []string{s.URL}, BindDN: s.AdminDN(), Password: slapdtest.AdminPassword})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := NewStore(c, dit.Base)
	stale, _ := AssertionControl(Filter(ldapschema.AttrDescription, "something else"))
	change := []ldap.Change{{Operation: ldap.ReplaceAttribute, Modification: ldap.PartialAttribute{Type: ldapschema.AttrDescription, Vals: []string{"x"}}}}
	err = st.ApplyChanges(c, dit.Site("US"), change, stale)
	var conflict *ConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("stale assertion: %v, want a ConflictError", err)
	}
	fresh, _ := AssertionControl(Filter(ldapschema.AttrDescription, "East coast"))
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

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// TestWriteLDIFRoundTrips: what export writes loads into a fresh slapd and
// parses as a snapshot, with every entry and value intact.
func TestWriteLDIFRoundTrips(t *testing.T) {
	s := slapdtest.Start(t, slapdtest.Config{LDIF: sample()})
	// Every value, passwords included: only the root DN reads them all.
	live, err := Dial(Options{URLs: []string{s.URL}, BindDN: s.RootDN, Password: slapdtest.RootPassword})
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
		if _, err := ldap.CompileFilter(Filter(ldapschema.AttrUID, n.UID)); err != nil {
			t.Fatalf("uid %q gives a bad filter: %v", n.UID, err)
		}
	})
}
