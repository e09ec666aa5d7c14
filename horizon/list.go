package horizon

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
)

// Page is what one answer of a GET held.
type Page struct {
	Number  int   // 1, 2, ... for a paged list; 0 for an unpaged read
	Records int   // the elements of the top-level array (1 for an object)
	Bytes   int64 // the body's length
	More    bool  // HAS_MORE_RECORDS was present
	Total   int64 // X-TOTAL-COUNT, -1 when absent
}

// Read GETs path once (no paging) and copies the body, unchanged, to w as
// it arrives; each (when not nil) is called with every element of the
// top-level array, or once with the object when the answer is an object.
func (s *Session) Read(ctx context.Context, path string, query url.Values, w io.Writer, each func(json.RawMessage) error) (Page, error) {
	resp, err := s.send(ctx, http.MethodGet, path, query, nil)
	if err != nil {
		return Page{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return Page{}, s.c.statusError(resp, s.base, "GET "+path)
	}
	return s.copyBody(resp, path, w, each)
}

// ReadPages reads a paged list with page and size (the client's page
// size): open is called for each page once its answer is a success and
// returns the writer the body is copied to, unchanged, and a function
// called with the page when its body has been read; each (when not nil)
// gets every record. It stops after a page without HAS_MORE_RECORDS or
// with fewer records than the size, and when a page after the first
// answers 400 (the API's answer to a page past the end).
func (s *Session) ReadPages(ctx context.Context, path string, query url.Values,
	open func(page int) (io.Writer, func(Page) error, error), each func(json.RawMessage) error) error {
	size := s.c.cfg.PageSize
	for n := 1; ; n++ {
		q := url.Values{}
		for k, v := range query {
			q[k] = v
		}
		q.Set("page", strconv.Itoa(n))
		q.Set("size", strconv.Itoa(size))
		resp, err := s.send(ctx, http.MethodGet, path, q, nil)
		if err != nil {
			return err
		}
		if resp.StatusCode == http.StatusBadRequest && n > 1 {
			drain(resp) // a page past the end: the list is complete
			return nil
		}
		if resp.StatusCode != http.StatusOK {
			return s.c.statusError(resp, s.base, "GET "+path)
		}
		w, done, err := open(n)
		if err != nil {
			drain(resp)
			return err
		}
		p, err := s.copyBody(resp, path, w, each)
		p.Number = n
		if err == nil {
			err = done(p)
		}
		if err != nil {
			return err
		}
		if !p.More || p.Records < size {
			return nil
		}
	}
}

// copyBody copies the body to w unchanged while decoding its top-level
// value, and closes it.
func (s *Session) copyBody(resp *http.Response, path string, w io.Writer, each func(json.RawMessage) error) (Page, error) {
	defer resp.Body.Close()
	p := Page{More: hasMore(resp.Header), Total: totalCount(resp.Header)}
	cw := &countWriter{w: w}
	lim := &limitReader{r: resp.Body, left: maxBody}
	br := bufio.NewReaderSize(io.TeeReader(lim, cw), 64<<10)
	n, err := decodeTop(br, each)
	if err == nil {
		// Whatever followed the value (white space) goes to w too.
		_, err = io.Copy(io.Discard, br)
	}
	p.Records, p.Bytes = n, cw.n
	switch {
	case cw.err != nil:
		return p, cw.err // the disk, not the server
	case lim.over:
		return p, &ProtocolError{URL: s.base, Op: "GET " + path, Err: fmt.Errorf("the answer is larger than %d MiB", maxBody>>20)}
	case err != nil && isCallback(err):
		return p, callbackCause(err)
	case err != nil:
		if ctxErr := contextOf(resp).Err(); ctxErr != nil {
			return p, ctxErr
		}
		if resp.Request != nil && resp.Request.Context().Err() != nil {
			return p, &UnreachableError{URL: s.base, Op: "GET " + path, Err: fmt.Errorf("the answer stalled for more than %s", s.c.cfg.Timeout)}
		}
		return p, &ProtocolError{URL: s.base, Op: "GET " + path, Err: err}
	}
	return p, nil
}

// contextOf is the context the caller gave for resp's request (its
// parent's cancellation, not the idle timer's).
func contextOf(resp *http.Response) context.Context {
	if b, ok := resp.Body.(*idleBody); ok && b.parent != nil {
		return b.parent
	}
	return context.Background()
}

// callbackError marks an error of the each callback, returned as is
// (callbackCause) by the reads and EachRecord.
type callbackError struct{ err error }

func (e *callbackError) Error() string { return e.err.Error() }

func isCallback(err error) bool {
	var ce *callbackError
	return errors.As(err, &ce)
}

// callbackCause returns the callback's own error.
func callbackCause(err error) error {
	var ce *callbackError
	if errors.As(err, &ce) {
		return ce.err
	}
	return err
}

// decodeTop decodes one JSON value, an array (each gets its elements) or
// an object (each gets it), and checks that nothing but white space
// follows.
func decodeTop(br *bufio.Reader, each func(json.RawMessage) error) (int, error) {
	first, err := peekNonSpace(br)
	if err != nil {
		return 0, fmt.Errorf("empty answer: %w", err)
	}
	dec := json.NewDecoder(br)
	n := 0
	call := func(raw json.RawMessage) error {
		n++
		if each == nil {
			return nil
		}
		if err := each(raw); err != nil {
			return &callbackError{err}
		}
		return nil
	}
	switch first {
	case '[':
		if _, err := dec.Token(); err != nil {
			return n, err
		}
		for dec.More() {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return n, err
			}
			if err := call(raw); err != nil {
				return n, err
			}
		}
		if _, err := dec.Token(); err != nil {
			return n, err
		}
	case '{':
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return n, err
		}
		if err := call(raw); err != nil {
			return n, err
		}
	default:
		return n, fmt.Errorf("expected a JSON array or object, got %q", first)
	}
	if _, err := dec.Token(); err != io.EOF {
		return n, errors.New("data after the JSON value")
	}
	return n, nil
}

// peekNonSpace returns the first byte that is not JSON white space,
// without consuming it.
func peekNonSpace(br *bufio.Reader) (byte, error) {
	for {
		b, err := br.Peek(1)
		if err != nil {
			return 0, err
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			_, _ = br.ReadByte()
		default:
			return b[0], nil
		}
	}
}

// countWriter counts what it writes and keeps the first error (a full
// disk), which TeeReader would otherwise report as a read error.
type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

// limitReader reads at most left bytes and says when there was more.
type limitReader struct {
	r    io.Reader
	left int64
	over bool
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		var one [1]byte
		if n, _ := l.r.Read(one[:]); n > 0 {
			l.over = true
			return 0, errors.New("answer too large")
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}
