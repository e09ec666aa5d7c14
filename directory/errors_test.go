package directory

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/internal/objkind"
)

func TestErrorClassification(t *testing.T) {
	server := func(code uint16) error {
		// As the store returns them: wrapped, with the server's own words.
		return ldapclient.OpErrorf(ldap.NewError(code, errors.New("slapd's wording, which may change")), "modifying cn=X")
	}
	for _, tc := range []struct {
		name                                  string
		err                                   error
		refused, noSuch, assertion, duplicate bool
	}{
		{"invalid credentials are refused access", server(ldap.LDAPResultInvalidCredentials), true, false, false, false},
		{"insufficient access is refused access", server(ldap.LDAPResultInsufficientAccessRights), true, false, false, false},
		{"inappropriate authentication is refused access", server(ldap.LDAPResultInappropriateAuthentication), true, false, false, false},
		{"stronger authentication required is refused access", server(ldap.LDAPResultStrongAuthRequired), true, false, false, false},
		{"confidentiality required is refused access", server(ldap.LDAPResultConfidentialityRequired), true, false, false, false},
		{"no such object", server(ldap.LDAPResultNoSuchObject), false, true, false, false},
		{"a failed assertion", server(ldap.LDAPResultAssertionFailed), false, false, true, false},
		{"already exists", server(ldap.LDAPResultEntryAlreadyExists), false, false, false, true},
		{"another result is none of them", server(ldap.LDAPResultUnwillingToPerform), false, false, false, false},
		{"a network error is none of them", ldap.NewError(ldap.ErrorNetwork, errors.New("connection reset")), false, false, false, false},
		{"a message that says so is not classified", errors.New("insufficient access (50): no such object"), false, false, false, false},
		{"nil is none of them", nil, false, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsAccessRefused(tc.err); got != tc.refused {
				t.Errorf("IsAccessRefused = %v, want %v", got, tc.refused)
			}
			if got := IsNoSuchObject(tc.err); got != tc.noSuch {
				t.Errorf("IsNoSuchObject = %v, want %v", got, tc.noSuch)
			}
			if got := IsAssertionFailed(tc.err); got != tc.assertion {
				t.Errorf("IsAssertionFailed = %v, want %v", got, tc.assertion)
			}
			if got := IsAlreadyExists(tc.err); got != tc.duplicate {
				t.Errorf("IsAlreadyExists = %v, want %v", got, tc.duplicate)
			}
		})
	}
}

func TestTypedArgumentErrors(t *testing.T) {
	_, err := ParseUserName(`EXAMPLE\`)
	var form *UserNameError
	if !errors.As(fmt.Errorf("reading: %w", err), &form) || form.Arg != `EXAMPLE\` {
		t.Errorf("ParseUserName(`EXAMPLE\\`) = %v, want a *UserNameError", err)
	}
	if want := `user "EXAMPLE\\": write uid, DOMAIN\uid or uid@domain`; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	for _, tc := range []struct {
		err  *AmbiguousError
		want string
	}{
		{&AmbiguousError{Kind: objkind.Pool, Name: "P", DNs: []string{"cn=P,a", "cn=P,b"}},
			"pool \"P\" is ambiguous: 2 entries carry that name (cn=P,a; cn=P,b); run `cpactl lint`"},
		{&AmbiguousError{Kind: "member", Name: "x", Kinds: []string{objkind.User, objkind.Group}},
			`member "x" is ambiguous: a user and a group carry that name; write user:x, group:x or computer:x`},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("message %q, want %q", got, tc.want)
		}
	}
}
