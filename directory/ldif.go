package directory

import (
	"encoding/base64"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/ldapschema"
)

// WriteLDIF writes entries as LDIF content records (RFC 2849), parents
// before children and siblings by DN, objectClass first and the other
// attributes by name, so that the output loads with ldapadd and diffs well.
// Values (and DNs) that are not safe strings are base64-encoded; lines are
// not folded.
func WriteLDIF(w io.Writer, entries []*ldap.Entry) error {
	sorted := append([]*ldap.Entry(nil), entries...)
	depth := func(e *ldap.Entry) int {
		if dn, err := ldap.ParseDN(e.DN); err == nil {
			return len(dn.RDNs)
		}
		return strings.Count(e.DN, ",") + 1
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		di, dj := depth(sorted[i]), depth(sorted[j])
		if di != dj {
			return di < dj
		}
		return ldapschema.NormalizeDN(sorted[i].DN) < ldapschema.NormalizeDN(sorted[j].DN)
	})
	var b strings.Builder
	for i, e := range sorted {
		if i > 0 {
			b.WriteString("\n")
		}
		writeLDIFLine(&b, "dn", e.DN)
		attrs := append([]*ldap.EntryAttribute(nil), e.Attributes...)
		sort.SliceStable(attrs, func(i, j int) bool {
			ci := strings.EqualFold(attrs[i].Name, ldapschema.AttrObjectClass)
			cj := strings.EqualFold(attrs[j].Name, ldapschema.AttrObjectClass)
			if ci != cj {
				return ci
			}
			return strings.ToLower(attrs[i].Name) < strings.ToLower(attrs[j].Name)
		})
		for _, a := range attrs {
			vals := append([]string(nil), a.Values...)
			sort.Strings(vals)
			for _, v := range vals {
				writeLDIFLine(&b, a.Name, v)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeLDIFLine(b *strings.Builder, name, value string) {
	if safeString(value) {
		b.WriteString(name + ": " + value + "\n")
		return
	}
	b.WriteString(name + ":: " + base64.StdEncoding.EncodeToString([]byte(value)) + "\n")
}

// safeString reports whether an LDIF value may be written as is: ASCII
// without NUL, CR or LF, not starting with space, colon or '<', and not
// ending with a space.
func safeString(s string) bool {
	if s == "" {
		return true
	}
	if !utf8.ValidString(s) || s[0] == ' ' || s[0] == ':' || s[0] == '<' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == 0 || c == '\n' || c == '\r' || c > 126 {
			return false
		}
	}
	return true
}
