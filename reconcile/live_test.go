package reconcile

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

// liveStore starts a slapd holding ldif under base and returns a store on
// it.
func liveStore(t *testing.T, ldif string) *directory.Store {
	t.Helper()
	s := slapdtest.Start(t, slapdtest.Config{Base: base, LDIF: ldif})
	c, err := ldapconn.Dial(ldapconn.Options{URLs: []string{s.URL}, BindDN: s.AdminDN(), Password: slapdtest.AdminPassword})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return directory.NewStore(c, base)
}

func readState(t *testing.T, st *directory.Store) *State {
	t.Helper()
	entries, err := st.Find(base, ldap.ScopeWholeSubtree, "(objectClass=*)")
	if err != nil {
		t.Fatal(err)
	}
	return NewState(dit, entries)
}

// TestApplyLosesARaceWholly: an entry changed between the read and the
// write fails the whole plan with a conflict, and nothing is written.
func TestApplyLosesARaceWholly(t *testing.T) {
	st := liveStore(t, join(layout, site("UK", "description: London", "pae-PreferredSite: {0}India"), site("India")))
	desired := state(t, join(layout, site("UK", "description: Leeds", "pae-PreferredSite: {0}India"), site("India"), site("US")))
	current := readState(t, st)
	plan, problems := PlanApply(desired, current, Compare(desired, current), false)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	// Someone else edits UK's description after the read.
	change := []ldap.Change{{Operation: ldap.ReplaceAttribute,
		Modification: ldap.PartialAttribute{Type: ldapschema.AttrDescription, Vals: []string{"Manchester"}}}}
	if err := st.ApplyChanges(st.Client, dit.Site("UK"), change); err != nil {
		t.Fatal(err)
	}
	err := st.ApplyPlan(&plan.Plan)
	var conflict *ldapclient.ConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("apply after a concurrent change: %v, want a conflict", err)
	}
	if e, _ := st.Entry(dit.Site("US")); e != nil {
		t.Error("the plan's add landed although the plan failed")
	}
	// Read again: the plan now goes through, and a second one is empty.
	current = readState(t, st)
	plan, _ = PlanApply(desired, current, Compare(desired, current), false)
	if err := st.ApplyPlan(&plan.Plan); err != nil {
		t.Fatal(err)
	}
	if r := Compare(desired, readState(t, st)); !r.Identical {
		t.Errorf("after apply: %v", changedAttributes(r))
	}
}

// TestApplyTransactionAndMove: adds and updates land together in one
// transaction, then the subtree (a pod with a Connection Server, which
// slapd cannot delete in a transaction) moves out in one operation, then
// the site it referred to goes in a second transaction; nothing is left in
// the trash or as a placeholder.
func TestApplyTransactionAndMove(t *testing.T) {
	st := liveStore(t, join(layout, site("UK", "description: London"), site("Mars"),
		pod("P9", "cn=Mars,ou=Sites,"+base),
		"dn: cn=cs9,cn=P9,ou=Pods,"+base+"\nobjectClass: pae-ConnectionServer\ncn: cs9\n"))
	desired := state(t, join(layout, site("UK", "description: Leeds", "pae-PreferredSite: {0}US"), site("US"),
		pod("P1", "cn=US,ou=Sites,"+base)))
	current := readState(t, st)
	plan, problems := PlanApply(desired, current, Compare(desired, current), true)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if atomic, why := st.Atomic(&plan.Plan); atomic || why == "" {
		t.Errorf("a plan deleting a subtree: atomic %v (%q)", atomic, why)
	}
	if err := st.ApplyPlan(&plan.Plan); err != nil {
		t.Fatal(err)
	}
	if !plan.Stepwise || plan.Transactions != 2 {
		t.Errorf("stepwise %v in %d transactions, want a transaction, a move and a transaction", plan.Stepwise, plan.Transactions)
	}
	if plan.Adds != 2 || plan.Updates != 1 || plan.Deletes != 3 {
		t.Errorf("counts %d %d %d", plan.Adds, plan.Updates, plan.Deletes)
	}
	after := readState(t, st)
	if r := Compare(desired, after); !r.Identical {
		t.Errorf("after apply: %v", changedAttributes(r))
	}
	entries, err := st.Find(base, ldap.ScopeWholeSubtree, "(|(ou=Trash)(ou=cpactl-txn-*))", "1.1")
	if err != nil || len(entries) > 0 {
		t.Errorf("left over: %v %v", entries, err)
	}
	lines := planLines(plan)
	if got := strings.Join(lines, "\n"); !strings.HasPrefix(got, "would add site US\nwould add pod P1\nwould update site UK") {
		t.Errorf("plan:\n%s", got)
	}
}

// TestApplyAuxiliaryClass: an auxiliary class and its attribute come and
// go with one modify (the structural class stays).
func TestApplyAuxiliaryClass(t *testing.T) {
	plain := "dn: uid=alice,ou=People," + base + "\nobjectClass: top\nobjectClass: person\nobjectClass: organizationalPerson\nobjectClass: inetOrgPerson\nuid: alice\ncn: Alice Martin\nsn: Martin\n"
	withDomain := strings.Replace(plain, "objectClass: inetOrgPerson\n", "objectClass: inetOrgPerson\nobjectClass: pae-UserIdentity\n", 1) + "pae-Domain: CORP\n"
	st := liveStore(t, join(layout, plain))
	for _, want := range []string{withDomain, plain} {
		desired := state(t, join(layout, want))
		current := readState(t, st)
		plan, problems := PlanApply(desired, current, Compare(desired, current), false)
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		if got := strings.Join(planLines(plan), "\n"); got != "would update user alice (objectClass, pae-Domain)" {
			t.Errorf("plan: %s", got)
		}
		if err := st.ApplyPlan(&plan.Plan); err != nil {
			t.Fatal(err)
		}
		if r := Compare(desired, readState(t, st)); !r.Identical {
			t.Errorf("after apply: %v", changedAttributes(r))
		}
	}
}
