package ldif

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// show renders records compactly: "L3 dn=cn=x [L4 cn=x]".
func show(recs []*Record) string {
	var parts []string
	for _, r := range recs {
		s := fmt.Sprintf("L%d %s%q", r.Line, r.ChangeType, r.DN)
		for _, v := range r.Values {
			s += fmt.Sprintf(" L%d %s=%q", v.Line, v.Name, v.Value)
		}
		for _, m := range r.Mods {
			s += fmt.Sprintf(" L%d %s:%s%q", m.Line, m.Op, m.Attribute, m.Values)
		}
		if r.ChangeType == ChangeModRDN {
			s += fmt.Sprintf(" newrdn=%q delete=%v sup=%q", r.NewRDN, r.DeleteOldRDN, r.NewSuperior)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "\n")
}

func readAll(text string) ([]*Record, error) { return readAll2(strings.NewReader(text)) }

func TestReaderReadsWhatExportAndLdapsearchWrite(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"one entry", "dn: cn=a,dc=x\ncn: a\n",
			`L1 "cn=a,dc=x" L2 cn="a"`},
		{"no final line end", "dn: cn=a,dc=x\ncn: a",
			`L1 "cn=a,dc=x" L2 cn="a"`},
		{"records separated by one or more empty lines", "\n\ndn: cn=a\ncn: a\n\n\n\ndn: cn=b\ncn: b\n\n",
			"L3 \"cn=a\" L4 cn=\"a\"\nL8 \"cn=b\" L9 cn=\"b\""},
		{"base64 dn and value", "dn:: Y249WsO8cmljaA==\ndescription:: IGxlYWRpbmcgc3BhY2U=\n",
			`L1 "cn=Zürich" L2 description=" leading space"`},
		{"base64 with spaces around it", "dn: cn=a\ncn::   YQ==  \n",
			`L1 "cn=a" L2 cn="a"`},
		{"folded lines join without the leading space", "dn: cn=a,\n dc=x\ndescription: one\n  two\n",
			`L1 "cn=a,dc=x" L3 description="one two"`},
		{"folded base64", "dn: cn=a\ncn:: WsO8\n cmljaA==\n",
			`L1 "cn=a" L2 cn="Zürich"`},
		{"fill spaces after the colon are dropped, trailing spaces kept", "dn:    cn=a\ncn:   a  \n",
			`L1 "cn=a" L2 cn="a  "`},
		{"empty value", "dn: cn=a\ndescription:\nseeAlso: \n",
			`L1 "cn=a" L2 description="" L3 seeAlso=""`},
		{"comments, folded comments, comment blocks", "# extended LDIF\n#\n# LDAPv3\n\n# a, x\ndn: cn=a\n# inside\n  folded comment\ncn: a\n\n# search result\n",
			`L6 "cn=a" L9 cn="a"`},
		{"version line in its own record", "version: 1\n\ndn: cn=a\ncn: a\n",
			`L3 "cn=a" L4 cn="a"`},
		{"version line before the first dn", "version: 1\ndn: cn=a\ncn: a\n",
			`L2 "cn=a" L3 cn="a"`},
		{"CRLF line ends", "dn: cn=a,\r\n dc=x\r\ncn: a\r\n\r\ndn: cn=b\r\ncn: b\r\n",
			"L1 \"cn=a,dc=x\" L3 cn=\"a\"\nL5 \"cn=b\" L6 cn=\"b\""},
		{"attribute options and OIDs", "dn: cn=a\ncn;lang-fr: a\n2.5.4.3: b\nCN;x-1;Binary: c\n",
			`L1 "cn=a" L2 cn;lang-fr="a" L3 2.5.4.3="b" L4 CN;x-1;Binary="c"`},
		{"a value with colons, angle brackets and non-ASCII", "dn: cn=a\ndescription: a: <b> ü\n",
			`L1 "cn=a" L2 description="a: <b> ü"`},
		{"DN line name in another case", "DN: cn=a\ncn: a\n",
			`L1 "cn=a" L2 cn="a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, err := readAll(tt.text)
			if err != nil {
				t.Fatal(err)
			}
			if got := show(recs); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestReaderReadsChangeRecords(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"add", "dn: cn=a\nchangetype: add\ncn: a\n",
			`L1 add"cn=a" L3 cn="a"`},
		{"delete", "dn: cn=a\nchangetype: delete\n",
			`L1 delete"cn=a"`},
		{"modify, every operation, last dash left out as ldapmodify allows",
			"dn: cn=a\nchangetype: modify\nadd: member\nmember: cn=b\nmember: cn=c\n-\ndelete: description\n-\nreplace: pae-Sessions\npae-Sessions: 99\n-\nincrement: pae-Sessions\npae-Sessions: 1\n",
			`L1 modify"cn=a" L3 add:member["cn=b" "cn=c"] L7 delete:description[] L9 replace:pae-Sessions["99"] L12 increment:pae-Sessions["1"]`},
		{"modify with nothing to do", "dn: cn=a\nchangetype: modify\n",
			`L1 modify"cn=a"`},
		{"modrdn", "dn: cn=a,dc=x\nchangetype: modrdn\nnewrdn: cn=b\ndeleteoldrdn: 1\nnewsuperior: dc=y\n",
			`L1 modrdn"cn=a,dc=x" newrdn="cn=b" delete=true sup="dc=y"`},
		{"moddn is modrdn", "dn: cn=a\nchangetype: moddn\nnewrdn: cn=b\ndeleteoldrdn: 0\n",
			`L1 modrdn"cn=a" newrdn="cn=b" delete=false sup=""`},
		{"changetype in upper case", "dn: cn=a\nchangetype: DELETE\n",
			`L1 delete"cn=a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, err := readAll(tt.text)
			if err != nil {
				t.Fatal(err)
			}
			if got := show(recs); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestReaderRefuses(t *testing.T) {
	long := strings.Repeat("a", MaxValue+1)
	tests := []struct {
		name, text, want string
	}{
		{"a URL value", "dn: cn=a\ncn: a\ndescription:< file:///etc/passwd\n",
			"line 3: description:< a URL value; cpactl reads no files or URLs named in LDIF: put the value in the file"},
		{"a URL value, folded", "dn: cn=a\ndescription:\n < file:///dev/zero\n",
			"line 2: description:< a URL value; cpactl reads no files or URLs named in LDIF: put the value in the file"},
		{"a URL DN", "dn:< file:///etc/passwd\ncn: a\n",
			"line 1: dn:< a URL value; cpactl reads no files or URLs named in LDIF: put the value in the file"},
		{"not LDIF", "this is not LDIF\n",
			`line 1: "this is not LDIF" is not an attribute line (name: value)`},
		{"no dn first", "cn: a\ndn: cn=a\n",
			"line 1: a record starts with its dn: line, not cn:"},
		{"bad base64", "dn: cn=a\ncn:: !!!\n",
			"line 2: cn:: the value is not valid base64"},
		{"bad attribute name", "dn: cn=a\nc_n: a\n",
			`line 2: "c_n" is not an attribute name`},
		{"empty option", "dn: cn=a\ncn;: a\n",
			`line 2: "cn;" is not an attribute name`},
		{"bad OID", "dn: cn=a\n2..5: a\n",
			`line 2: "2..5" is not an attribute name`},
		{"a continuation with nothing before it", " cn: a\n",
			"line 1: a continuation line (one starting with a space) with no line before it to continue"},
		{"a dn with no attributes", "dn: cn=a\n\ndn: cn=b\ncn: b\n",
			`line 1: the record of "cn=a" has no attributes`},
		{"two records without an empty line", "dn: cn=a\ncn: a\ndn: cn=b\ncn: b\n",
			"line 3: a second dn: line in one record (records are separated by an empty line)"},
		{"changetype late", "dn: cn=a\ncn: a\nchangetype: add\n",
			"line 3: changetype: must follow the dn: line"},
		{"a dash in an entry", "dn: cn=a\ncn: a\n-\n",
			`line 3: a "-" line outside a changetype: modify record`},
		{"unknown changetype", "dn: cn=a\nchangetype: rename\n",
			`line 2: changetype "rename": not add, delete, modify, modrdn or moddn`},
		{"a delete with lines", "dn: cn=a\nchangetype: delete\ncn: a\n",
			"line 3: a changetype: delete record has no other lines"},
		{"a modify with a stray value", "dn: cn=a\nchangetype: modify\nreplace: cn\ncn: b\nsn: c\n",
			`line 5: a value of sn in the replace: cn modification (end each modification with a "-" line)`},
		{"a modify with a bad operation", "dn: cn=a\nchangetype: modify\nchange: cn\n",
			"line 3: change: is not a modification (add:, delete:, replace: or increment:)"},
		{"a modify dash first", "dn: cn=a\nchangetype: modify\n-\n",
			`line 3: a "-" with no modification before it`},
		{"a modrdn without newrdn", "dn: cn=a\nchangetype: modrdn\ndeleteoldrdn: 1\n",
			"line 1: a changetype: modrdn record needs newrdn: and deleteoldrdn:"},
		{"a modrdn with a bad flag", "dn: cn=a\nchangetype: modrdn\nnewrdn: cn=b\ndeleteoldrdn: yes\n",
			`line 4: deleteoldrdn: "yes": not 0 or 1`},
		{"controls", "dn: cn=a\ncontrol: 1.2.3 true\nchangetype: delete\n",
			"line 2: control: lines are not supported"},
		{"version 2", "version: 2\ndn: cn=a\ncn: a\n",
			`line 1: version "2": only LDIF version 1 is read`},
		{"a value over the bound", "dn: cn=a\ndescription: " + long + "\n",
			"line 2: the value of description is longer than 1 MiB"},
		{"a folded value over the bound", "dn: cn=a\ndescription: " + long[:MaxValue/2] + "\n " + long[:MaxValue/2] + "\n " + long[:10] + "\n",
			"line 2: the value of description is longer than 1 MiB"},
		{"a base64 value over the bound", "dn: cn=a\ndescription:: " + strings.Repeat("QUFB", MaxValue/3+1) + "\n",
			"line 2: the value of description is longer than 1 MiB"},
		{"a line over the bound", "dn: cn=a\ndescription: " + strings.Repeat(long, 2) + "\n",
			"line 2: the line is longer than 1399128 bytes"},
		{"a folded line over the bound", "dn: cn=a\ndescription: " + long + "\n " + long + "\n",
			"line 2: the line is longer than 1399128 bytes once unfolded"},
		{"no line breaks at all", strings.Repeat("\x00", 3*MaxValue),
			"line 1: the line is longer than 1399128 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readAll(tt.text)
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n%s\nwant\n%s", err, tt.want)
			}
			var le *Error
			if !errors.As(err, &le) {
				t.Errorf("%T is not an *Error", err)
			}
		})
	}
}

func TestReaderBoundsARecord(t *testing.T) {
	var b strings.Builder
	b.WriteString("# a group\ndn: cn=big\n")
	line := "member: " + strings.Repeat("m", 1000) + "\n"
	for b.Len() <= MaxRecord+100000 {
		b.WriteString(line)
	}
	_, err := readAll(b.String())
	if err == nil || err.Error() != "line 2: the record is longer than 64 MiB" {
		t.Errorf("err %v", err)
	}
}

// TestReaderStopsAtTheFirstError: after an error, Read returns it again
// and reads no further.
func TestReaderStopsAtTheFirstError(t *testing.T) {
	r := NewReader(strings.NewReader("dn: cn=a\ncn:: !\n\ndn: cn=b\ncn: b\n"))
	_, err1 := next(r)
	_, err2 := next(r)
	if err1 == nil || err1 != err2 {
		t.Errorf("first %v, then %v", err1, err2)
	}
}

type failingReader struct{ err error }

func (f failingReader) Read([]byte) (int, error) { return 0, f.err }

func TestReaderPassesReadErrorsOn(t *testing.T) {
	boom := errors.New("disk on fire")
	_, err := next(NewReader(failingReader{boom}))
	if !errors.Is(err, boom) {
		t.Errorf("err %v", err)
	}
}

// FuzzReader: no input makes the reader panic, and what it reads holds:
// names are attribute descriptions, values are within the bound, lines
// go forward, and an input it reads reads the same one byte at a time.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"dn: cn=a,dc=x\ncn: a\n",
		"version: 1\n# c\n folded comment\ndn:: Y249YQ==\ncn;lang-fr:: YQ==\ndescription: x\n y\r\n\r\ndn: cn=b\ncn: b\n",
		"dn: cn=a\nchangetype: modify\nadd: member\nmember: cn=b\n-\nreplace: cn\ncn: c\n-\ndelete: sn\n",
		"dn: cn=a\nchangetype: modrdn\nnewrdn: cn=b\ndeleteoldrdn: 1\nnewsuperior: dc=y\n\ndn: cn=b\nchangetype: delete\n",
		"dn: cn=a\ndescription:< file:///etc/passwd\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		recs, err := readAll(text)
		last := 0
		for _, r := range recs {
			if r.Line <= last {
				t.Fatalf("record at line %d after line %d", r.Line, last)
			}
			last = r.Line
			for _, v := range r.Values {
				if !validName(v.Name) || len(v.Value) > MaxValue || v.Line <= r.Line {
					t.Fatalf("value %+v of the record at line %d", v, r.Line)
				}
			}
		}
		var le *Error
		if err != nil && !errors.As(err, &le) {
			t.Fatalf("%T %v is not an *Error", err, err)
		}
		slow, slowErr := readAll2(oneByte{strings.NewReader(text)})
		if show(slow) != show(recs) || fmt.Sprint(slowErr) != fmt.Sprint(err) {
			t.Fatalf("byte by byte: %v\n%s\nat once: %v\n%s", slowErr, show(slow), err, show(recs))
		}
	})
}

// oneByte reads one byte at a time.
type oneByte struct{ r io.Reader }

func (o oneByte) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

func readAll2(in io.Reader) ([]*Record, error) {
	r := NewReader(in)
	var out []*Record
	for {
		rec, err := next(r)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, rec)
	}
}

// next reads the next record into a record of its own.
func next(r *Reader) (*Record, error) {
	rec := &Record{}
	if err := r.Read(rec); err != nil {
		return nil, err
	}
	return rec, nil
}
