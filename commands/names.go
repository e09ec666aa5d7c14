package commands

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cpactl/cpactl/quote"
)

// Limits on names and descriptions (docs/topology.md and docs/entitlements.md: site names 1 to 64 characters,
// descriptions up to 1024; cpactl applies the same to every object it
// names, users excepted, whose uid may be up to 256).
const (
	maxName        = 64
	maxUserName    = 256
	maxDescription = 1024
)

// checkName validates an object name before anything is read or written:
// 1 to max characters, printable (any script, the LDAP specials , + " \ <
// > ; = * ( ) included), no leading or trailing space (the directory
// ignores them when it compares names).
func checkName(kind, name string, max int) error {
	n := utf8.RuneCountInString(name)
	switch {
	case !utf8.ValidString(name):
		return errorf("", "%s name %s is not valid UTF-8", kind, quote.Name(name))
	case n == 0:
		return errorf("", "%s name is empty", kind)
	case n > max:
		if n > quote.MaxShown { // quote.Name already gives the length
			return errorf("", "%s name %s is too long: at most %d characters", kind, quote.Name(name), max)
		}
		return errorf("", "%s name %s is %d characters long: at most %d", kind, quote.Name(name), n, max)
	case strings.TrimSpace(name) != name:
		return errorf("remove the spaces", "%s name %s starts or ends with a space", kind, quote.Name(name))
	}
	for _, r := range name {
		if !unicode.IsPrint(r) && r != ' ' {
			return errorf("", "%s name %s holds the non-printable character %U", kind, quote.Name(name), r)
		}
	}
	return nil
}

// checkDescription validates a description.
func checkDescription(kind, name, d string) error {
	if n := utf8.RuneCountInString(d); n > maxDescription {
		return errorf("", "description of %s %s is %d characters long: at most %d", kind, quote.Name(name), n, maxDescription)
	}
	for _, r := range d {
		if !unicode.IsPrint(r) && r != ' ' {
			return errorf("", "description of %s %s holds the non-printable character %U", kind, quote.Name(name), r)
		}
	}
	return nil
}

// cleanList trims the values of a list flag and drops empty ones.
func cleanList(values []string) []string {
	var out []string
	for _, v := range values {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// firstDuplicate returns the first value that repeats an earlier one
// (compared without regard to case), or "".
func firstDuplicate(values []string) string {
	seen := map[string]bool{}
	for _, v := range values {
		k := strings.ToLower(v)
		if seen[k] {
			return v
		}
		seen[k] = true
	}
	return ""
}

// orEmpty turns a nil list into an empty one, so JSON prints [] not null.
func orEmpty(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
