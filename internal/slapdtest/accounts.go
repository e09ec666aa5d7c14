package slapdtest

import (
	"fmt"
	"strings"

	"github.com/cpactl/cpactl/ldapschema"
)

// The harness's accounts: one per role, one with no role, and the
// replication account the consumers' syncrepl binds as. They live in
// ou=Roles beside the role groups, which is not part of the federation
// (export, diff, apply and lint leave it alone), so that a test's
// federation is what it loads; accounts may live anywhere under the base
// (the demo's are in ou=Accounts: fixtures/demo-accounts.ldif).

// Who names a harness account.
type Who string

// The harness's accounts.
const (
	Admin      = Who(ldapschema.RoleAdmin)
	Operator   = Who(ldapschema.RoleOperator)
	Helpdesk   = Who(ldapschema.RoleHelpdesk)
	NoRole     = Who("norole")
	Replicator = Who("replicator")
)

// Account is a DN to bind as and its password.
type Account struct {
	DN       string
	Password string
}

// Account returns the harness account w of this server.
func (s *Server) Account(w Who) Account {
	return Account{DN: w.DN(s.Base), Password: w.Password()}
}

// DN is the DN of the account w under base: uid=test-<w>,ou=Roles,<base>.
func (w Who) DN(base string) string {
	return ldapschema.RDN(ldapschema.AttrUID, "test-"+string(w)) + "," + ldapschema.DIT{Base: base}.Roles()
}

// Password is the test password of the account w (a test secret, never a
// real one).
func (w Who) Password() string { return "cpactl-test-" + string(w) + "-pw" }

// Accounts returns the LDIF of ou=Roles, the three role groups (each with
// the harness account of its role, and the placeholder member) and the
// accounts, for the base.
func Accounts(base string) string {
	dit := ldapschema.DIT{Base: base}
	var b strings.Builder
	fmt.Fprintf(&b, "dn: %s\nobjectClass: top\nobjectClass: organizationalUnit\nou: Roles\n\n", dit.Roles())
	for _, w := range []Who{Admin, Operator, Helpdesk, NoRole, Replicator} {
		fmt.Fprintf(&b, "dn: %s\nobjectClass: account\nobjectClass: simpleSecurityObject\nuid: %s\nuserPassword: %s\n\n",
			w.DN(base), ldapschema.NameOf(w.DN(base)), w.Password())
	}
	for _, d := range ldapschema.Roles {
		fmt.Fprintf(&b, "dn: %s\nobjectClass: top\nobjectClass: groupOfNames\ncn: %s\nmember: %s\nmember:\n\n",
			dit.RoleGroup(d.Role), d.Group, Who(d.Role).DN(base))
	}
	return b.String()
}

// AdminPassword is the admin account's password (Admin.Password()).
const AdminPassword = "cpactl-test-admin-pw"

// AdminDN is the DN of the admin account, which tests bind as to write.
func (s *Server) AdminDN() string { return Admin.DN(s.Base) }
