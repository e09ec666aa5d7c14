package directory

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

// unindexed lists the filters slapd evaluated without an index since the
// log had offset bytes (slapd -d 32 prints "not indexed" for each).
func unindexed(log string, offset int) []string {
	var out []string
	for _, line := range strings.Split(log[offset:], "\n") {
		if strings.Contains(line, "not indexed") {
			out = append(out, strings.TrimSpace(line[strings.Index(line, "<="):]))
		}
	}
	return out
}

// readsOfEveryKind runs the searches of resolve, the identity commands and
// a delete's referrer check on the demo federation.
func readsOfEveryKind(t *testing.T, st *Store) {
	t.Helper()
	for _, q := range []ResolveQuery{
		{User: "alice", Entitlement: "Desktops", ConnectionServer: "cs-blr-1"},
		{User: "bob", Entitlement: "Analyst RDS", ConnectionServer: "cs-lon-1"},
		{User: "carol", Entitlement: "Engineering Workstations", ConnectionServer: "cs-nyc-1"},
	} {
		if _, err := st.ResolveFederation(q); err != nil {
			t.Fatal(err)
		}
	}
	alice := dit.User("alice")
	if _, err := st.GroupsWithMember(alice); err != nil {
		t.Fatal(err)
	}
	if _, err := st.EntitlementsWithMember(alice); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Sessions(ldapclient.Filter(ldapschema.AttrUserDN, alice)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.PlanDelete(objkind.Pod, "London-1", dit.Pod("London-1")); err != nil {
		t.Fatal(err)
	}
}

// TestSearchesAreIndexed: with the indexes cpactl documents
// (ldapschema.Indexes), none of its searches makes slapd scan unindexed;
// without them the same reads do, so the check can fail.
func TestSearchesAreIndexed(t *testing.T) {
	demo, err := os.ReadFile("../fixtures/demo.ldif")
	if err != nil {
		t.Fatal(err)
	}
	for _, noIndexes := range []bool{false, true} {
		srv := slapdtest.Start(t, slapdtest.Config{LDIF: string(demo), Debug: "32", NoIndexes: noIndexes})
		c, err := ldapconn.Dial(ldapconn.Options{URLs: []string{srv.URL}, BindDN: srv.AdminDN(), Password: slapdtest.AdminPassword})
		if err != nil {
			t.Fatal(err)
		}
		start := len(srv.Log())
		readsOfEveryKind(t, NewStore(c, dit.Base))
		c.Close()
		got := unindexed(srv.Log(), start)
		switch {
		case !noIndexes && len(got) > 0:
			t.Errorf("unindexed searches with cpactl's indexes:\n%s", strings.Join(got, "\n"))
		case noIndexes && len(got) == 0:
			t.Errorf("without indexes slapd reported no unindexed search: the check cannot fail")
		}
	}
}

// TestIndexesLDIFApplies: the cn=config form of the indexes loads with
// ldapmodify over ldapi, and then the same reads are indexed.
func TestIndexesLDIFApplies(t *testing.T) {
	if _, err := exec.LookPath("ldapmodify"); err != nil {
		t.Skip("ldapmodify not installed")
	}
	demo, err := os.ReadFile("../fixtures/demo.ldif")
	if err != nil {
		t.Fatal(err)
	}
	srv := slapdtest.Start(t, slapdtest.Config{LDIF: string(demo), Debug: "32", NoIndexes: true})
	cmd := exec.Command("ldapmodify", "-Q", "-Y", "EXTERNAL", "-H", srv.LDAPIURL)
	cmd.Stdin = strings.NewReader(ldapschema.IndexesLDIF("olcDatabase={1}mdb,cn=config"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ldapmodify: %v: %s", err, out)
	}
	c, err := ldapconn.Dial(ldapconn.Options{URLs: []string{srv.URL}, BindDN: srv.AdminDN(), Password: slapdtest.AdminPassword})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// slapd builds a new index in the background (back-mdb's online
	// indexing) and searches it only once that is done: read until every
	// search is indexed, and fail if one still is not after 30 seconds
	// (an index the LDIF does not set never comes).
	deadline := time.Now().Add(30 * time.Second)
	for {
		start := len(srv.Log())
		readsOfEveryKind(t, NewStore(c, dit.Base))
		got := unindexed(srv.Log(), start)
		if len(got) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("unindexed searches 30 s after the olcDbIndex change:\n%s", strings.Join(got, "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}
