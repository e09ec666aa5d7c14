package ldapconn

// Transactions on the bulk connection: Start Transaction, the writes and
// End Transaction run on one goroutine, the requests encoded by hand into
// a buffer that is flushed once per batch, and the answers decoded by
// hand. go-ldap made one system call per request and several goroutine
// hand-offs per message, which cost as much client CPU as queuing 10,000
// adds took on the server, on a machine where both share two cores.

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/progress"
)

// Protocol op tags of the requests a transaction sends (RFC 4511: the
// APPLICATION class, constructed but for DelRequest, an LDAPDN), and of
// their responses.
const (
	tagModifyRequest   = 0x66
	tagModifyResponse  = 0x67
	tagAddRequest      = 0x68
	tagAddResponse     = 0x69
	tagDelRequest      = 0x4a
	tagDelResponse     = 0x6b
	tagModDNRequest    = 0x6c
	tagModDNResponse   = 0x6d
	tagExtendedRequest = 0x77
	tagResponseValue   = 0x8b // an ExtendedResponse's responseValue [11]
	tagControls        = 0xa0 // a message's controls [0]
	tagNewSuperior     = 0x80 // a ModifyDNRequest's newSuperior [0]
	tagRequestName     = 0x80 // an ExtendedRequest's requestName [0]
	tagRequestValue    = 0x81 // an ExtendedRequest's requestValue [1]
	tagSequence        = 0x30
	tagSet             = 0x31
	tagOctetString     = 0x04
	tagInteger         = 0x02
	tagEnumerated      = 0x0a
	tagBoolean         = 0x01
)

// unsolicitedID is the message ID of an unsolicited notification (a
// server that ends the connection says why in one).
const unsolicitedID = 0

// BER lengths and booleans.
const (
	maxShortFormLength = 0x7f
	longFormLengthFlag = 0x80
	berTrue            = 0xff
	berFalse           = 0x00
)

// berBuf encodes BER by appending to a byte slice, in the form asn1-ber
// writes (minimal definite lengths and integers), without building a
// tree of packets first. A constructed element is opened with begin, which
// reserves one length byte, and closed with end, which fills the length in
// and moves the contents when the length needs more bytes.
type berBuf []byte

func (e *berBuf) begin(tag byte) int {
	*e = append(*e, tag, 0)
	return len(*e)
}

func (e *berBuf) end(start int) {
	n := len(*e) - start
	if n <= maxShortFormLength {
		(*e)[start-1] = byte(n)
		return
	}
	k := lengthBytes(n)
	*e = append(*e, make([]byte, k)...)
	b := *e
	copy(b[start+k:], b[start:start+n])
	b[start-1] = longFormLengthFlag | byte(k)
	for i := k - 1; i >= 0; i-- {
		b[start+i] = byte(n)
		n >>= 8
	}
}

func lengthBytes(n int) int {
	k := 1
	for n > 0xff {
		k++
		n >>= 8
	}
	return k
}

func (e *berBuf) header(tag byte, n int) {
	if n <= maxShortFormLength {
		*e = append(*e, tag, byte(n))
		return
	}
	k := lengthBytes(n)
	*e = append(*e, tag, longFormLengthFlag|byte(k))
	for i := k - 1; i >= 0; i-- {
		*e = append(*e, byte(n>>(8*i)))
	}
}

func (e *berBuf) str(tag byte, s string) {
	e.header(tag, len(s))
	*e = append(*e, s...)
}

// integer encodes v in the fewest bytes of two's complement.
func (e *berBuf) integer(tag byte, v int64) {
	n := 1
	for x := v; x > 127 || x < -128; x >>= 8 {
		n++
	}
	e.header(tag, n)
	for i := n - 1; i >= 0; i-- {
		*e = append(*e, byte(v>>(8*i)))
	}
}

// boolean encodes TRUE as 0xFF (RFC 4511 §5.1).
func (e *berBuf) boolean(v bool) {
	b := byte(berFalse)
	if v {
		b = berTrue
	}
	*e = append(*e, tagBoolean, 1, b)
}

// attribute encodes an Attribute or PartialAttribute.
func (e *berBuf) attribute(typ string, vals []string) {
	a := e.begin(tagSequence)
	e.str(tagOctetString, typ)
	set := e.begin(tagSet)
	for _, v := range vals {
		e.str(tagOctetString, v)
	}
	e.end(set)
	e.end(a)
}

func (e *berBuf) addRequest(req *ldap.AddRequest) {
	op := e.begin(tagAddRequest)
	e.str(tagOctetString, req.DN)
	attrs := e.begin(tagSequence)
	for _, a := range req.Attributes {
		e.attribute(a.Type, a.Vals)
	}
	e.end(attrs)
	e.end(op)
}

func (e *berBuf) modifyRequest(req *ldap.ModifyRequest) {
	op := e.begin(tagModifyRequest)
	e.str(tagOctetString, req.DN)
	changes := e.begin(tagSequence)
	for _, c := range req.Changes {
		change := e.begin(tagSequence)
		e.integer(tagEnumerated, int64(c.Operation))
		e.attribute(c.Modification.Type, c.Modification.Vals)
		e.end(change)
	}
	e.end(changes)
	e.end(op)
}

func (e *berBuf) modifyDNRequest(req *ldap.ModifyDNRequest) {
	op := e.begin(tagModDNRequest)
	e.str(tagOctetString, req.DN)
	e.str(tagOctetString, req.NewRDN)
	e.boolean(req.DeleteOldRDN)
	if req.NewSuperior != "" {
		e.str(tagNewSuperior, req.NewSuperior)
	}
	e.end(op)
}

func (e *berBuf) delRequest(req *ldap.DelRequest) { e.str(tagDelRequest, req.DN) }

// extendedRequest encodes an ExtendedRequest; value, when not nil, is the
// requestValue's contents.
func (e *berBuf) extendedRequest(name string, value []byte) {
	op := e.begin(tagExtendedRequest)
	e.str(tagRequestName, name)
	if value != nil {
		e.str(tagRequestValue, string(value))
	}
	e.end(op)
}

// controls encodes the controls a request carries, then extra (controls
// already encoded), as the message's [0] element; nothing when there is
// none.
func (e *berBuf) controls(ctls []ldap.Control, extra []byte) {
	if len(ctls) == 0 && len(extra) == 0 {
		return
	}
	c := e.begin(tagControls)
	for _, ctl := range ctls {
		*e = append(*e, ctl.Encode().Bytes()...)
	}
	*e = append(*e, extra...)
	e.end(c)
}

// encodeWrite encodes the message of a write request with message ID id,
// its own controls followed by extra. It returns the response tag the
// write expects, or 0 when w holds no request.
func (e *berBuf) encodeWrite(id int64, w Request, extra []byte) byte {
	msg := e.begin(tagSequence)
	e.integer(tagInteger, id)
	var ctls []ldap.Control
	var answer byte
	switch {
	case w.Add != nil:
		e.addRequest(w.Add)
		ctls, answer = w.Add.Controls, tagAddResponse
	case w.Modify != nil:
		e.modifyRequest(w.Modify)
		ctls, answer = w.Modify.Controls, tagModifyResponse
	case w.Rename != nil:
		e.modifyDNRequest(w.Rename)
		ctls, answer = w.Rename.Controls, tagModDNResponse
	case w.Del != nil:
		e.delRequest(w.Del)
		ctls, answer = w.Del.Controls, tagDelResponse
	default:
		*e = (*e)[:msg-2]
		return 0
	}
	e.controls(ctls, extra)
	e.end(msg)
	return answer
}

// parseExtended decodes an ExtendedResponse's contents: the result and the
// responseValue (nil when absent), copied out of the read buffer.
func parseExtended(op []byte) (result, []byte, error) {
	r, rest, err := splitResult(op)
	if err != nil {
		return r, nil, err
	}
	for len(rest) > 0 {
		tag, v, more, err := tlv(rest)
		if err != nil {
			return r, nil, err
		}
		if tag == tagResponseValue {
			return r, append([]byte{}, v...), nil
		}
		rest = more
	}
	return r, nil, nil
}

// PipelineDepth is how many writes of a transaction are in flight at once
// (sent and not yet answered; bulkTxn sends them from one goroutine, in
// batches, and reads the answers as they come). slapd queues each one when
// it arrives, in the order its worker threads reach the connection, which
// is not the order they were sent: only writes that do not depend on each
// other (directory's waves) travel together. Measured here with go-ldap, 10,000
// adds queued: 2.8 s one at a time, 1.2 s with 64 in flight.
const PipelineDepth = 32

// bulkTxn is an open transaction on a bulk connection, and the Writer
// Conn.Transaction hands out. Its mutex is held by the transaction.
//
// A write's answer is awaited for at most the request timeout, counted
// from when the wait starts: the deadline bounds waiting, not the whole
// send, so a transaction of any size runs as long as answers keep
// coming. When one does not come, or the connection fails, the
// connection is closed, which drops the transaction, never ended, with
// it; nothing more is sent on it.
type bulkTxn struct {
	b       *bulkConn
	id      string
	ctl     []byte        // the transaction specification control (and the run control), encoded
	timeout time.Duration // for each awaited answer
	out     berBuf        // the message being encoded
	lost    error         // the failure that closed the connection
}

// startTxn sends Start Transaction and returns the open transaction.
func (b *bulkConn) startTxn(timeout time.Duration) (*bulkTxn, error) {
	t := &bulkTxn{b: b, timeout: timeout}
	r, value, err := t.extended(oidStartTxn, nil, timeout)
	if err != nil {
		return nil, err
	}
	if err := r.err(); err != nil {
		return nil, err
	}
	t.id = string(value)
	t.ctl = txnControl{id: t.id}.Encode().Bytes()
	return t, nil
}

// extended sends an extended request and waits at most d for its answer.
// An error is a network error (no answer, or a malformed one); the result
// may be a failure.
func (t *bulkTxn) extended(name string, value []byte, d time.Duration) (result, []byte, error) {
	t.b.nextID++
	id := t.b.nextID
	e := t.out[:0]
	msg := e.begin(tagSequence)
	e.integer(tagInteger, id)
	e.extendedRequest(name, value)
	e.end(msg)
	t.out = e
	if err := t.write(e); err != nil {
		return result{}, nil, lostConn(err, t.timeout)
	}
	if err := t.flush(); err != nil {
		return result{}, nil, lostConn(err, t.timeout)
	}
	m, err := t.b.readWithin(d)
	if err != nil {
		return result{}, nil, lostConn(err, d)
	}
	if m.id != id || m.opTag != tagExtendedResponse {
		return result{}, nil, unexpected(m, id)
	}
	return parseExtended(m.op)
}

// unexpected explains a message that answers no request in flight.
func unexpected(m message, want int64) error {
	if m.id == unsolicitedID {
		why := "a notice of disconnection"
		if r, _, err := parseExtended(m.op); err == nil && r.err() != nil {
			why = ldapclient.Describe(r.err())
		}
		return ldap.NewError(ldap.ErrorNetwork, fmt.Errorf("the server ended the connection: %s", why))
	}
	return protocolError("an answer to message %d with tag %#x, expecting message %d", m.id, m.opTag, want)
}

// lostConn turns a failure of the connection into a network error (no
// LDAP result), saying how long the wait was when it timed out.
func lostConn(err error, d time.Duration) error {
	var ne net.Error
	var le *ldap.Error
	switch {
	case errors.As(err, &le):
		return err
	case errors.As(err, &ne) && ne.Timeout():
		return ldap.NewError(ldap.ErrorNetwork, fmt.Errorf("no answer within %v: %w", d, err))
	}
	return ldap.NewError(ldap.ErrorNetwork, err)
}

// write adds a message to the buffer; the write deadline covers the
// buffer filling up and being written on its own.
func (t *bulkTxn) write(msg []byte) error {
	if err := t.b.conn.SetWriteDeadline(time.Now().Add(t.timeout)); err != nil {
		return err
	}
	_, err := t.b.w.Write(msg)
	return err
}

func (t *bulkTxn) flush() error { return t.b.w.Flush() }

// end sends End Transaction after the settle pause and waits at most d
// for its answer. A commit without an answer is an *OutcomeUnknownError.
func (t *bulkTxn) end(commit bool, settle, d time.Duration) error {
	var value berBuf
	seq := value.begin(tagSequence)
	if !commit {
		value.boolean(false)
	}
	value.str(tagOctetString, t.id)
	value.end(seq)
	time.Sleep(settle)
	commitsInFlight.Add(1)
	defer commitsInFlight.Add(-1)
	r, _, err := t.extended(oidEndTxn, value, d)
	if err != nil {
		t.close(err)
		if commit {
			// No result from the server: a timeout, or a lost connection.
			return &OutcomeUnknownError{What: "the commit of the transaction", Err: err}
		}
		return err
	}
	return r.err()
}

// close closes the connection after a failure, once.
func (t *bulkTxn) close(err error) {
	if t.lost == nil {
		t.lost = err
		t.b.close()
	}
}

// fail closes the connection after a write's answer did not come, and
// returns the error every unanswered write reports: a network error
// (ErrorNetwork, which unanswered recognizes), saying why.
func (t *bulkTxn) fail(err error) error {
	if t.lost != nil {
		return t.lost
	}
	var ne net.Error
	var le *ldap.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		err = fmt.Errorf("no answer within %v, the connection was closed and the transaction dropped: %w",
			t.timeout, ldap.NewError(ldap.ErrorNetwork, err))
	case !errors.As(err, &le):
		err = ldap.NewError(ldap.ErrorNetwork, err)
	}
	t.close(err)
	return err
}

// sendWave sends the writes of a wave, independent of each other, with up
// to PipelineDepth of them unanswered: it encodes writes into the buffer
// while the window has room, flushes, reads one answer and those already
// arrived, and goes on. After a failure it sends no more writes but waits
// for those in flight. It returns the first failing write in plan order
// (its index in wave) and its error, or an error of nil when all were
// answered with success; each of those counts in sent. Every write sent
// has been answered when it returns, unless the connection failed.
//
// On StopChanges it sends no more writes either: once those in flight are
// answered it returns the first write not sent with ErrStopped.
func (t *bulkTxn) sendWave(wave []Request, sent *progress.Counter) (int, error) {
	s := waveState{txn: t, wave: wave, sent: sent, first: t.b.nextID + 1, failed: -1}
	s.run()
	if s.failed < 0 && s.next < len(wave) {
		s.note(s.next, ErrStopped)
	}
	return s.failed, s.err
}

// waveState is one wave being sent.
type waveState struct {
	txn      *bulkTxn
	wave     []Request
	sent     *progress.Counter
	first    int64  // the message ID of the first write sent
	order    []int  // the index in wave of each write sent, by message ID
	answers  []byte // the response tag each write sent expects, 0 once answered
	next     int    // the next write of wave to send
	inFlight int
	failed   int // the first failing write in plan order, or -1
	err      error
}

func (s *waveState) note(i int, err error) {
	if s.failed < 0 || i < s.failed {
		s.failed, s.err = i, err
	}
}

func (s *waveState) run() {
	t := s.txn
	if t.lost != nil {
		s.note(0, t.lost)
		return
	}
	for {
		if err := s.fill(); err != nil {
			s.lose(err)
			return
		}
		if s.inFlight == 0 {
			return
		}
		if err := t.flush(); err != nil {
			s.lose(err)
			return
		}
		if err := s.receive(); err != nil {
			s.lose(err)
			return
		}
	}
}

// fill encodes writes into the buffer while the window has room, no
// write failed and no stop was asked for.
func (s *waveState) fill() error {
	t := s.txn
	for s.failed < 0 && s.next < len(s.wave) && s.inFlight < PipelineDepth && !stopAsked.Load() {
		i := s.next
		s.next++
		w := s.wave[i]
		if w.Rename != nil && w.Rename.NewSuperior != "" {
			s.note(i, ErrMoveInTransaction)
			return nil
		}
		t.out = t.out[:0]
		answer := t.out.encodeWrite(t.b.nextID+1, w, t.ctl)
		if answer == 0 {
			s.sent.Add(1) // nothing to send
			continue
		}
		t.b.nextID++
		s.order = append(s.order, i)
		s.answers = append(s.answers, answer)
		s.inFlight++
		if err := t.write(t.out); err != nil {
			return err
		}
	}
	return nil
}

// receive reads one answer, then those that already arrived.
func (s *waveState) receive() error {
	t := s.txn
	for {
		m, err := t.b.readWithin(t.timeout)
		if err != nil {
			return err
		}
		k := m.id - s.first
		if k < 0 || k >= int64(len(s.answers)) || s.answers[k] == 0 || m.opTag != s.answers[k] {
			return unexpected(m, s.first+int64(len(s.answers))-1)
		}
		s.answers[k] = 0
		s.inFlight--
		r, err := parseResult(m.op)
		if err != nil {
			return err
		}
		if err := r.err(); err != nil {
			s.note(s.order[k], err)
		} else {
			s.sent.Add(1)
		}
		if s.inFlight == 0 || t.b.r.Buffered() == 0 {
			return nil
		}
	}
}

// lose records a connection failure against the first unanswered write.
func (s *waveState) lose(err error) {
	err = s.txn.fail(err)
	for k, a := range s.answers {
		if a != 0 {
			s.note(s.order[k], err)
			return
		}
	}
	s.note(min(s.next, len(s.wave)-1), err)
}

// The Writer methods send one write and wait for its answer.

func (t *bulkTxn) Add(req *ldap.AddRequest) error { return t.one(Request{Add: req}) }

func (t *bulkTxn) Modify(req *ldap.ModifyRequest) error { return t.one(Request{Modify: req}) }

func (t *bulkTxn) ModifyDN(req *ldap.ModifyDNRequest) error { return t.one(Request{Rename: req}) }

func (t *bulkTxn) Del(req *ldap.DelRequest) error { return t.one(Request{Del: req}) }

func (t *bulkTxn) one(w Request) error {
	_, err := t.sendWave([]Request{w}, nil)
	return err
}
