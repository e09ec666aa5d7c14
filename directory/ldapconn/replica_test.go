package ldapconn

import "testing"

func TestSameServer(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"ldap://127.0.0.1:3389", "ldap://127.0.0.1:3389/dc=x,dc=y??base", true},
		{"ldap://LDAP1.example.com", "ldap://ldap1.example.com:389", true},
		{"ldaps://ldap1.example.com", "ldaps://ldap1.example.com:636/", true},
		{"ldap://ldap1.example.com", "ldaps://ldap1.example.com", false},
		{"ldap://127.0.0.1:3389", "ldap://127.0.0.1:3390", false},
		{"ldap://127.0.0.1:3389", "ldap://evil.example.com:3389", false},
		{"ldapi://%2Frun%2Fslapd%2Fldapi", "ldapi://%2Frun%2Fslapd%2Fldapi", true},
	} {
		if got := SameServer(tc.a, tc.b); got != tc.same {
			t.Errorf("SameServer(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}
