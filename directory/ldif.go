package directory

import (
	"encoding/base64"
	"fmt"
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
	type keyed struct {
		key   string
		entry *ldap.Entry
	}
	sorted := make([]keyed, len(entries))
	for i, e := range entries {
		sorted[i] = keyed{ldifOrderKey(e.DN), e}
	}
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].key < sorted[j].key })
	var b []byte
	for i, k := range sorted {
		if i > 0 {
			b = append(b, '\n')
		}
		b = appendLDIFEntry(b, k.entry)
	}
	_, err := w.Write(b)
	return err
}

// ldifOrderKey orders entries the way WriteLDIF and export write them:
// parents before children (by depth), then by normalized DN.
func ldifOrderKey(dn string) string {
	norm := ldapschema.NormalizeDN(dn)
	depth := 1
	for i := 0; i < len(norm); i++ {
		switch norm[i] {
		case '\\':
			i++
		case ',':
			depth++
		}
	}
	if norm == "" {
		depth = 0
	}
	return fmt.Sprintf("%04d", depth) + norm
}

// appendLDIFEntry appends one entry as an LDIF content record: the dn,
// objectClass first, the other attributes by name, values sorted.
func appendLDIFEntry(b []byte, e *ldap.Entry) []byte {
	b = appendLDIFLine(b, "dn", e.DN)
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
			b = appendLDIFLine(b, a.Name, v)
		}
	}
	return b
}

func appendLDIFLine(b []byte, name, value string) []byte {
	b = append(b, name...)
	if safeString(value) {
		b = append(b, ": "...)
		b = append(b, value...)
		return append(b, '\n')
	}
	b = append(b, ":: "...)
	b = base64.StdEncoding.AppendEncode(b, []byte(value))
	return append(b, '\n')
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
