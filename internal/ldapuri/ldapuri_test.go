package ldapuri

import (
	"strings"
	"testing"
)

// TestRedact: one row per form a URI takes.
func TestRedact(t *testing.T) {
	tests := []struct {
		name, raw, want string
		found           bool
	}{
		{"a plain URI", "ldap://host:389", "ldap://host:389", false},
		{"ldaps with a DN", "ldaps://host/dc=example,dc=com", "ldaps://host/dc=example,dc=com", false},
		{"ldapi", "ldapi://%2Frun%2Fslapd%2Fldapi", "ldapi://%2Frun%2Fslapd%2Fldapi", false},
		{"an @ after the authority is no userinfo", "ldap://host/cn=a@b?mail?sub", "ldap://host/cn=a@b?mail?sub", false},
		{"an @ in the filter", "ldap://host?x?sub?(mail=a@b)", "ldap://host?x?sub?(mail=a@b)", false},
		{"user and password", "ldap://admin:s3cret@host:389", "ldap://***@host:389", true},
		{"user alone", "ldap://admin@host", "ldap://***@host", true},
		{"empty userinfo", "ldap://@host", "ldap://***@host", true},
		{"an @ in the password", "ldap://admin:p@ss@host/", "ldap://***@host/", true},
		{"a DN as the user", "ldaps://cn=admin,dc=x:pw@host", "ldaps://***@host", true},
		{"ldapi with userinfo", "ldapi://root:pw@%2Frun%2Fldapi", "ldapi://***@%2Frun%2Fldapi", true},
		{"a bad escape", "ldap://admin:s3c%zz@host", "ldap://***@host", true},
		{"no scheme", "admin:pw@host", "***@host", true},
		{"empty", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found := Redact(tt.raw)
			if got != tt.want || found != tt.found {
				t.Errorf("Redact(%q) = %q, %v; want %q, %v", tt.raw, got, found, tt.want, tt.found)
			}
		})
	}
}

// FuzzRedact: a redacted URI keeps the scheme and what follows the
// userinfo, and nothing of the userinfo: redacting it again changes
// nothing, and its authority holds no "@" but the one after "***".
func FuzzRedact(f *testing.F) {
	for _, s := range []string{"ldap://admin:s3cret@host", "ldap://host", "a@b://c@d/e@f", "ldapi://x@%2Fs", "://@", "@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, found := Redact(raw)
		if !found {
			if got != raw || Check("x", raw) != nil {
				t.Fatalf("Redact(%q) = %q without a userinfo", raw, got)
			}
			return
		}
		if Check("x", raw) == nil {
			t.Fatalf("Check(%q) = nil after Redact found a userinfo", raw)
		}
		prefix := ""
		if i := strings.Index(raw, "://"); i >= 0 {
			prefix = raw[:i+3]
		}
		rest, ok := strings.CutPrefix(got, prefix+"***@")
		if !ok || !strings.HasSuffix(raw, "@"+rest) {
			t.Fatalf("Redact(%q) = %q: not the scheme, ***, and what follows the userinfo", raw, got)
		}
		if end := strings.IndexAny(rest, "/?#"); strings.Contains(rest[:max(end, 0)], "@") || (end < 0 && strings.Contains(rest, "@")) {
			t.Fatalf("Redact(%q) = %q: an @ is left in the authority", raw, got)
		}
		if again, _ := Redact(got); again != got {
			t.Fatalf("Redact(%q) = %q, but Redact(%q) = %q", raw, got, got, again)
		}
	})
}
