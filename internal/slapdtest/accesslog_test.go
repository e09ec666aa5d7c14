package slapdtest

import (
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/ldapschema"
)

// TestAccessLog: a server started with AccessLog logs a write with its old
// values and a refused one; the admin and the help desk read the log, the
// operator is refused and anonymous sees nothing; no password value is
// readable by anyone, the admin included (the harness's add of the
// account carried one too).
func TestAccessLog(t *testing.T) {
	s := Start(t, Config{AccessLog: true})
	admin, err := s.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	helpdesk := s.Account(Helpdesk).DN
	// A refused write (the help desk may not change a password), then an
	// admin's password change, both logged with the value.
	hc, err := s.DialAs(s.Account(Helpdesk))
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	set := func(c *ldap.Conn, pw string) error {
		req := ldap.NewModifyRequest(s.Account(NoRole).DN, nil)
		req.Replace(ldapschema.AttrUserPassword, []string{pw})
		req.Replace(ldapschema.AttrDescription, []string{"changed"})
		return c.Modify(req)
	}
	if err := set(hc, "refused-secret"); !ldap.IsErrorWithCode(err, ldap.LDAPResultInsufficientAccessRights) {
		t.Fatalf("the help desk's password change: %v, want insufficient access", err)
	}
	if err := set(admin, "logged-secret"); err != nil {
		t.Fatal(err)
	}
	search := func(c *ldap.Conn) (*ldap.SearchResult, error) {
		return c.Search(ldap.NewSearchRequest(ldapschema.AccessLogBase, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
			"(&(objectClass="+ldapschema.ClassAuditWriteObject+")(reqType=modify)(reqDN="+ldap.EscapeFilter(s.Account(NoRole).DN)+"))",
			[]string{"*"}, nil))
	}
	for _, who := range []Who{Admin, Helpdesk} {
		c, err := s.DialAs(s.Account(who))
		if err != nil {
			t.Fatal(err)
		}
		res, err := search(c)
		if err == nil {
			// The add of the account, by the harness as the root DN.
			var all *ldap.SearchResult
			all, err = c.Search(ldap.NewSearchRequest(ldapschema.AccessLogBase, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
				"(reqDN="+ldap.EscapeFilter(s.Account(NoRole).DN)+")", []string{"*"}, nil))
			if err == nil && len(all.Entries) != 3 {
				t.Errorf("%s: %d records of the account, want its add and the two modifies", who, len(all.Entries))
			}
			for _, e := range entriesOf(all) {
				for _, v := range e.GetAttributeValues(ldapschema.AttrReqMod) {
					if strings.Contains(v, NoRole.Password()) {
						t.Errorf("%s reads the added account's password in %s", who, e.DN)
					}
				}
			}
		}
		c.Close()
		if err != nil {
			t.Fatalf("%s reading the log: %v", who, err)
		}
		var results []string
		for _, e := range res.Entries {
			results = append(results, e.GetAttributeValue(ldapschema.AttrReqResult)+" "+e.GetAttributeValue(ldapschema.AttrReqAuthzID))
			for _, a := range e.Attributes {
				for _, v := range a.Values {
					if strings.Contains(v, "secret") || strings.Contains(v, NoRole.Password()) {
						t.Errorf("%s reads a password in %s: %s: %q", who, e.DN, a.Name, v)
					}
				}
			}
			if len(e.GetAttributeValues(ldapschema.AttrReqOld)) == 0 {
				t.Errorf("%s: record %s has no old values (logold)", who, e.DN)
			}
		}
		want := []string{"50 " + helpdesk, "0 " + s.AdminDN()}
		if strings.Join(results, "; ") != strings.Join(want, "; ") {
			t.Errorf("%s reads the records %q, want %q", who, results, want)
		}
	}
	oc, err := s.DialAs(s.Account(Operator))
	if err != nil {
		t.Fatal(err)
	}
	defer oc.Close()
	if _, err := search(oc); !ldap.IsErrorWithCode(err, ldap.LDAPResultInsufficientAccessRights) {
		t.Errorf("the operator reading the log: %v, want insufficient access", err)
	}
	anon, err := ldap.DialURL(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	if res, err := search(anon); err == nil && len(res.Entries) > 0 {
		t.Errorf("anonymous reads %d records of the log", len(res.Entries))
	}
}

func entriesOf(res *ldap.SearchResult) []*ldap.Entry {
	if res == nil {
		return nil
	}
	return res.Entries
}
