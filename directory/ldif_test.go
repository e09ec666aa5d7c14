package directory

import (
	"bytes"
	"errors"
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/ldapschema"
)

// TestWriteLDIFFormat pins what export writes: parents first, siblings by
// DN, objectClass first, the other attributes by name, values sorted,
// unsafe values and DNs base64-encoded, one blank line between records.
func TestWriteLDIFFormat(t *testing.T) {
	entries := []*ldap.Entry{
		ldap.NewEntry("cn=Zürich,ou=Sites,dc=example,dc=test", map[string][]string{
			"pae-PreferredSite": {"{1}UK", "{0}India"}, "cn": {"Zürich"}, "objectClass": {"top", "pae-Site"}}),
		ldap.NewEntry("ou=Sites,dc=example,dc=test", map[string][]string{
			"ou": {"Sites"}, "objectClass": {"top", "organizationalUnit"}, "description": {" leading space"}}),
	}
	var b strings.Builder
	if err := WriteLDIF(&b, entries); err != nil {
		t.Fatal(err)
	}
	want := `dn: ou=Sites,dc=example,dc=test
objectClass: organizationalUnit
objectClass: top
description:: ` + b64(" leading space") + `
ou: Sites

dn:: ` + b64("cn=Zürich,ou=Sites,dc=example,dc=test") + `
objectClass: pae-Site
objectClass: top
cn:: ` + b64("Zürich") + `
pae-PreferredSite: {0}India
pae-PreferredSite: {1}UK
`
	if b.String() != want {
		t.Errorf("WriteLDIF wrote\n%s\nwant\n%s", b.String(), want)
	}
}

// TestLDIFWriter: records are written in the order given, attributes
// ordered and values encoded as WriteLDIF does, values in the order given.
func TestLDIFWriter(t *testing.T) {
	var b strings.Builder
	lw := NewLDIFWriter(&b)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(lw.Comment("generated", ""))
	must(lw.WriteEntry("cn=Zürich,ou=Sites,dc=example,dc=test", ldapschema.Attrs{
		ldapschema.AttrPreferredSite: {"{0}UK", "{1}India"}, ldapschema.AttrCN: {"Zürich"},
		ldapschema.AttrObjectClass: {ldapschema.ClassTop, ldapschema.ClassSite}, ldapschema.AttrDescription: nil}))
	must(lw.WriteEntry("ou=Sites,dc=example,dc=test", ldapschema.Attrs{"ou": {"Sites"}}))
	if lw.Entries() != 2 {
		t.Errorf("Entries() = %d, want 2", lw.Entries())
	}
	if b.Len() != 0 {
		t.Errorf("wrote %d bytes before Close: the writer does not buffer", b.Len())
	}
	must(lw.Close())
	want := `# generated
#

dn:: ` + b64("cn=Zürich,ou=Sites,dc=example,dc=test") + `
objectClass: top
objectClass: pae-Site
cn:: ` + b64("Zürich") + `
pae-PreferredSite: {0}UK
pae-PreferredSite: {1}India

dn: ou=Sites,dc=example,dc=test
ou: Sites
`
	if b.String() != want {
		t.Errorf("LDIFWriter wrote\n%s\nwant\n%s", b.String(), want)
	}
	if _, err := ParseSnapshot(b.String()); err != nil {
		t.Errorf("the output does not parse as a snapshot: %v", err)
	}
}

type failingWriter struct{ after int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.after <= 0 {
		return 0, errors.New("disk full")
	}
	f.after--
	return len(p), nil
}

// TestLDIFWriterReportsWriteErrors: a failing output is reported by a later
// WriteEntry or by Close, never lost.
func TestLDIFWriterReportsWriteErrors(t *testing.T) {
	lw := NewLDIFWriter(&failingWriter{})
	var err error
	long := strings.Repeat("x", 1000)
	for i := 0; i < 1000 && err == nil; i++ {
		err = lw.WriteEntry("cn=x", ldapschema.Attrs{ldapschema.AttrDescription: {long}})
	}
	if err == nil {
		err = lw.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("error = %v, want disk full", err)
	}
	if err := lw.Close(); err == nil {
		t.Error("Close after a failed write returned nil")
	}
}

// WriteLDIF, the reference for Export's order and encoding, writes entries as LDIF content records (RFC 2849), parents
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
	var b bytes.Buffer
	for i, k := range sorted {
		if i > 0 {
			b.WriteByte('\n')
		}
		writeEntrySorted(&b, k.entry)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// FuzzSafeString: safeString, eight bytes at a time, is its rule byte by
// byte: printable ASCII, not starting with space, colon or '<', not
// ending with a space.
func FuzzSafeString(f *testing.F) {
	for _, seed := range []string{"", " a", "a ", ":a", "<a", "abcdefgh", "abcdefgh\x7f", "abcdefg\x7f", "Zürich", "abcdefghij\x1fkl", "~~~~~~~~~~~~~~~~", "tab\there"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := s == "" || s[0] != ' ' && s[0] != ':' && s[0] != '<' && s[len(s)-1] != ' '
		for i := 0; i < len(s); i++ {
			want = want && s[i] >= 0x20 && s[i] <= 126
		}
		if got := safeString(s); got != want {
			t.Fatalf("safeString(%q) = %v, want %v", s, got, want)
		}
	})
}
