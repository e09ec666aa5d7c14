package ldapconn

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ber "github.com/go-asn1-ber/asn1-ber"
	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
)

// bulkConn is a second connection a Conn opens for streamed searches
// (SearchEach): the same server, TLS and bind, speaking only what a paged
// search needs. It exists for speed: go-ldap decodes every response into
// a generic BER tree (asn1-ber's ReadPacket allocates per element and
// re-encodes each packet), which took 45% of the CPU and most of the
// garbage of reading a CPA-maximum directory (358,000 entries: 21 s, where
// ldapsearch takes 3 s). bulkConn decodes a SearchResultEntry straight
// from the bytes read, into one string per message that the entry's DN
// and values share. Requests are still encoded with asn1-ber and go-ldap's
// filter compiler. Transactions run on it too (bulktxn.go), for the same
// reason: their writes are encoded into a buffer and sent in batches.
// Everything else (binds for the commands, single writes, small searches)
// stays on go-ldap.
//
// One thing at a time runs on it, a paged search or a transaction (slapd
// keeps one paged search per connection): mu is held for its duration.
type bulkConn struct {
	mu      sync.Mutex
	conn    net.Conn
	r       *bufio.Reader
	w       *bufio.Writer // what a transaction sends, flushed per batch
	url     string
	timeout time.Duration
	nextID  int64
	buf     []byte
}

// maxMessage bounds one response message: a server cannot make cpactl
// allocate more than this for one entry.
const maxMessage = 64 << 20

// dialBulk opens the bulk connection as Dial opened the main one: the
// URL that answered, StartTLS when asked, the same bind.
func dialBulk(raw string, opts Options, timeout time.Duration) (*bulkConn, error) {
	u, err := checkURL(raw)
	if err != nil {
		return nil, err
	}
	tlsConfig, err := tlsConfigFor(opts)
	if err != nil {
		return nil, err
	}
	d := &net.Dialer{Timeout: timeout}
	var conn net.Conn
	switch u.Scheme {
	case "ldapi":
		path, err := url.PathUnescape(strings.TrimPrefix(raw, "ldapi://"))
		if err != nil {
			return nil, err
		}
		conn, err = d.Dial("unix", strings.TrimSuffix(path, "/"))
		if err != nil {
			return nil, &ldapclient.ConnectError{URL: raw, Err: err}
		}
	default:
		host := u.Host
		if _, _, err := net.SplitHostPort(host); err != nil {
			port := "389"
			if u.Scheme == "ldaps" {
				port = "636"
			}
			host = net.JoinHostPort(host, port)
		}
		cfg := tlsConfig.Clone()
		if h, _, err := net.SplitHostPort(host); err == nil {
			cfg.ServerName = h
		}
		if u.Scheme == "ldaps" {
			conn, err = tls.DialWithDialer(d, "tcp", host, cfg)
		} else {
			conn, err = d.Dial("tcp", host)
		}
		if err != nil {
			return nil, &ldapclient.ConnectError{URL: raw, Err: tlsHint(err)}
		}
		b := newBulkConn(conn, raw, timeout)
		if opts.StartTLS && u.Scheme == "ldap" {
			if err := b.startTLS(cfg); err != nil {
				conn.Close()
				return nil, err
			}
		}
		if err := b.bind(u, opts); err != nil {
			b.conn.Close()
			return nil, err
		}
		return b, nil
	}
	b := newBulkConn(conn, raw, timeout)
	if err := b.bind(u, opts); err != nil {
		conn.Close()
		return nil, err
	}
	return b, nil
}

func newBulkConn(conn net.Conn, raw string, timeout time.Duration) *bulkConn {
	b := &bulkConn{url: raw, timeout: timeout}
	b.use(conn)
	return b
}

// use makes conn the connection read and written, buffered.
func (b *bulkConn) use(conn net.Conn) {
	b.conn, b.r, b.w = conn, bufio.NewReaderSize(conn, 256<<10), bufio.NewWriterSize(conn, 64<<10)
}

func (b *bulkConn) close() error { return b.conn.Close() }

// send writes one request message with the next message ID.
func (b *bulkConn) send(op *ber.Packet, controls []ldap.Control) (int64, error) {
	b.nextID++
	msg := ber.Encode(ber.ClassUniversal, ber.TypeConstructed, ber.TagSequence, nil, "LDAP Request")
	msg.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagInteger, b.nextID, "MessageID"))
	msg.AppendChild(op)
	if len(controls) > 0 {
		ctls := ber.Encode(ber.ClassContext, ber.TypeConstructed, 0, nil, "Controls")
		for _, c := range controls {
			ctls.AppendChild(c.Encode())
		}
		msg.AppendChild(ctls)
	}
	if err := b.conn.SetWriteDeadline(time.Now().Add(b.timeout)); err != nil {
		return 0, err
	}
	_, err := b.conn.Write(msg.Bytes())
	return b.nextID, b.netError(err, "search")
}

// netError turns a deadline into a NoAnswerError, and any other failure
// that is not already an LDAP error into a network error.
func (b *bulkConn) netError(err error, op string) error {
	var ne net.Error
	var le *ldap.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ne) && ne.Timeout():
		return &NoAnswerError{URL: b.url, Timeout: b.timeout, Op: op}
	case errors.As(err, &le):
		return err
	}
	return ldap.NewError(ldap.ErrorNetwork, err)
}

// read reads one response message: its ID, the protocol op's tag and
// contents, and the controls' contents (nil when none). The deadline is
// reset for every message: it bounds waiting, not the whole search.
func (b *bulkConn) read(op string) (message, error) {
	m, err := b.readWithin(b.timeout)
	return m, b.netError(err, op)
}

// readWithin reads one response message, waiting at most d for it. Its
// errors are the connection's own (a net.Error for a deadline) or an
// *ldap.Error for a malformed response. The message's slices point into
// b.buf, valid until the next read.
func (b *bulkConn) readWithin(d time.Duration) (msg message, err error) {
	if err := b.conn.SetReadDeadline(time.Now().Add(d)); err != nil {
		return msg, err
	}
	tag, n, err := readHeader(b.r)
	if err != nil {
		return msg, err
	}
	if tag != 0x30 {
		return msg, protocolError("a response is not a SEQUENCE (tag %#x)", tag)
	}
	if n > maxMessage {
		return msg, protocolError("a response of %d bytes is larger than %d", n, maxMessage)
	}
	if cap(b.buf) < n {
		b.buf = make([]byte, n)
	}
	body := b.buf[:n]
	if _, err := io.ReadFull(b.r, body); err != nil {
		return msg, err
	}
	return parseMessage(body)
}

func protocolError(format string, args ...any) error {
	return ldap.NewError(ldap.ErrorNetwork, fmt.Errorf("malformed response from the server: "+format, args...))
}

// readHeader reads a BER tag and definite length.
func readHeader(r *bufio.Reader) (tag byte, n int, err error) {
	tag, err = r.ReadByte()
	if err != nil {
		return 0, 0, err
	}
	l, err := r.ReadByte()
	if err != nil {
		return 0, 0, err
	}
	if l < 0x80 {
		return tag, int(l), nil
	}
	k := int(l & 0x7f)
	if k == 0 || k > 4 {
		return 0, 0, protocolError("length of %d bytes", k)
	}
	for i := 0; i < k; i++ {
		c, err := r.ReadByte()
		if err != nil {
			return 0, 0, err
		}
		n = n<<8 | int(c)
	}
	return tag, n, nil
}

// message is one decoded response.
type message struct {
	id       int64
	opTag    byte
	op       []byte // the protocol op's contents
	controls []byte // the controls' contents, or nil
}

// tlv reads one element at the start of b: its tag, contents and the rest.
func tlv(b []byte) (tag byte, contents, rest []byte, err error) {
	if len(b) < 2 {
		return 0, nil, nil, protocolError("truncated element")
	}
	tag, l := b[0], int(b[1])
	b = b[2:]
	if l >= 0x80 {
		k := l & 0x7f
		if k == 0 || k > 4 || len(b) < k {
			return 0, nil, nil, protocolError("bad length")
		}
		l = 0
		for i := 0; i < k; i++ {
			l = l<<8 | int(b[i])
		}
		b = b[k:]
	}
	if l < 0 || l > len(b) {
		return 0, nil, nil, protocolError("element longer than its message")
	}
	return tag, b[:l], b[l:], nil
}

func parseInt(b []byte) (int64, error) {
	if len(b) == 0 || len(b) > 8 {
		return 0, protocolError("bad integer")
	}
	v := int64(int8(b[0]))
	for _, c := range b[1:] {
		v = v<<8 | int64(c)
	}
	return v, nil
}

func parseMessage(body []byte) (message, error) {
	var m message
	tag, idBytes, rest, err := tlv(body)
	if err != nil {
		return m, err
	}
	if tag != 0x02 {
		return m, protocolError("no message ID")
	}
	if m.id, err = parseInt(idBytes); err != nil {
		return m, err
	}
	if m.opTag, m.op, rest, err = tlv(rest); err != nil {
		return m, err
	}
	if len(rest) > 0 {
		var ctag byte
		if ctag, m.controls, _, err = tlv(rest); err != nil {
			return m, err
		}
		if ctag != 0xa0 {
			m.controls = nil
		}
	}
	return m, nil
}

// LDAP protocol op tags (APPLICATION n, constructed) and result fields.
const (
	tagBindResponse     = 0x61
	tagSearchEntry      = 0x64
	tagSearchDone       = 0x65
	tagSearchReference  = 0x73
	tagExtendedResponse = 0x78
)

// parseEntry decodes a SearchResultEntry's contents. Its DN and values are
// substrings of one copy of op.
func parseEntry(op []byte) (*ldap.Entry, error) {
	text := string(op)
	// str is the string of sub, a slice of op: slices of op keep their
	// capacity to the end of the buffer, so cap(op)-cap(sub) is sub's
	// offset in op.
	str := func(sub []byte) string {
		lo := cap(op) - cap(sub)
		return text[lo : lo+len(sub)]
	}
	tag, dn, rest, err := tlv(op)
	if err != nil || tag != 0x04 {
		return nil, protocolError("entry without a DN")
	}
	e := &ldap.Entry{DN: str(dn)}
	tag, attrs, _, err := tlv(rest)
	if err != nil || tag != 0x30 {
		return nil, protocolError("entry %q without attributes", e.DN)
	}
	for len(attrs) > 0 {
		t, partial, more, err := tlv(attrs)
		if err != nil || t != 0x30 {
			return nil, protocolError("entry %q: bad attribute", e.DN)
		}
		attrs = more
		t, typ, vals, err := tlv(partial)
		if err != nil || t != 0x04 {
			return nil, protocolError("entry %q: bad attribute type", e.DN)
		}
		a := &ldap.EntryAttribute{Name: str(typ)}
		t, set, _, err := tlv(vals)
		if err != nil || t != 0x31 {
			return nil, protocolError("entry %q: attribute %s without values", e.DN, a.Name)
		}
		for len(set) > 0 {
			t, v, more, err := tlv(set)
			if err != nil || t != 0x04 {
				return nil, protocolError("entry %q: attribute %s: bad value", e.DN, a.Name)
			}
			a.Values = append(a.Values, str(v))
			set = more
		}
		e.Attributes = append(e.Attributes, a)
	}
	return e, nil
}

// result is an LDAPResult: what a done, bind or extended response says.
type result struct {
	code          uint16
	matched, diag string
}

func parseResult(op []byte) (result, error) {
	r, _, err := splitResult(op)
	return r, err
}

// splitResult decodes the LDAPResult at the start of op and returns what
// follows it (an extended response's name and value).
func splitResult(op []byte) (result, []byte, error) {
	var r result
	tag, code, rest, err := tlv(op)
	if err != nil || tag != 0x0a {
		return r, nil, protocolError("result without a code")
	}
	c, err := parseInt(code)
	if err != nil || c < 0 || c > 0xffff {
		return r, nil, protocolError("bad result code")
	}
	r.code = uint16(c)
	tag, matched, rest, err := tlv(rest)
	if err != nil || tag != 0x04 {
		return r, nil, protocolError("result without a matched DN")
	}
	tag, diag, rest, err := tlv(rest)
	if err != nil || tag != 0x04 {
		return r, nil, protocolError("result without a message")
	}
	r.matched, r.diag = string(matched), string(diag)
	return r, rest, nil
}

// err is the result as go-ldap reports it, or nil for success.
func (r result) err() error {
	if r.code == ldap.LDAPResultSuccess {
		return nil
	}
	return &ldap.Error{ResultCode: r.code, Err: errors.New(r.diag), MatchedDN: r.matched}
}

// pagingCookie finds the paged-results control's cookie among a done
// message's controls.
func pagingCookie(controls []byte) ([]byte, error) {
	for len(controls) > 0 {
		t, ctl, more, err := tlv(controls)
		if err != nil || t != 0x30 {
			return nil, protocolError("bad control")
		}
		controls = more
		t, oid, rest, err := tlv(ctl)
		if err != nil || t != 0x04 {
			return nil, protocolError("control without a type")
		}
		if string(oid) != ldap.ControlTypePaging {
			continue
		}
		for len(rest) > 0 {
			t, v, more, err := tlv(rest)
			if err != nil {
				return nil, err
			}
			rest = more
			if t != 0x04 { // the criticality
				continue
			}
			t, seq, _, err := tlv(v)
			if err != nil || t != 0x30 {
				return nil, protocolError("bad paging control")
			}
			_, _, after, err := tlv(seq) // the size estimate
			if err != nil {
				return nil, err
			}
			t, cookie, _, err := tlv(after)
			if err != nil || t != 0x04 {
				return nil, protocolError("paging control without a cookie")
			}
			return append([]byte(nil), cookie...), nil
		}
	}
	return nil, nil
}

// bind binds as Dial's bind does: simple with a DN, SASL EXTERNAL over
// ldapi, else anonymous (no request at all).
func (b *bulkConn) bind(u *url.URL, opts Options) error {
	var req *ber.Packet
	switch {
	case opts.BindDN != "":
		req = ber.Encode(ber.ClassApplication, ber.TypeConstructed, ldap.ApplicationBindRequest, nil, "Bind Request")
		req.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagInteger, 3, "Version"))
		req.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, opts.BindDN, "User Name"))
		req.AppendChild(ber.NewString(ber.ClassContext, ber.TypePrimitive, 0, opts.Password, "Password"))
	case u.Scheme == "ldapi":
		req = ber.Encode(ber.ClassApplication, ber.TypeConstructed, ldap.ApplicationBindRequest, nil, "Bind Request")
		req.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagInteger, 3, "Version"))
		req.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, "", "User Name"))
		sasl := ber.Encode(ber.ClassContext, ber.TypeConstructed, 3, nil, "SASL")
		sasl.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, "EXTERNAL", "Mechanism"))
		// An empty authorization identity: the peer's own (as go-ldap's
		// ExternalBind sends it; without it slapd asks for another round).
		sasl.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, "", "Credentials"))
		req.AppendChild(sasl)
	default:
		return nil
	}
	if _, err := b.send(req, nil); err != nil {
		return err
	}
	m, err := b.read("bind")
	if err != nil {
		return err
	}
	if m.opTag != tagBindResponse {
		return protocolError("bind answered with tag %#x", m.opTag)
	}
	r, err := parseResult(m.op)
	if err != nil {
		return err
	}
	if err := r.err(); err != nil {
		return &AuthError{Who: opts.BindDN, Err: err, Credentials: opts.Credentials}
	}
	return nil
}

// startTLS upgrades the connection (RFC 4511 §4.14), never falling back.
func (b *bulkConn) startTLS(cfg *tls.Config) error {
	req := ber.Encode(ber.ClassApplication, ber.TypeConstructed, ldap.ApplicationExtendedRequest, nil, "Start TLS")
	req.AppendChild(ber.NewString(ber.ClassContext, ber.TypePrimitive, 0, "1.3.6.1.4.1.1466.20037", "TLS Extended Command"))
	if _, err := b.send(req, nil); err != nil {
		return err
	}
	m, err := b.read("starttls")
	if err != nil {
		return err
	}
	if m.opTag != tagExtendedResponse {
		return protocolError("starttls answered with tag %#x", m.opTag)
	}
	r, err := parseResult(m.op)
	if err != nil {
		return err
	}
	if err := r.err(); err != nil {
		return &ldapclient.ConnectError{URL: b.url, Err: fmt.Errorf("starttls failed, refusing to continue in clear text: %s", ldapclient.Describe(err))}
	}
	t := tls.Client(b.conn, cfg)
	if err := t.Handshake(); err != nil {
		return &ldapclient.ConnectError{URL: b.url, Err: tlsHint(err)}
	}
	b.use(t)
	return nil
}

// searchRequest encodes req as a SearchRequest protocol op.
func searchRequest(req *ldap.SearchRequest) (*ber.Packet, error) {
	p := ber.Encode(ber.ClassApplication, ber.TypeConstructed, ldap.ApplicationSearchRequest, nil, "Search Request")
	p.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, req.BaseDN, "Base DN"))
	p.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagEnumerated, uint64(req.Scope), "Scope"))
	p.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagEnumerated, uint64(req.DerefAliases), "Deref Aliases"))
	p.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagInteger, uint64(req.SizeLimit), "Size Limit"))
	p.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagInteger, uint64(req.TimeLimit), "Time Limit"))
	p.AppendChild(ber.NewBoolean(ber.ClassUniversal, ber.TypePrimitive, ber.TagBoolean, req.TypesOnly, "Types Only"))
	filter, err := ldap.CompileFilter(req.Filter)
	if err != nil {
		return nil, err
	}
	p.AppendChild(filter)
	attrs := ber.Encode(ber.ClassUniversal, ber.TypeConstructed, ber.TagSequence, nil, "Attributes")
	for _, a := range req.Attributes {
		attrs.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, a, "Attribute"))
	}
	p.AppendChild(attrs)
	return p, nil
}

// searchEach runs a paged search, handing each entry to each as it is
// decoded. Reading and decoding run on their own goroutine, a batch ahead
// of each (on two cores, one decodes while the other consumes). Stopped by
// each, the search reads its page to the end and tells the server it will
// not go on (a page size of 0 with the cookie).
func (b *bulkConn) searchEach(req *ldap.SearchRequest, each func(*ldap.Entry) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	op, err := searchRequest(req)
	if err != nil {
		return err
	}
	batches := make(chan []*ldap.Entry, 8)
	var stopped atomic.Bool
	var readErr error
	go func() {
		defer close(batches)
		readErr = b.pages(op, req.Controls, &stopped, batches)
	}()
	var stop error
	for batch := range batches {
		if stop != nil {
			continue
		}
		for _, e := range batch {
			if stop = each(e); stop != nil {
				stopped.Store(true)
				break
			}
		}
	}
	if stop != nil {
		return stop
	}
	return readErr
}

// pages reads every page of the search, sending decoded entries in
// batches, until the last page or, once stopped is set, until the server
// has been told to end the search.
func (b *bulkConn) pages(op *ber.Packet, controls []ldap.Control, stopped *atomic.Bool, out chan<- []*ldap.Entry) error {
	var cookie []byte
	abandoning := false
	batch := make([]*ldap.Entry, 0, ldapclient.BatchSize)
	for {
		size := uint32(PageSize)
		if abandoning {
			size = 0
		}
		paging := ldap.NewControlPaging(size)
		paging.SetCookie(cookie)
		id, err := b.send(op, append(append([]ldap.Control(nil), controls...), paging))
		if err != nil {
			return err
		}
		cookie = nil
		for done := false; !done; {
			m, err := b.read("search")
			if err != nil {
				return err
			}
			if m.id != id {
				return protocolError("a response to message %d, not %d", m.id, id)
			}
			switch m.opTag {
			case tagSearchEntry:
				if stopped.Load() {
					continue
				}
				e, err := parseEntry(m.op)
				if err != nil {
					return err
				}
				if batch = append(batch, e); len(batch) == ldapclient.BatchSize {
					out <- batch
					batch = make([]*ldap.Entry, 0, ldapclient.BatchSize)
				}
			case tagSearchReference:
			case tagSearchDone:
				if len(batch) > 0 {
					out <- batch
					batch = make([]*ldap.Entry, 0, ldapclient.BatchSize)
				}
				r, err := parseResult(m.op)
				if err != nil {
					return err
				}
				if err := r.err(); err != nil {
					return err
				}
				if cookie, err = pagingCookie(m.controls); err != nil {
					return err
				}
				done = true
			default:
				return protocolError("a search answered with tag %#x", m.opTag)
			}
		}
		switch {
		case len(cookie) == 0 || abandoning:
			return nil
		case stopped.Load():
			abandoning = true // send the page size of 0 with this cookie
		}
	}
}
