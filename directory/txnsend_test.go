package directory

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/internal/dirtest"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

// TestFailingWriteInAWave: in a wave of independent adds pipelined in one
// transaction, two writes the server refuses as they are queued (DNs it
// cannot parse) fail the plan with the first of them in plan order, and
// nothing is written (the transaction is aborted); the connection goes on
// with the next transaction.
func TestFailingWriteInAWave(t *testing.T) {
	_, st := topology(t)
	d := st.DIT
	p := &Plan{}
	for i := range 3 * ldapconn.PipelineDepth {
		uid := fmt.Sprintf("wave-%d", i)
		dn := d.User(uid)
		if i == ldapconn.PipelineDepth+5 || i == ldapconn.PipelineDepth+9 {
			dn = "not a DN " + uid
		}
		p.Add(AddWrite("add", "user "+uid, dn, ldapschema.User{UID: uid}.Attrs()))
	}
	if n := len(waves(p.Writes)); n != 1 {
		t.Fatalf("%d waves, want one", n)
	}
	err := st.ApplyPlan(p)
	if err == nil {
		t.Fatal("a plan with unparsable DNs was applied")
	}
	// The refused transaction wraps the failed write.
	var failed []string
	for e := error(err); e != nil; e = errors.Unwrap(e) {
		var we *WriteError
		if errors.As(e, &we) && e == error(we) {
			failed = append(failed, we.What)
		}
	}
	first := fmt.Sprintf("cannot add user wave-%d", ldapconn.PipelineDepth+5)
	if !slices.Contains(failed, first) || !ldapclient.IsCode(err, ldap.LDAPResultInvalidDNSyntax) {
		t.Errorf("error %q (writes %q), want the failure of %s (invalid DN syntax)", err, failed, first)
	}
	for _, w := range p.Writes {
		if e, _ := st.Entry(w.DN); e != nil {
			t.Fatalf("%s was written", w.DN)
		}
	}
	good := &Plan{Writes: p.Writes[:ldapconn.PipelineDepth]}
	if err := st.ApplyPlan(good); err != nil {
		t.Fatalf("the next transaction: %v", err)
	}
	if e, err := st.Entry(good.Writes[ldapconn.PipelineDepth-1].DN); err != nil || e == nil {
		t.Fatalf("after the next transaction: %v, %v", e, err)
	}
}

// transports are the ways to reach a test server with TLS: ldap://,
// ldaps:// and StartTLS as its admin account, ldapi:// with SASL EXTERNAL.
func transports(srv *slapdtest.Server) map[string]ldapconn.Options {
	return map[string]ldapconn.Options{
		"ldap":     {URLs: []string{srv.URL}, BindDN: srv.AdminDN(), Password: slapdtest.AdminPassword},
		"ldaps":    {URLs: []string{srv.LDAPSURL}, BindDN: srv.AdminDN(), Password: slapdtest.AdminPassword, CAFile: srv.CAFile},
		"starttls": {URLs: []string{srv.URL}, BindDN: srv.AdminDN(), Password: slapdtest.AdminPassword, CAFile: srv.CAFile, StartTLS: true},
		"ldapi":    {URLs: []string{srv.LDAPIURL}},
	}
}

// TestTxnOverEveryTransport: a transaction commits over ldap://, ldaps:// and
// StartTLS (the bulk connection's writer follows the upgrade); over
// ldapi:// it binds with SASL EXTERNAL, an identity that may not write
// the data (slapdtest), and gets the server's refusal.
func TestTxnOverEveryTransport(t *testing.T) {
	srv := slapdtest.Start(t, slapdtest.Config{LDIF: dirtest.Sample(), TLS: true})
	for name, opts := range transports(srv) {
		t.Run(name, func(t *testing.T) {
			c, err := ldapconn.Dial(opts)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			st := NewStore(c, dit.Base)
			site := "over-" + name
			err = c.Transaction(func(w ldapclient.Writer) error {
				return st.Add(w, dit.Site(site), ldapschema.Site{Name: site}.Attrs())
			})
			if name == "ldapi" {
				if !ldapclient.IsCode(err, ldap.LDAPResultInsufficientAccessRights) {
					t.Fatalf("as SASL EXTERNAL: %v, want insufficient access", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.Site(site); err != nil {
				t.Errorf("after the commit: %v", err)
			}
		})
	}
}
