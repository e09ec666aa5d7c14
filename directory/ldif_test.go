package directory

import (
	"bytes"
	"errors"
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/internal/dirtest"
	"github.com/cpactl/cpactl/internal/slapdtest"
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
description:: ` + dirtest.B64(" leading space") + `
ou: Sites

dn:: ` + dirtest.B64("cn=Zürich,ou=Sites,dc=example,dc=test") + `
objectClass: pae-Site
objectClass: top
cn:: ` + dirtest.B64("Zürich") + `
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

dn:: ` + dirtest.B64("cn=Zürich,ou=Sites,dc=example,dc=test") + `
objectClass: top
objectClass: pae-Site
cn:: ` + dirtest.B64("Zürich") + `
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

// FuzzLDIFRoundTrip: what WriteLDIF (export) writes from any entries the
// reader accepts reads back as the same entries, through the reader and
// as a snapshot.
func FuzzLDIFRoundTrip(f *testing.F) {
	f.Add(dirtest.Sample())
	f.Add("dn:: Y249WsO8cmljaA==\ncn:: IGxlYWRpbmc=\ndescription: trailing \n\ndn: cn=b\nchangetype: add\ncn: b\nseeAlso:\n")
	f.Add("version: 1\n# c\ndn: cn=a,\n dc=x\r\ncn;lang-fr: a\n  b\n")
	f.Fuzz(func(t *testing.T, text string) {
		entries, err := slapdtest.ReadEntries(text)
		if err != nil {
			return
		}
		var out strings.Builder
		if err := WriteLDIF(&out, entries); err != nil {
			t.Fatal(err)
		}
		again, err := slapdtest.ReadEntries(out.String())
		if err != nil {
			t.Fatalf("export does not read back: %v\n%s", err, out.String())
		}
		if dirtest.Flatten(entries) != dirtest.Flatten(again) {
			t.Fatalf("export reads back differently:\nbefore:\n%s\nafter:\n%s", dirtest.Flatten(entries), dirtest.Flatten(again))
		}
		if s, err := ParseSnapshot(out.String()); err == nil && dirtest.Flatten(s.Entries()) != dirtest.Flatten(entries) {
			t.Fatalf("the snapshot of the export differs:\n%s\n%s", dirtest.Flatten(s.Entries()), dirtest.Flatten(entries))
		}
	})
}
