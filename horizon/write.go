package horizon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
)

// maxWriteAnswer bounds the body of a write's answer (a bulk answer holds
// one small item per row written).
const maxWriteAnswer = 4 << 20

// Answer is what a write got back: a 2xx status and its body (empty for
// the 204 of a PUT).
type Answer struct {
	Status int
	Body   []byte
}

// Do sends a write: method (PUT, POST or DELETE) on path, with body (JSON)
// when not nil. A 401 renews the token and a 429 is waited out, then the
// write is sent again: the server refused those, so nothing was applied.
// Any other answer that is not a 2xx is a typed error (AuthError,
// NotFoundError, ServerError) and nothing was applied. A server that
// cannot be reached is an UnreachableError (nothing was sent); when the
// request may have reached the server and no answer came (the connection
// broke, the answer did not start within the timeout, ctx ended), the
// error is a *LostAnswerError: the write may or may not have been applied,
// and Do never sends it again. Push settles that by reading back.
func (s *Session) Do(ctx context.Context, method, path string, body []byte) (Answer, error) {
	op := method + " " + path
	resp, err := s.send(ctx, method, path, nil, body)
	if err != nil {
		var ue *UnreachableError
		switch {
		case errors.As(err, &ue) && ue.Op == op && mayHaveBeenSent(ue):
			return Answer{}, &LostAnswerError{URL: s.base, Op: op, Err: ue.Err}
		case ctx.Err() != nil && errors.Is(err, ctx.Err()):
			return Answer{}, &LostAnswerError{URL: s.base, Op: op, Err: err}
		}
		return Answer{}, err
	}
	if resp.StatusCode/100 != 2 {
		return Answer{}, s.c.statusError(resp, s.base, op)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxWriteAnswer+1))
	if err != nil {
		// The status said it was applied; only the rest of the body was
		// lost.
		return Answer{}, &LostAnswerError{URL: s.base, Op: op, Err: err, Status: resp.StatusCode}
	}
	if len(b) > maxWriteAnswer {
		return Answer{}, &ProtocolError{URL: s.base, Op: op, Err: fmt.Errorf("the answer is larger than %d MiB", maxWriteAnswer>>20)}
	}
	return Answer{Status: resp.StatusCode, Body: b}, nil
}

// mayHaveBeenSent reports whether a transport failure may have come after
// the request reached the server: not a failed dial, not a refused
// certificate (the handshake comes before the request).
func mayHaveBeenSent(ue *UnreachableError) bool {
	if ue.Certificate {
		return false
	}
	var op *net.OpError
	return !(errors.As(ue.Err, &op) && op.Op == "dial")
}

// LostAnswerError: a write was sent and no answer came (or the answer
// broke off after its status): the server may or may not have applied it.
type LostAnswerError struct {
	URL, Op string
	Err     error
	// Status is the status that came before the body broke off, 0 when
	// none came.
	Status int
}

func (e *LostAnswerError) Error() string {
	return fmt.Sprintf("%s: %s got no answer: %v", e.URL, e.Op, e.Err)
}

func (e *LostAnswerError) Unwrap() error { return e.Err }

// Get reads one object whole (GET path?query): its JSON as the server
// sent it, an object or an array.
func (s *Session) Get(ctx context.Context, path string, query url.Values) (json.RawMessage, error) {
	var buf bytes.Buffer
	if _, err := s.Read(ctx, path, query, &buf, nil); err != nil {
		return nil, err
	}
	return json.RawMessage(buf.Bytes()), nil
}

// bulkItem is a BulkItemResponseInfo: the answer for one row of a bulk
// write (the call answers 200 even when rows fail).
type bulkItem struct {
	ID         string     `json:"id"`
	Key        string     `json:"key"`
	StatusCode int        `json:"status_code"`
	Errors     []apiError `json:"errors"`
}

type apiError struct {
	Key     string `json:"error_key"`
	Message string `json:"error_message"`
}

// checkBulk reads a bulk answer of n rows and returns the error of the
// first row that failed, as a ServerError; nil when every row succeeded.
func (s *Session) checkBulk(op string, a Answer, n int) error {
	var items []bulkItem
	if err := json.Unmarshal(a.Body, &items); err != nil {
		return &ProtocolError{URL: s.base, Op: op, Err: fmt.Errorf("not a list of BulkItemResponseInfo: %v", err)}
	}
	if len(items) != n {
		return &ProtocolError{URL: s.base, Op: op, Err: fmt.Errorf("%d answers for %d rows", len(items), n)}
	}
	for _, it := range items {
		if it.StatusCode/100 == 2 {
			continue
		}
		e := &ServerError{URL: s.base, Op: op, Status: it.StatusCode}
		if len(it.Errors) > 0 {
			e.Key, e.Message = cleanLine(it.Errors[0].Key), s.c.redact(cleanLine(it.Errors[0].Message))
		}
		if it.StatusCode == http.StatusForbidden || it.StatusCode == http.StatusUnauthorized {
			return &AuthError{URL: s.base, Op: op, Status: it.StatusCode, Key: e.Key, Message: e.Message}
		}
		return e
	}
	return nil
}
