package directory

import (
	"fmt"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
)

// What an error from this package or the server means, for the exit-code
// mapper and the commands' hints: each reports it from the error's type or
// its LDAP result code, never from its message (a server's wording
// changes).

// IsAccessRefused reports whether the server refused who the connection is
// or what it may do: invalid credentials (49), insufficient access (50),
// inappropriate authentication (48), stronger authentication required (8)
// or confidentiality required (13). A failed bind is an *AuthError, which
// the exit-code mapper also counts as refused whatever its result code.
func IsAccessRefused(err error) bool {
	code, ok := ldapconn.ResultCode(err)
	if !ok {
		return false
	}
	switch code {
	case ldap.LDAPResultInvalidCredentials, ldap.LDAPResultInsufficientAccessRights,
		ldap.LDAPResultInappropriateAuthentication, ldap.LDAPResultStrongAuthRequired,
		ldap.LDAPResultConfidentialityRequired:
		return true
	}
	return false
}

// IsNoSuchObject reports whether the server answered that the entry (or
// the search base) does not exist (32).
func IsNoSuchObject(err error) bool { return ldapclient.IsCode(err, ldap.LDAPResultNoSuchObject) }

// IsAssertionFailed reports whether a write's assertion failed (122): the
// entry is no longer as it was read.
func IsAssertionFailed(err error) bool { return ldapclient.IsCode(err, ldap.LDAPResultAssertionFailed) }

// IsAlreadyExists reports whether an add found the entry there already
// (68): someone else created it meanwhile.
func IsAlreadyExists(err error) bool {
	return ldapclient.IsCode(err, ldap.LDAPResultEntryAlreadyExists)
}

// AmbiguousError says a name matches more than one object (exit code 1):
// several entries of one kind carry it (Store.FindOne; names are unique
// within a kind, so `cpactl lint` reports it), or a member argument names
// objects of several kinds (Store.ResolveMember), which a prefix (user:,
// group:, computer:) tells apart.
type AmbiguousError struct {
	Kind  string   // the kind searched ("site", ...), or "member"
	Name  string   // the name as given
	DNs   []string // FindOne: the entries that carry the name
	Kinds []string // ResolveMember: the kinds of object that carry it
}

func (e *AmbiguousError) Error() string {
	if len(e.Kinds) > 0 {
		return fmt.Sprintf("%s %q is ambiguous: a %s carry that name; write user:%s, group:%s or computer:%s",
			e.Kind, e.Name, strings.Join(e.Kinds, " and a "), e.Name, e.Name, e.Name)
	}
	return fmt.Sprintf("%s %q is ambiguous: %d entries carry that name (%s); run `cpactl lint`", e.Kind, e.Name,
		len(e.DNs), strings.Join(e.DNs, "; "))
}

// UserNameError says a user argument is in none of the accepted forms:
// uid, DOMAIN\uid or uid@domain (exit code 1).
type UserNameError struct {
	Arg string // the argument as given
}

func (e *UserNameError) Error() string {
	return fmt.Sprintf("user %q: write uid, DOMAIN\\uid or uid@domain", e.Arg)
}
