package ldapconn

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	ber "github.com/go-asn1-ber/asn1-ber"
	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/ldapschema"
)

// goLDAPBytes returns the message go-ldap writes for one request: send
// runs on a go-ldap connection whose server, at the other end of a pipe,
// reads one message and answers it with success under the tag answer.
func goLDAPBytes(t *testing.T, answer byte, send func(*ldap.Conn) error) []byte {
	t.Helper()
	client, server := net.Pipe()
	defer server.Close()
	conn := ldap.NewConn(client, false)
	conn.Start()
	defer conn.Close()
	got := make(chan []byte, 1)
	go func() {
		var raw bytes.Buffer
		r := bufio.NewReader(io.TeeReader(server, &raw))
		_, n, err := readHeader(r)
		if err != nil {
			got <- nil
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			got <- nil
			return
		}
		m, _ := parseMessage(body)
		var resp berBuf
		msg := resp.begin(tagSequence)
		resp.integer(tagInteger, m.id)
		op := resp.begin(answer)
		resp.integer(tagEnumerated, 0)
		resp.str(tagOctetString, "")
		resp.str(tagOctetString, "")
		resp.end(op)
		resp.end(msg)
		got <- raw.Bytes()[:raw.Len()-r.Buffered()]
		_, _ = server.Write(resp)
	}()
	if err := send(conn); err != nil {
		t.Fatalf("go-ldap: %v", err)
	}
	return <-got
}

// messageID reads the message ID of an encoded message.
func messageID(t *testing.T, msg []byte) int64 {
	t.Helper()
	_, body, _, err := tlv(msg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := parseMessage(body)
	if err != nil {
		t.Fatal(err)
	}
	return m.id
}

// TestTxnEncodingMatchesGoLDAP: the requests a transaction sends are
// encoded byte for byte as go-ldap encodes them (with the transaction
// control last, after the write's own controls), for every kind of write
// and change, short and long lengths, and the extended requests.
func TestTxnEncodingMatchesGoLDAP(t *testing.T) {
	ctl := txnControl{id: "\x01\x02"}
	assertion, err := AssertionControl("(description=x)")
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("v", 300)
	huge := strings.Repeat("w", 70000)
	add := ldap.NewAddRequest("cn=a,ou=Sites,dc=x", nil)
	add.Attribute("objectClass", []string{"top", "cpaSite"})
	add.Attribute("cn", []string{"a"})
	add.Attribute("description", []string{"", long})
	big := ldap.NewAddRequest("cn=big,dc=x", nil)
	big.Attribute("description", []string{huge})
	mod := ldap.NewModifyRequest("cn=a,ou=Sites,dc=x", []ldap.Control{assertion})
	mod.Add("description", []string{"one", "two"})
	mod.Delete("seeAlso", nil)
	mod.Replace("cn", []string{"a"})
	mod.Increment("uidNumber", "1")
	tests := []struct {
		name   string
		w      Request
		answer byte
		send   func(*ldap.Conn, []ldap.Control) error
	}{
		{"add", Request{Add: add}, tagAddResponse, func(c *ldap.Conn, ctls []ldap.Control) error {
			r := *add
			r.Controls = ctls
			return c.Add(&r)
		}},
		{"add of a value over 64 KiB", Request{Add: big}, tagAddResponse, func(c *ldap.Conn, ctls []ldap.Control) error {
			r := *big
			r.Controls = ctls
			return c.Add(&r)
		}},
		{"modify: add, delete, replace, increment, with an assertion", Request{Modify: mod}, tagModifyResponse, func(c *ldap.Conn, ctls []ldap.Control) error {
			r := *mod
			r.Controls = append([]ldap.Control{assertion}, ctls...)
			return c.Modify(&r)
		}},
	}
	for _, rename := range []*ldap.ModifyDNRequest{
		ldap.NewModifyDNRequest("cn=a,ou=Sites,dc=x", "cn=b", true, ""),
		ldap.NewModifyDNRequest("cn=a,ou=Sites,dc=x", "cn=b", false, ""),
		ldap.NewModifyDNRequest("cn=a,ou=Sites,dc=x", "cn=b", true, "ou=Trash,dc=x"),
	} {
		tests = append(tests, struct {
			name   string
			w      Request
			answer byte
			send   func(*ldap.Conn, []ldap.Control) error
		}{fmt.Sprintf("modrdn deleteoldrdn %v newSuperior %q", rename.DeleteOldRDN, rename.NewSuperior),
			Request{Rename: rename}, tagModDNResponse, func(c *ldap.Conn, ctls []ldap.Control) error {
				r := *rename
				r.Controls = ctls
				return c.ModifyDN(&r)
			}})
	}
	del := ldap.NewDelRequest("cn=a,ou=Sites,dc=x", nil)
	tests = append(tests, struct {
		name   string
		w      Request
		answer byte
		send   func(*ldap.Conn, []ldap.Control) error
	}{"delete", Request{Del: del}, tagDelResponse, func(c *ldap.Conn, ctls []ldap.Control) error {
		r := *del
		r.Controls = ctls
		return c.Del(&r)
	}})
	extra := ctl.Encode().Bytes()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := goLDAPBytes(t, tc.answer, func(c *ldap.Conn) error { return tc.send(c, []ldap.Control{ctl}) })
			var got berBuf
			if answer := got.encodeWrite(messageID(t, want), tc.w, extra); answer != tc.answer {
				t.Errorf("expects answer %#x, want %#x", answer, tc.answer)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("encoded\n%x\nwant (go-ldap)\n%x", []byte(got), want)
			}
		})
	}
	endValue := func(commit bool) (*ber.Packet, []byte) {
		seq := ber.Encode(ber.ClassUniversal, ber.TypeConstructed, ber.TagSequence, nil, "Txn End Request")
		var mine berBuf
		s := mine.begin(tagSequence)
		if !commit {
			seq.AppendChild(ber.NewBoolean(ber.ClassUniversal, ber.TypePrimitive, ber.TagBoolean, false, "Commit"))
			mine.boolean(false)
		}
		seq.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, "id", "Identifier"))
		mine.str(tagOctetString, "id")
		mine.end(s)
		return seq, mine
	}
	commitPkt, commitVal := endValue(true)
	abortPkt, abortVal := endValue(false)
	for _, tc := range []struct {
		name, oid string
		pkt       *ber.Packet
		value     []byte
	}{
		{"start transaction", oidStartTxn, nil, nil},
		{"commit", oidEndTxn, commitPkt, commitVal},
		{"abort", oidEndTxn, abortPkt, abortVal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := goLDAPBytes(t, tagExtendedResponse, func(c *ldap.Conn) error {
				_, err := c.Extended(ldap.NewExtendedRequest(tc.oid, tc.pkt))
				return err
			})
			var got berBuf
			msg := got.begin(tagSequence)
			got.integer(tagInteger, messageID(t, want))
			got.extendedRequest(tc.oid, tc.value)
			got.end(msg)
			if !bytes.Equal(got, want) {
				t.Errorf("encoded\n%x\nwant (go-ldap)\n%x", []byte(got), want)
			}
		})
	}
}

func TestBERIntegers(t *testing.T) {
	for _, v := range []int64{0, 1, 127, 128, 255, 256, 32767, 32768, 1 << 31, -1, -128, -129} {
		var got berBuf
		got.integer(tagInteger, v)
		want := ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagInteger, v, "").Bytes()
		if !bytes.Equal(got, want) {
			t.Errorf("%d: %x, want %x", v, []byte(got), want)
		}
	}
}

// silentServer is a fake LDAP server that answers searches (nothing
// there) and extended operations (success) but never a write. closed
// receives once for each connection the client closed.
func silentServer(t *testing.T) (url string, closed <-chan struct{}) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	done := make(chan struct{}, 8)
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { conn.Close() })
			go serveSilently(conn, done)
		}
	}()
	return "ldap://" + l.Addr().String(), done
}

func serveSilently(conn net.Conn, closed chan<- struct{}) {
	r := bufio.NewReader(conn)
	for {
		_, n, err := readHeader(r)
		if err != nil {
			closed <- struct{}{}
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			closed <- struct{}{}
			return
		}
		m, err := parseMessage(body)
		if err != nil {
			return
		}
		var answer byte
		code := int64(ldap.LDAPResultSuccess)
		switch m.opTag {
		case 0x63: // a SearchRequest
			answer, code = tagSearchDone, ldap.LDAPResultNoSuchObject
		case tagExtendedRequest:
			answer = tagExtendedResponse
		default:
			continue
		}
		var resp berBuf
		msg := resp.begin(tagSequence)
		resp.integer(tagInteger, m.id)
		op := resp.begin(answer)
		resp.integer(tagEnumerated, code)
		resp.str(tagOctetString, "")
		resp.str(tagOctetString, "")
		resp.end(op)
		resp.end(msg)
		if _, err := conn.Write(resp); err != nil {
			return
		}
	}
}

// TestTxnWriteDeadline: a write of a transaction whose answer does not come
// within the request timeout fails as unanswered, saying so, and its
// connection is closed (which drops the transaction); the next transaction
// opens a fresh connection.
func TestTxnWriteDeadline(t *testing.T) {
	url, closed := silentServer(t)
	const timeout = 300 * time.Millisecond
	c, err := Dial(Options{URLs: []string{url}, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 2 {
		var began time.Time
		var writeErr error
		err = c.Transaction(func(w ldapclient.Writer) error {
			began = time.Now()
			writeErr = w.Add(ldapschema.Attrs{ldapschema.AttrObjectClass: {ldapschema.ClassTop, ldapschema.ClassOrganizationalUnit},
				ldapschema.AttrOU: {"a"}}.AddRequest("ou=a,dc=x"))
			return writeErr
		})
		elapsed := time.Since(began)
		want := fmt.Sprintf("no answer within %v, the connection was closed and the transaction dropped", timeout)
		if writeErr == nil || !strings.Contains(writeErr.Error(), want) || !Unanswered(writeErr) || !errors.Is(err, writeErr) {
			t.Fatalf("write: %v, transaction: %v; want %q, unanswered", writeErr, err, want)
		}
		if elapsed < timeout || elapsed > 10*timeout {
			t.Errorf("the write failed after %v, with a request timeout of %v", elapsed, timeout)
		}
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			t.Fatal("the transaction's connection was not closed")
		}
	}
}
