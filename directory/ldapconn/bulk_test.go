package ldapconn

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	ber "github.com/go-asn1-ber/asn1-ber"
	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/internal/dirtest"
	"github.com/cpactl/cpactl/internal/slapdtest"
)

// collect runs a streamed search and returns what it read, or the error.
func collect(search func(*ldap.SearchRequest, func(*ldap.Entry) error) error, req *ldap.SearchRequest) ([]*ldap.Entry, error) {
	var out []*ldap.Entry
	err := search(req, func(e *ldap.Entry) error { out = append(out, e); return nil })
	return out, err
}

// comparable drops what go-ldap fills and bulkConn does not (ByteValues).
func comparable(entries []*ldap.Entry) string {
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "%s\n", e.DN)
		for _, a := range e.Attributes {
			fmt.Fprintf(&b, "  %s %q\n", a.Name, a.Values)
		}
	}
	return b.String()
}

// transports are the ways to reach a test server with TLS: ldap://,
// ldaps:// and StartTLS as its admin account, ldapi:// with SASL EXTERNAL.
func transports(srv *slapdtest.Server) map[string]Options {
	return map[string]Options{
		"ldap":     {URLs: []string{srv.URL}, BindDN: srv.AdminDN(), Password: slapdtest.AdminPassword},
		"ldaps":    {URLs: []string{srv.LDAPSURL}, BindDN: srv.AdminDN(), Password: slapdtest.AdminPassword, CAFile: srv.CAFile},
		"starttls": {URLs: []string{srv.URL}, BindDN: srv.AdminDN(), Password: slapdtest.AdminPassword, CAFile: srv.CAFile, StartTLS: true},
		"ldapi":    {URLs: []string{srv.LDAPIURL}},
	}
}

// TestBulkSearchesAnswerLikeGoLDAP: the bulk connection's decoding gives
// the entries go-ldap gives, in the same order, for every search of the
// snapshot comparison, for a container larger than a page, on ldap://,
// ldaps://, StartTLS and ldapi:// (SASL EXTERNAL); and the same errors.
func TestBulkSearchesAnswerLikeGoLDAP(t *testing.T) {
	srv := slapdtest.Start(t, slapdtest.Config{LDIF: dirtest.ManyUsers(PageSize + 17), TLS: true})
	for name, opts := range transports(srv) {
		t.Run(name, func(t *testing.T) {
			c, err := Dial(opts)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			reqs := append(dirtest.Searches(), ldap.NewSearchRequest(dit.People(), ldap.ScopeSingleLevel, ldap.NeverDerefAliases, 0, 0, false,
				"(objectClass=*)", []string{"*", "entryCSN"}, nil),
				ldap.NewSearchRequest(dit.Base, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
					"(objectClass=*)", []string{"1.1"}, nil))
			for _, req := range reqs {
				want, werr := collect(c.searchEachGoLDAP, req)
				got, gerr := collect(c.SearchEach, req)
				if (werr == nil) != (gerr == nil) {
					t.Fatalf("%s %s: error %v, go-ldap %v", req.BaseDN, req.Filter, gerr, werr)
				}
				if g, w := comparable(got), comparable(want); g != w {
					t.Errorf("%s %s: bulk read\n%s\ngo-ldap read\n%s", req.BaseDN, req.Filter, g, w)
				}
			}
			missing := ldap.NewSearchRequest("ou=Nowhere,"+dit.Base, ldap.ScopeSingleLevel, ldap.NeverDerefAliases, 0, 0, false,
				"(objectClass=*)", nil, nil)
			_, werr := collect(c.searchEachGoLDAP, missing)
			_, gerr := collect(c.SearchEach, missing)
			var wl, gl *ldap.Error
			if !asLDAP(werr, &wl) || !asLDAP(gerr, &gl) || wl.ResultCode != gl.ResultCode || wl.MatchedDN != gl.MatchedDN {
				t.Errorf("missing base: bulk %v, go-ldap %v", gerr, werr)
			}
		})
	}
}

func asLDAP(err error, le **ldap.Error) bool {
	e, ok := err.(*ldap.Error)
	if ok {
		*le = e
	}
	return ok
}

// TestParseEntryMatchesGoLDAP: a SearchResultEntry encoded by asn1-ber
// decodes to the same entry, long lengths and empty values included.
func TestParseEntryMatchesGoLDAP(t *testing.T) {
	long := strings.Repeat("x", 70000)
	e := &ldap.Entry{DN: "cn=R\\2CD,ou=Sites,dc=x", Attributes: []*ldap.EntryAttribute{
		{Name: "objectClass", Values: []string{"top", "pae-Site"}},
		{Name: "description", Values: []string{long}},
		{Name: "empty", Values: []string{""}},
	}}
	got, err := parseEntry(encodeEntry(e).Data.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, e) {
		t.Errorf("decoded %+v", got)
	}
}

func encodeEntry(e *ldap.Entry) *ber.Packet {
	p := ber.Encode(ber.ClassApplication, ber.TypeConstructed, ldap.ApplicationSearchResultEntry, nil, "Entry")
	p.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, e.DN, "DN"))
	attrs := ber.Encode(ber.ClassUniversal, ber.TypeConstructed, ber.TagSequence, nil, "Attributes")
	for _, a := range e.Attributes {
		pa := ber.Encode(ber.ClassUniversal, ber.TypeConstructed, ber.TagSequence, nil, "Attribute")
		pa.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, a.Name, "Type"))
		set := ber.Encode(ber.ClassUniversal, ber.TypeConstructed, ber.TagSet, nil, "Values")
		for _, v := range a.Values {
			set.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, v, "Value"))
		}
		pa.AppendChild(set)
		attrs.AppendChild(pa)
	}
	p.AppendChild(attrs)
	return p
}

// FuzzParseMessage: whatever a server sends, decoding a message, an entry,
// a result, an extended response or a paging control returns or errs,
// never panics.
func FuzzParseMessage(f *testing.F) {
	msg := ber.Encode(ber.ClassUniversal, ber.TypeConstructed, ber.TagSequence, nil, "m")
	msg.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagInteger, 7, "id"))
	msg.AppendChild(encodeEntry(&ldap.Entry{DN: "cn=a,dc=x", Attributes: []*ldap.EntryAttribute{{Name: "cn", Values: []string{"a"}}}}))
	f.Add(msg.Bytes()[2:])
	done := ber.Encode(ber.ClassUniversal, ber.TypeConstructed, ber.TagSequence, nil, "m")
	done.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagInteger, 7, "id"))
	res := ber.Encode(ber.ClassApplication, ber.TypeConstructed, ldap.ApplicationSearchResultDone, nil, "done")
	res.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagEnumerated, 0, "code"))
	res.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, "", "matched"))
	res.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, "", "diag"))
	done.AppendChild(res)
	ctls := ber.Encode(ber.ClassContext, ber.TypeConstructed, 0, nil, "controls")
	paging := ldap.NewControlPaging(10)
	paging.SetCookie([]byte("cookie"))
	ctls.AppendChild(paging.Encode())
	done.AppendChild(ctls)
	f.Add(done.Bytes()[2:])
	f.Add([]byte{0x02, 0x01, 0x01, 0x64, 0x84, 0xff, 0xff, 0xff, 0xff})
	// An ExtendedResponse with a responseValue, as Start Transaction's.
	f.Add([]byte{0x02, 0x01, 0x02, 0x78, 0x0a, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00, 0x8b, 0x01, 0x41})
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := parseMessage(bytes.Clone(body))
		if err != nil {
			return
		}
		switch m.opTag {
		case tagSearchEntry:
			_, _ = parseEntry(m.op)
		case tagExtendedResponse: // a transaction's Start and End
			_, _, _ = parseExtended(m.op)
		default:
			_, _ = parseResult(m.op)
			_, _ = pagingCookie(m.controls)
		}
	})
}
