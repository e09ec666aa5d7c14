package directory

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

func TestPreferredAssertion(t *testing.T) {
	tests := []struct {
		name string
		raw  []string
		want string
	}{
		{"an empty list asserts no value", nil, "(!(pae-PreferredSite=*))"},
		{"every value read and no value of the next rank", []string{"{0}UK", "{1}US"},
			"(&(pae-PreferredSite={0}UK)(pae-PreferredSite={1}US)(!(pae-PreferredSite={2}*)))"},
		{"a list with a gap asserts the gap rank absent too", []string{"{0}UK", "{2}US"},
			"(&(pae-PreferredSite={0}UK)(pae-PreferredSite={2}US)(!(pae-PreferredSite={1}*))(!(pae-PreferredSite={3}*)))"},
		{"filter specials are escaped", []string{`{0}R&D, "West" <1>+;=*()\ Zürich`},
			`(&(pae-PreferredSite={0}R&D, "West" <1>+;=\2a\28\29\5c Z\c3\bcrich)(!(pae-PreferredSite={1}*)))`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := PreferredAssertion(tc.raw)
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if _, err := ldap.CompileFilter(got); err != nil {
				t.Errorf("does not compile: %v", err)
			}
		})
	}
}

// TestPreferredAssertionPinsTheList checks, on the snapshot's filter
// matcher, that the assertion holds for the list read and for nothing else
// cpactl can write (ranks 0..n-1).
func TestPreferredAssertionPinsTheList(t *testing.T) {
	read := []string{"{0}UK", "{1}US"}
	filter, err := ldap.CompileFilter(PreferredAssertion(read))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		stored []string
		holds  bool
	}{
		{[]string{"{0}UK", "{1}US"}, true},
		{[]string{"{1}US", "{0}UK"}, true}, // value order does not matter
		{[]string{"{0}US", "{1}UK"}, false},
		{[]string{"{0}UK"}, false},
		{[]string{"{0}UK", "{1}US", "{2}Germany"}, false},
		{nil, false},
	} {
		e := ldap.NewEntry("cn=India,ou=Sites,dc=x", map[string][]string{ldapschema.AttrPreferredSite: tc.stored})
		got, err := snapshot.Matches(filter, e)
		if err != nil || got != tc.holds {
			t.Errorf("stored %q: holds=%v (%v), want %v", tc.stored, got, err, tc.holds)
		}
	}
	// A list with rank gaps (lint's preferred-rank-gap) can be rewritten:
	// the assertion holds for it, and for no gapless list cpactl writes.
	gappy := []string{"{0}UK", "{2}US"}
	filter, err = ldap.CompileFilter(PreferredAssertion(gappy))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		stored []string
		holds  bool
	}{
		{gappy, true},
		{[]string{"{0}UK", "{1}US"}, false},
		{[]string{"{0}UK", "{1}X", "{2}US"}, false},
		{[]string{"{0}UK", "{1}X", "{2}US", "{3}Y"}, false},
	} {
		e := ldap.NewEntry("cn=India,ou=Sites,dc=x", map[string][]string{ldapschema.AttrPreferredSite: tc.stored})
		if got, err := snapshot.Matches(filter, e); err != nil || got != tc.holds {
			t.Errorf("read %q, stored %q: holds=%v (%v), want %v", gappy, tc.stored, got, err, tc.holds)
		}
	}
}

func TestRebaseDN(t *testing.T) {
	tests := []struct{ value, old, new, want string }{
		{"cn=P1,ou=Pods,dc=x", "cn=P1,ou=Pods,dc=x", "cn=P2,ou=Pods,dc=x", "cn=P2,ou=Pods,dc=x"},
		{"cn=pool,cn=P1,ou=Pods,dc=x", "cn=P1,ou=Pods,dc=x", "cn=P2,ou=Pods,dc=x", "cn=pool,cn=P2,ou=Pods,dc=x"},
		{`cn=h\2C1,cn=f,cn=P1,ou=Pods,dc=x`, "cn=P1,ou=Pods,dc=x", `cn=R\,D,ou=Pods,dc=x`, `cn=h\,1,cn=f,cn=R\,D,ou=Pods,dc=x`},
	}
	for _, tc := range tests {
		if got := rebaseDN(tc.value, tc.old, tc.new); !ldapschema.EqualDN(got, tc.want) {
			t.Errorf("rebaseDN(%s) = %s, want %s", tc.value, got, tc.want)
		}
	}
}

func TestWriteLines(t *testing.T) {
	for verb, want := range map[string]string{"delete": "deleted", "set": "set", "unset": "unset", "add": "added",
		"remove": "removed", "rename": "renamed", "update": "updated"} {
		w := Write{Verb: verb, Object: "site UK"}
		if got := w.Done(); got != want+" site UK" {
			t.Errorf("%s: Done() = %q", verb, got)
		}
		if got := w.Planned(); got != "would "+verb+" site UK" {
			t.Errorf("%s: Planned() = %q", verb, got)
		}
	}
}

// topology starts a slapd with the seed fixture and returns a store on it.
func topology(t *testing.T) (*slapdtest.Server, *Store) {
	t.Helper()
	seed, err := os.ReadFile("../fixtures/seed-000.ldif")
	if err != nil {
		t.Fatal(err)
	}
	srv := slapdtest.Start(t, slapdtest.Config{LDIF: string(seed)})
	return srv, dialStore(t, srv)
}

func dialStore(t *testing.T, srv *slapdtest.Server) *Store {
	t.Helper()
	c, err := ldapconn.Dial(ldapconn.Options{URLs: []string{srv.URL}, BindDN: srv.AdminDN(), Password: slapdtest.AdminPassword})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return NewStore(c, srv.Base)
}

func mustAdd(t *testing.T, st *Store, dn string, a ldapschema.Attrs) {
	t.Helper()
	if err := st.Add(st.Client, dn, a); err != nil {
		t.Fatal(err)
	}
}

// TestSetPreferredSitesRace: many writers from the same state; exactly one
// wins, the others get a *ConflictError, the list is one writer's whole
// list.
func TestSetPreferredSitesRace(t *testing.T) {
	srv, st := topology(t)
	india, err := st.Site("India")
	if err != nil {
		t.Fatal(err)
	}
	lists := [][]string{{"US"}, {"US", "UK"}, {"UK"}, {}, {"US"}, {"UK", "US", "India"}}
	errs := make([]error, len(lists))
	var wg sync.WaitGroup
	for i := range lists {
		w := dialStore(t, srv)
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = w.SetPreferredSites(india, lists[i]) // all from the same read
		}(i)
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		var conflict *ldapclient.ConflictError
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("writers %d and %d both won", winner, i)
		case err == nil:
			winner = i
		case !errors.As(err, &conflict):
			t.Fatalf("writer %d: %v, want a conflict", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer won")
	}
	after, err := st.Site("India")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(after.PreferredSites, lists[winner]) && !(len(after.PreferredSites) == 0 && len(lists[winner]) == 0) {
		t.Fatalf("stored %q, want %q", after.PreferredSites, lists[winner])
	}
	// A stale read is refused even with no one racing.
	err = st.SetPreferredSites(india, []string{"US"})
	var conflict *ldapclient.ConflictError
	if !errors.As(err, &conflict) || !strings.Contains(err.Error(), "preferred-site list of site India") {
		t.Fatalf("stale write: %v", err)
	}
}

// allDNValues lists every DN-valued attribute value under base, for
// dangling-reference checks.
func danglingReferences(t *testing.T, st *Store) []string {
	t.Helper()
	entries, err := st.Find(st.DIT.Base, ldap.ScopeWholeSubtree, "(objectClass=*)")
	if err != nil {
		t.Fatal(err)
	}
	exists := map[string]bool{}
	sites := map[string]bool{}
	for _, e := range entries {
		exists[ldapschema.NormalizeDN(e.DN)] = true
		if ldapschema.HasClass(e, ldapschema.ClassSite) {
			sites[strings.ToLower(ldapschema.NameOf(e.DN))] = true
		}
	}
	var out []string
	for _, e := range entries {
		for _, a := range DNAttributes() {
			for _, v := range e.GetEqualFoldAttributeValues(a) {
				if v != ldapschema.NoMember && !exists[ldapschema.NormalizeDN(v)] { // the role groups' placeholder
					out = append(out, e.DN+" "+a+": "+v)
				}
			}
		}
		for _, v := range e.GetEqualFoldAttributeValues(ldapschema.AttrPreferredSite) {
			if r, err := ldapschema.ParsePreferredSite(v); err != nil || !sites[strings.ToLower(r.Name)] {
				out = append(out, e.DN+" preferred: "+v)
			}
		}
		if strings.Contains(strings.ToLower(e.DN), "cpactl-txn-") || strings.Contains(strings.ToLower(e.DN), "ou=trash") {
			out = append(out, "left over: "+e.DN)
		}
	}
	return out
}

// richTopology adds to the seed: a second pod in UK with a Connection
// Server, a group, home-site rows, an entitlement, a session and a pod
// assignment.
func richTopology(t *testing.T, st *Store) {
	t.Helper()
	d := st.DIT
	mustAdd(t, st, d.Pod("London-2"), ldapschema.Pod{Name: "London-2", SiteDN: d.Site("UK"), Online: true}.Attrs())
	mustAdd(t, st, d.ConnectionServer("London-2", "cs-lon-2"), ldapschema.ConnectionServer{Name: "cs-lon-2"}.Attrs())
	mustAdd(t, st, d.Pool("London-2", "Pool-L2"), ldapschema.Pool{Name: "Pool-L2", Kind: ldapschema.KindDesktop, Capacity: 5, Enabled: true}.Attrs())
	mustAdd(t, st, d.Entitlement("Desktops"), ldapschema.Entitlement{Name: "Desktops", Type: ldapschema.TypeDesktop,
		Enabled: true, Members: []string{d.User("priya")}, PoolDNs: []string{d.Pool("London-2", "Pool-L2")}}.Attrs())
	mustAdd(t, st, d.Group("Travellers"), ldapschema.Group{Name: "Travellers", Members: []string{d.User("priya")}}.Attrs())
	for _, h := range []ldapschema.HomeSite{
		{UserDN: d.User("priya"), SiteDN: d.Site("UK")},
		{GroupDN: d.Group("Travellers"), SiteDN: d.Site("UK"), EntitlementDN: d.Entitlement("Desktops")},
	} {
		h.DN = d.HomeSite(h.UserDN+h.GroupDN, h.EntitlementDN)
		mustAdd(t, st, h.DN, h.Attrs())
	}
	s := ldapschema.Session{ID: "s1", UserDN: d.User("priya"), EntitlementDN: d.Entitlement("Desktops"),
		PodDN: d.Pod("London-2"), PoolDN: d.Pool("London-2", "Pool-L2"), State: ldapschema.StateConnected}
	mustAdd(t, st, d.Session("s1"), s.Attrs())
	a := ldapschema.Assignment{DN: d.Assignment(d.User("priya"), d.Entitlement("Desktops")), UserDN: d.User("priya"),
		EntitlementDN: d.Entitlement("Desktops"), PodDN: d.Pod("London-2")}
	mustAdd(t, st, a.DN, a.Attrs())
}

// TestPlanDeleteSiteForced: a site with two pods that have children (two
// subtrees: applied stepwise), preferred lists and home-site rows: every
// reference goes, nothing dangles, nothing is left in the trash.
func TestPlanDeleteSiteForced(t *testing.T) {
	_, st := topology(t)
	richTopology(t, st)
	uk, err := st.Site("UK")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := st.PlanDelete(objkind.Site, uk.Name, uk.DN)
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, r := range plan.Referrers {
		refs = append(refs, fmt.Sprintf("%s %s (%s)", r.Kind, r.Name, r.Via))
	}
	slices.Sort(refs)
	want := []string{
		"home-site row of group Travellers for entitlement Desktops (pae-SiteDN)",
		"home-site row of user priya (global) (pae-SiteDN)",
		"pod London-1 (pae-SiteDN)",
		"pod London-2 (pae-SiteDN)",
		"site India (preferred sites)",
	}
	if !slices.Equal(refs, want) {
		t.Fatalf("referrers\n got %q\nwant %q", refs, want)
	}
	if !plan.Blocked() || len(plan.Children) != 0 {
		t.Fatalf("blocked=%v children=%v", plan.Blocked(), plan.Children)
	}
	var lines []string
	for _, w := range plan.Writes {
		lines = append(lines, w.Done())
	}
	for _, line := range []string{"removed UK from the preferred sites of site India", "removed pool Pool-L2 from entitlement Desktops",
		"deleted session s1", "deleted pod assignment of user priya for entitlement Desktops", "deleted connection server cs-lon-2",
		"deleted pool Pool-L2", "deleted pod London-2", "deleted site UK"} {
		if !slices.Contains(lines, line) {
			t.Errorf("plan lacks %q: %q", line, lines)
		}
	}
	if err := st.ApplyPlan(&plan.Plan); err != nil {
		t.Fatal(err)
	}
	if !plan.Stepwise {
		t.Error("two subtrees should have been applied stepwise")
	}
	if d := danglingReferences(t, st); len(d) > 0 {
		t.Fatalf("dangling references: %q", d)
	}
	india, _ := st.Site("India")
	if !slices.Equal(india.PreferredSites, []string{"US"}) {
		t.Errorf("India prefers %q", india.PreferredSites)
	}
	ge, _ := st.Entitlement("Desktops")
	if len(ge.PoolDNs) != 0 || len(ge.Members) != 1 {
		t.Errorf("entitlement after: %+v", ge)
	}
}

// TestPlanDeletePodInSteps: a pod with children and referrers: the
// references go in one transaction, then the pod moves out with its
// children in one operation (slapd cannot do that inside a transaction);
// nothing dangles in between or after, and the emptied containers
// (ou=Sessions, ou=Assignments) survive.
func TestPlanDeletePodInSteps(t *testing.T) {
	_, st := topology(t)
	richTopology(t, st)
	pod, err := st.Pod("London-2")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := st.PlanDelete(objkind.Pod, pod.Name, pod.DN)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Children) != 2 {
		t.Errorf("children %v", plan.Children)
	}
	if atomic, _ := st.Atomic(&plan.Plan); atomic {
		t.Error("a subtree delete with referrers is said to be atomic")
	}
	if err := st.ApplyPlan(&plan.Plan); err != nil {
		t.Fatal(err)
	}
	if !plan.Stepwise || plan.Transactions != 1 {
		t.Errorf("stepwise %v in %d transactions, want stepwise in 1 and a move", plan.Stepwise, plan.Transactions)
	}
	if d := danglingReferences(t, st); len(d) > 0 {
		t.Fatalf("dangling references: %q", d)
	}
	for _, dn := range []string{st.DIT.Sessions(), st.DIT.Assignments(), st.DIT.Pods()} {
		if e, err := st.Entry(dn); err != nil || e == nil {
			t.Errorf("container %s is gone: %v", dn, err)
		}
	}
	if _, err := st.Pod("London-2"); !IsNotFoundErr(err) {
		t.Errorf("pod still there: %v", err)
	}
}

func IsNotFoundErr(err error) bool {
	var nf *ldapclient.NotFoundError
	return errors.As(err, &nf)
}

// TestPlanDeleteConflictThenRetry: a forced delete whose preferred-list
// assertion fails writes nothing (exit 5 material), and the server takes
// the next attempt.
func TestPlanDeleteConflictThenRetry(t *testing.T) {
	_, st := topology(t)
	richTopology(t, st)
	uk, _ := st.Site("UK")
	plan, err := st.PlanDelete(objkind.Site, uk.Name, uk.DN)
	if err != nil {
		t.Fatal(err)
	}
	// Someone reorders India's list meanwhile.
	india, _ := st.Site("India")
	if err := st.SetPreferredSites(india, []string{"US", "UK"}); err != nil {
		t.Fatal(err)
	}
	err = st.ApplyPlan(&plan.Plan)
	var conflict *ldapclient.ConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("got %v, want a conflict", err)
	}
	// All or nothing: nothing of the plan was applied.
	if _, err := st.Site("UK"); err != nil {
		t.Fatalf("UK went despite the conflict: %v", err)
	}
	for _, name := range []string{"London-1", "London-2"} {
		if _, err := st.Pod(name); err != nil {
			t.Errorf("pod %s went despite the conflict: %v", name, err)
		}
	}
	if rows, _ := st.HomeSites(""); len(rows) != 2 {
		t.Errorf("home-site rows after the conflict: %d, want 2", len(rows))
	}
	if ss, _ := st.Sessions(""); len(ss) != 1 {
		t.Errorf("sessions after the conflict: %d, want 1", len(ss))
	}
	plan, err = st.PlanDelete(objkind.Site, uk.Name, uk.DN)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.ApplyPlan(&plan.Plan); err != nil {
		t.Fatal(err)
	}
	if d := danglingReferences(t, st); len(d) > 0 {
		t.Fatalf("dangling references: %q", d)
	}
}

// TestPlanRenamePodAndEntitlement: a pod rename moves its children and
// rewrites sessions, assignments and entitlements; renaming an entitlement
// renames the home-site rows and assignments named after it.
func TestPlanRenamePodAndEntitlement(t *testing.T) {
	_, st := topology(t)
	richTopology(t, st)
	d := st.DIT
	plan, err := st.PlanRename(objkind.Pod, "London-2", d.Pod("London-2"), "Leeds-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.ApplyPlan(plan); err != nil {
		t.Fatal(err)
	}
	if d := danglingReferences(t, st); len(d) > 0 {
		t.Fatalf("dangling references after the pod rename: %q", d)
	}
	cs, err := st.ConnectionServer("cs-lon-2")
	if err != nil || cs.Pod != "Leeds-1" {
		t.Fatalf("cs after rename: %+v %v", cs, err)
	}
	ss, _ := st.Sessions("")
	if len(ss) != 1 || !ldapschema.EqualDN(ss[0].PodDN, d.Pod("Leeds-1")) || !ldapschema.EqualDN(ss[0].PoolDN, d.Pool("Leeds-1", "Pool-L2")) {
		t.Fatalf("session after rename: %+v", ss)
	}

	plan, err = st.PlanRename(objkind.Entitlement, "Desktops", d.Entitlement("Desktops"), "Virtual Desktops")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.ApplyPlan(plan); err != nil {
		t.Fatal(err)
	}
	if d := danglingReferences(t, st); len(d) > 0 {
		t.Fatalf("dangling references after the entitlement rename: %q", d)
	}
	rows, _ := st.HomeSites("")
	for _, r := range rows {
		if want := d.HomeSite(r.UserDN+r.GroupDN, r.EntitlementDN); !ldapschema.EqualDN(want, r.DN) {
			t.Errorf("row %s should be named %s", r.DN, want)
		}
	}
	as, _ := st.Assignments("")
	if len(as) != 1 || !ldapschema.EqualDN(as[0].DN, d.Assignment(d.User("priya"), d.Entitlement("Virtual Desktops"))) {
		t.Errorf("assignment after rename: %+v", as)
	}
}

// searchCounter counts searches.
type searchCounter struct {
	ldapclient.Client
	searches int
}

func (c *searchCounter) Search(req *ldap.SearchRequest) (*ldap.SearchResult, error) {
	c.searches++
	return c.Client.Search(req)
}

func (c *searchCounter) SearchEach(req *ldap.SearchRequest, each func(*ldap.Entry) error) error {
	c.searches++
	return c.Client.SearchEach(req, each)
}

// TestHomeSiteFederationBoundedReads: three searches whatever the size of
// the directory, and the rows the broker needs.
func TestHomeSiteFederationBoundedReads(t *testing.T) {
	demo, err := os.ReadFile("../fixtures/demo.ldif")
	if err != nil {
		t.Fatal(err)
	}
	snap, err := ParseSnapshot(string(demo))
	if err != nil {
		t.Fatal(err)
	}
	cc := &searchCounter{Client: snap}
	st := NewStore(cc, ldapschema.DefaultBase)
	bob, err := st.User("bob")
	if err != nil {
		t.Fatal(err)
	}
	cc.searches = 0
	f, err := st.HomeSiteFederation(bob)
	if err != nil {
		t.Fatal(err)
	}
	if cc.searches != 3 {
		t.Errorf("%d searches, want 3", cc.searches)
	}
	if len(f.Users) != 1 || !slices.Equal(f.Users[0].Groups, []string{"Engineering", "Sales"}) {
		t.Errorf("users %+v", f.Users)
	}
	if len(f.HomeSites) != 4 || len(f.Sites) != 4 {
		t.Errorf("rows %+v sites %+v", f.HomeSites, f.Sites)
	}
}

// TestConcurrentRenamesOfSitesThatReferToEachOther: two renames planned
// from the same read, of two sites that prefer each other: the second to
// write finds an entry it read gone and fails with a conflict (exit 5),
// writing nothing; the directory holds no dangling reference.
func TestConcurrentRenamesOfSitesThatReferToEachOther(t *testing.T) {
	srv, st := topology(t)
	uk, err := st.Site("UK")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetPreferredSites(uk, []string{"India"}); err != nil {
		t.Fatal(err)
	}
	a, b := dialStore(t, srv), dialStore(t, srv)
	india, err := a.Site("India")
	if err != nil {
		t.Fatal(err)
	}
	uk, err = b.Site("UK")
	if err != nil {
		t.Fatal(err)
	}
	first, err := a.PlanRename(objkind.Site, "India", india.DN, "Bharat")
	if err != nil {
		t.Fatal(err)
	}
	second, err := b.PlanRename(objkind.Site, "UK", uk.DN, "Britain")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.ApplyPlan(first); err != nil {
		t.Fatal(err)
	}
	err = b.ApplyPlan(second)
	var conflict *ldapclient.ConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("the second rename: %v, want a conflict", err)
	}
	if _, err := st.Site("UK"); err != nil {
		t.Errorf("UK after the refused rename: %v", err)
	}
	if d := danglingReferences(t, st); len(d) > 0 {
		t.Fatalf("dangling references: %q", d)
	}
}
