package ldapconn

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
)

// TestAuthRequired: a write refused because of who the connection is is
// told by its result code and whether the connection is anonymous, never
// by the server's words, and keeps the code (exit 4).
func TestAuthRequired(t *testing.T) {
	server := func(code uint16) error {
		return ldap.NewError(code, errors.New("slapd's wording, which may change"))
	}
	for _, tc := range []struct {
		name      string
		err       error
		anonymous bool
		want      bool // an *ldapclient.AuthRequiredError
		hint      string
	}{
		{"strong auth required, anonymous: bind", server(ldap.LDAPResultStrongAuthRequired), true, true, "-D DN with -W"},
		{"strong auth required, bound: a stronger authentication", server(ldap.LDAPResultStrongAuthRequired), false, true, "TLS"},
		{"insufficient access, anonymous: bind", server(ldap.LDAPResultInsufficientAccessRights), true, true, "-D DN with -W"},
		{"insufficient access, bound: the account's rights, as it is", server(ldap.LDAPResultInsufficientAccessRights), false, false, ""},
		{"unwilling to perform is not about the bind", server(ldap.LDAPResultUnwillingToPerform), true, false, ""},
		{"a message that says so is not classified", errors.New("strong auth required (8)"), true, false, ""},
		{"a network error is not", ldap.NewError(ldap.ErrorNetwork, errors.New("reset")), true, false, ""},
		{"nil stays nil", nil, true, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := authRequired(tc.err, tc.anonymous)
			var ar *ldapclient.AuthRequiredError
			if errors.As(got, &ar) != tc.want {
				t.Fatalf("authRequired(%v, %v) = %v, want an *AuthRequiredError: %v", tc.err, tc.anonymous, got, tc.want)
			}
			if !tc.want {
				if got != tc.err {
					t.Fatalf("the error changed: %v", got)
				}
				return
			}
			if code, _ := ResultCode(tc.err); !ldapclient.IsCode(got, code) {
				t.Errorf("the result code is lost: %v", got)
			}
			if !strings.Contains(ar.Hint(), tc.hint) {
				t.Errorf("hint %q does not name %q", ar.Hint(), tc.hint)
			}
			if again := authRequired(got, tc.anonymous); again != got {
				t.Errorf("classified twice: %v", again)
			}
		})
	}
}
