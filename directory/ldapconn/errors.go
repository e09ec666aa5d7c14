package ldapconn

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/ldapschema"
)

// ResultCode returns the LDAP result code err carries, if any.
func ResultCode(err error) (uint16, bool) {
	var le *ldap.Error
	if !errors.As(err, &le) {
		return 0, false
	}
	return le.ResultCode, true
}

// authRequired returns err as an *AuthRequiredError when it is the
// server's refusal of a write because of who the connection is (by result
// code and whether the connection is anonymous, never by the wording);
// otherwise err itself.
func authRequired(err error, anonymous bool) error {
	var ar *ldapclient.AuthRequiredError
	if errors.As(err, &ar) {
		return err
	}
	code, ok := ResultCode(err)
	switch {
	case !ok:
		return err
	case code == ldap.LDAPResultStrongAuthRequired,
		code == ldap.LDAPResultInsufficientAccessRights && anonymous:
		return &ldapclient.AuthRequiredError{Anonymous: anonymous, Err: err}
	}
	return err
}

// Unanswered reports whether err says a request was sent and no answer
// came: a timeout, a connection lost with the request in flight, or any
// failure that is not a result from the server (go-ldap reports a
// connection read error as a plain error). Such a write may or may not
// have been applied.
func Unanswered(err error) bool {
	if err == nil {
		return false
	}
	var replica *ldapclient.ReplicaError
	if errors.As(err, &replica) {
		return false // refused by a replica, not sent to the provider
	}
	var layout *LayoutError
	if errors.As(err, &layout) {
		return false // refused where the server holds no database
	}
	var na *NoAnswerError
	var unknown *OutcomeUnknownError
	if errors.As(err, &na) || errors.As(err, &unknown) {
		return true
	}
	var le *ldap.Error
	if errors.As(err, &le) {
		// Codes from 200 on are go-ldap's own (network, unexpected
		// message, ...), not the server's.
		return le.ResultCode >= ldap.ErrorNetwork
	}
	var conflict *ldapclient.ConflictError
	return !errors.As(err, &conflict)
}

// LayoutError says a search's base does not exist (exit 3): the base DN
// itself (a wrong -b), or a container `cpactl init` creates. A base
// outside every naming context of the server (it holds no database for
// it: no read finds it, and a write there is refused with 53) is one too,
// with the server's naming contexts in Contexts.
type LayoutError struct {
	Base       string   // the federation's base DN
	DN         string   // the search base (or the entry written) that does not exist
	BaseExists bool     // the server holds the base DN (so init has not run)
	Contexts   []string // the server's naming contexts, when the base lies under none
	// Enclosing is the base of a cpactl layout that holds the base inside
	// it (-b ou=Sites,dc=example: dc=example), when there is one.
	Enclosing string
	Roles     bool // what is missing is the role groups (init --roles has not run)
}

func (e *LayoutError) Error() string {
	switch {
	case e.Enclosing != "":
		return fmt.Sprintf("the base %s lies inside the cpactl layout under %s: it is not a federation's base", e.Base, e.Enclosing)
	case len(e.Contexts) > 0:
		return fmt.Sprintf("the base %s is outside every naming context of the server: it holds %s", e.Base, strings.Join(e.Contexts, "; "))
	case !e.BaseExists:
		return fmt.Sprintf("the base %s does not exist on the server", e.Base)
	}
	if e.Roles {
		return fmt.Sprintf("%s does not exist: the directory has no role groups under %s", e.DN, e.Base)
	}
	return fmt.Sprintf("%s does not exist: the directory has no cpactl layout under %s", e.DN, e.Base)
}

// Hint says what to do about it.
func (e *LayoutError) Hint() string {
	switch {
	case e.Enclosing != "" && ldapschema.EqualDN(e.Enclosing, ldapschema.DefaultBase):
		return "pass -b " + e.Enclosing + ", the entry that holds ou=Sites and ou=Pods (or leave -b out: it is the default)"
	case e.Enclosing != "":
		return "pass -b " + e.Enclosing + ", the entry that holds ou=Sites and ou=Pods"
	case len(e.Contexts) > 0:
		return "check -b/--base (or CPACTL_BASE): the base must be one of the server's naming contexts or lie under one"
	case !e.BaseExists:
		return "check -b/--base (or CPACTL_BASE); `cpactl init` creates the base when it is the suffix of the server's database"
	case e.Roles:
		return "run `cpactl init --roles` (as an admin, or the root DN on a new server) to create the role groups"
	}
	return "run `cpactl init` to create the layout"
}
