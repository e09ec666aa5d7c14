// Package ldapuri refuses what an LDAP URI must not carry: a user name or
// a password before "@". RFC 4516 LDAP URLs have no userinfo (the bind DN
// and password are given apart), so one there is a mistake that would
// otherwise be echoed in errors, `status` and `config get-contexts`. The
// check reads the text, not a parsed URL, so that a URI that does not
// parse is caught too, and it never repeats the userinfo.
package ldapuri

import (
	"fmt"
	"strings"
)

// Redact returns raw with its userinfo replaced by "***", and whether it
// had one: "ldap://admin:s3cret@host" is "ldap://***@host", true. The
// userinfo is whatever comes before the last "@" of the authority (the
// text after "scheme://", or from the start when there is no scheme, up
// to the first "/", "?" or "#").
func Redact(raw string) (string, bool) {
	prefix, rest := "", raw
	if i := strings.Index(raw, "://"); i >= 0 {
		prefix, rest = raw[:i+3], raw[i+3:]
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndex(rest[:end], "@")
	if at < 0 {
		return raw, false
	}
	return prefix + "***" + rest[at:], true
}

// Error is a URI with a userinfo: where it came from ("-H", "CPACTL_URL",
// `context "prod"`) and the URI with the userinfo left out.
type Error struct {
	Source   string
	Redacted string
}

func (e *Error) Error() string {
	return fmt.Sprintf(`the URI %q (%s) holds a user name or password before "@": LDAP URIs carry none`, e.Redacted, e.Source)
}

// Hint says how to bind instead.
func (e *Error) Hint() string {
	return `remove "user:password@" from the URI; bind with -D DN and -y FILE, -W or CPACTL_BIND_PASSWORD`
}

// Check returns an *Error when raw holds a userinfo, naming source.
func Check(source, raw string) error {
	if redacted, ok := Redact(raw); ok {
		return &Error{Source: source, Redacted: redacted}
	}
	return nil
}
