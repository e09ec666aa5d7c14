package ldapclient

import (
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/ldapschema"
)

// Search filters, their values escaped: what every directory of cpactl is
// asked.

// Filter builds "(attr=value)" with value escaped.
func Filter(attr, value string) string { return "(" + attr + "=" + ldap.EscapeFilter(value) + ")" }

// And combines filters.
func And(filters ...string) string { return "(&" + strings.Join(filters, "") + ")" }

// Or combines filters.
func Or(filters ...string) string {
	if len(filters) == 1 {
		return filters[0]
	}
	return "(|" + strings.Join(filters, "") + ")"
}

// ChildrenFilter matches the entries immediately below dn (entryDN with
// dnOneLevelMatch, RFC 4517 and OpenLDAP's DN matching rules): one search
// can read the children of several entries. back-mdb answers it from its
// DN index, without scanning.
func ChildrenFilter(dn string) string {
	return "(" + ldapschema.AttrEntryDN + ":" + ldapschema.MatchDNOneLevel + ":=" + ldap.EscapeFilter(dn) + ")"
}

// ClassFilter is "(objectClass=class)".
func ClassFilter(class string) string { return Filter(ldapschema.AttrObjectClass, class) }

// Present is "(attr=*)": attr holds a value.
func Present(attr string) string { return "(" + attr + "=*)" }

// Not negates a filter.
func Not(filter string) string { return "(!" + filter + ")" }

// Prefix is "(attr=value*)": a value of attr starts with value (escaped).
func Prefix(attr, value string) string { return "(" + attr + "=" + ldap.EscapeFilter(value) + "*)" }

// Suffix is "(attr=*value)": a value of attr ends with value (escaped).
func Suffix(attr, value string) string { return "(" + attr + "=*" + ldap.EscapeFilter(value) + ")" }
