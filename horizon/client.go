// Package horizon is cpactl's access to the Horizon Server REST API (the
// 2512 revision): a client over net/http and encoding/json, and the pull
// that reads a whole Cloud Pod Architecture federation into a directory
// (docs/horizon.md). It knows no command line and no LDAP, as package
// directory is the only LDAP access.
//
// A Client holds the TLS configuration and the credentials; Login opens a
// Session on one Connection Server: bearer authentication, the token
// renewed on a 401 or when its exp claim has passed (refresh once, then log
// in again), 429 answers waited out as X-Rate-Limit-Retry-After-Seconds
// says (bounded, and cancelled with the context), lists read page by page
// and streamed to a writer unchanged. Logout ends the session, also when
// the context was cancelled. The password and the tokens never appear in
// an error, and nothing here writes them anywhere.
package horizon

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// Limits of what the client accepts and waits for.
const (
	// MaxPageSize is the largest page the API serves (pagination guide).
	MaxPageSize = 1000
	// maxCAFile is the largest --ca-file read.
	maxCAFile = 1 << 20
	// maxBody is the largest answer read: a page of 1,000 sessions is a
	// few MB; the unpaged AD list of a large domain may be much larger,
	// and goes to disk as it arrives.
	maxBody = 1 << 30
	// maxErrorBody is how much of an error answer is read.
	maxErrorBody = 64 << 10
	// expirySkew renews an access token this long before its exp claim.
	expirySkew = 30 * time.Second
)

// Config is how the client connects. The zero value of each field but
// Timeout means its default.
type Config struct {
	// CAFile is a PEM file of the CA(s) that signed the servers'
	// certificates (a private CA); empty: the system's roots.
	CAFile string
	// InsecureSkipVerify turns certificate checks off (the caller warns).
	InsecureSkipVerify bool
	// Timeout bounds connecting, the TLS handshake, the wait for an
	// answer's headers and each pause while its body arrives.
	Timeout time.Duration
	// PageSize is the size of each page of a paged list (1..1000;
	// default 1000).
	PageSize int
	// MaxThrottled is how many 429 answers in a row one request takes
	// before it fails (default 10); MaxWait caps each wait (default 60 s).
	MaxThrottled int
	MaxWait      time.Duration
	// SettleWait is how long a write is read back until it shows: some
	// reads "depend on internal cache" and lag behind a write (default
	// 5 s).
	SettleWait time.Duration
	// Sleep waits d or until ctx ends; tests record the waits instead.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Credentials log in: the bare user name (no UPN) and the NetBIOS or DNS
// domain, as POST /login takes them.
type Credentials struct {
	Domain, User, Password string
}

// Client talks to the Connection Servers of one federation.
type Client struct {
	hc       *http.Client
	cfg      Config
	cred     Credentials
	requests atomic.Int64
}

// NewClient checks cfg, reads the CA file (at most 1 MiB) and returns a
// client. Certificates are always checked unless InsecureSkipVerify.
func NewClient(cfg Config, cred Credentials) (*Client, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = MaxPageSize
	}
	if cfg.PageSize > MaxPageSize {
		return nil, fmt.Errorf("page size %d is above the API's maximum of %d", cfg.PageSize, MaxPageSize)
	}
	if cfg.MaxThrottled <= 0 {
		cfg.MaxThrottled = 10
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = time.Minute
	}
	if cfg.SettleWait <= 0 {
		cfg.SettleWait = 5 * time.Second
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.InsecureSkipVerify} //nolint:gosec // only when the admin says so, with a warning
	if cfg.CAFile != "" {
		pool, err := readCAFile(cfg.CAFile)
		if err != nil {
			return nil, err
		}
		tlsCfg.RootCAs = pool
	}
	dialer := &net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		TLSClientConfig:       tlsCfg,
		TLSHandshakeTimeout:   cfg.Timeout,
		ResponseHeaderTimeout: cfg.Timeout,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	hc := &http.Client{Transport: tr,
		// A redirect would carry the bearer token to where the server
		// points: the API documents none, so none is followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &Client{hc: hc, cfg: cfg, cred: cred}, nil
}

// readCAFile reads a PEM bundle of at most maxCAFile bytes.
func readCAFile(path string) (*x509.CertPool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--ca-file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCAFile+1))
	if err != nil {
		return nil, fmt.Errorf("--ca-file %s: %w", path, err)
	}
	if len(b) > maxCAFile {
		return nil, fmt.Errorf("--ca-file %s is larger than 1 MiB: it should hold a few PEM certificates", path)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("--ca-file %s holds no PEM certificate", path)
	}
	return pool, nil
}

// Requests is the number of HTTP requests the client sent (logins,
// refreshes, retries and logouts included).
func (c *Client) Requests() int64 { return c.requests.Load() }

// BaseURL turns what an admin types (https://cs.example.com,
// https://cs.example.com/rest/) into the REST base,
// https://cs.example.com/rest. Only https is accepted.
func BaseURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%q is not a URL: give the Connection Server as https://HOST[:PORT]", raw)
	}
	if !strings.EqualFold(u.Scheme, "https") {
		return "", fmt.Errorf("%q: the REST API is served over https only", raw)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%q: give the Connection Server as https://HOST[:PORT], without user, query or fragment", raw)
	}
	p := strings.TrimRight(u.Path, "/")
	if p != "" && p != "/rest" {
		return "", fmt.Errorf("%q: give the Connection Server as https://HOST[:PORT] (the API is under /rest)", raw)
	}
	return "https://" + u.Host + "/rest", nil
}

// podBaseURL turns a pod endpoint's server_address (the inter-pod address,
// https://cs.example.com:8472, or host:port) into the REST base on the
// same host's port 443.
func podBaseURL(serverAddress string) (string, error) {
	a := strings.TrimSpace(serverAddress)
	if !strings.Contains(a, "://") {
		a = "https://" + a
	}
	u, err := url.Parse(a)
	if err != nil || u.Hostname() == "" {
		return "", fmt.Errorf("server address %q is not a host name", serverAddress)
	}
	host := u.Hostname()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return "https://" + host + "/rest", nil
}

// Session is a login on one Connection Server. It is not safe for
// concurrent use.
type Session struct {
	c       *Client
	base    string
	access  string
	refresh string
	exp     time.Time // the access token's exp claim, zero if unknown
	closed  bool
}

// URL is the REST base of the session's server.
func (s *Session) URL() string { return s.base }

// Login logs in to the Connection Server at base (from BaseURL):
// POST /login with the password as a JSON string (the swagger types it as
// an array of strings; the getting-started guide and every client send a
// string).
func (c *Client) Login(ctx context.Context, base string) (*Session, error) {
	s := &Session{c: c, base: base}
	if err := s.login(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Session) login(ctx context.Context) error {
	body, err := json.Marshal(struct {
		Domain   string `json:"domain"`
		Username string `json:"username"`
		Password string `json:"password"`
	}{s.c.cred.Domain, s.c.cred.User, s.c.cred.Password})
	if err != nil {
		return err
	}
	resp, err := s.c.exchange(ctx, s.base, http.MethodPost, "/login", nil, body, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	op := "POST /login"
	if resp.StatusCode != http.StatusOK {
		e := s.c.statusError(resp, s.base, op)
		var se *ServerError
		if resp.StatusCode == http.StatusBadRequest && errors.As(e, &se) {
			return &AuthError{URL: s.base, Op: op, Status: se.Status, Key: se.Key, Message: se.Message}
		}
		return e
	}
	var tokens struct {
		Access  string `json:"access_token"`
		Refresh string `json:"refresh_token"`
	}
	if err := decodeSmall(resp.Body, &tokens); err != nil || tokens.Access == "" {
		return &ProtocolError{URL: s.base, Op: op, Err: errors.New("no access_token in the answer")}
	}
	s.setAccess(tokens.Access)
	s.refresh = tokens.Refresh
	s.closed = false
	return nil
}

func (s *Session) setAccess(token string) {
	s.access = token
	s.exp, _ = jwtExpiry(token)
}

// renew gets a new access token: POST /refresh once, and when the server
// refuses the refresh token (expired, or revoked), a new login.
func (s *Session) renew(ctx context.Context) error {
	if s.refresh != "" {
		body, err := json.Marshal(struct {
			Refresh string `json:"refresh_token"`
		}{s.refresh})
		if err != nil {
			return err
		}
		resp, err := s.c.exchange(ctx, s.base, http.MethodPost, "/refresh", nil, body, "")
		if err != nil {
			return err
		}
		var tok struct {
			Access string `json:"access_token"`
		}
		ok := resp.StatusCode == http.StatusOK && decodeSmall(resp.Body, &tok) == nil && tok.Access != ""
		drain(resp)
		if ok {
			s.setAccess(tok.Access)
			return nil
		}
	}
	return s.login(ctx)
}

// Logout ends the session (POST /logout with the refresh token), which
// invalidates both tokens. It runs even when ctx is cancelled (within the
// client's timeout), so that a pull stopped by Ctrl-C still logs out; a
// second call does nothing.
func (s *Session) Logout(ctx context.Context) error {
	if s == nil || s.closed {
		return nil
	}
	s.closed = true
	refresh := s.refresh
	s.access, s.refresh = "", ""
	if refresh == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.c.cfg.Timeout)
	defer cancel()
	body, err := json.Marshal(struct {
		Refresh string `json:"refresh_token"`
	}{refresh})
	if err != nil {
		return err
	}
	resp, err := s.c.exchange(ctx, s.base, http.MethodPost, "/logout", nil, body, "")
	if err != nil {
		return err
	}
	defer drain(resp)
	if resp.StatusCode/100 != 2 {
		return s.c.statusError(resp, s.base, "POST /logout")
	}
	return nil
}

// send sends an authenticated request and returns a response that is not
// a 401 or 429: the token is renewed before it expires and once on a 401
// (then the request is repeated; a second 401 is an AuthError).
func (s *Session) send(ctx context.Context, method, path string, query url.Values, body []byte) (*http.Response, error) {
	if s.closed {
		return nil, fmt.Errorf("%s: the session is logged out", s.base)
	}
	renewed := false
	if !s.exp.IsZero() && time.Until(s.exp) < expirySkew {
		if err := s.renew(ctx); err != nil {
			return nil, err
		}
		renewed = true
	}
	for {
		resp, err := s.c.exchange(ctx, s.base, method, path, query, body, s.access)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusUnauthorized {
			return resp, nil
		}
		if renewed {
			return nil, s.c.statusError(resp, s.base, method+" "+path)
		}
		drain(resp)
		if err := s.renew(ctx); err != nil {
			return nil, err
		}
		renewed = true
	}
}

// exchange sends one request (and again while the server answers 429,
// waiting as it says), with token as the bearer when not empty. A
// connection, TLS or timeout failure is an UnreachableError; a cancelled
// ctx returns ctx's error.
func (c *Client) exchange(ctx context.Context, base, method, path string, query url.Values, body []byte, token string) (*http.Response, error) {
	op := method + " " + path
	target := base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	for throttled := 0; ; {
		resp, err := c.roundTrip(ctx, method, target, body, token)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &UnreachableError{URL: base, Op: op, Err: stripURL(err), Certificate: isCertificateError(err)}
		}
		if resp.StatusCode != http.StatusTooManyRequests {
			return resp, nil
		}
		wait, ok := parseRetryAfter(resp.Header.Get(retryAfterHeader), c.cfg.MaxWait)
		if !ok {
			wait = time.Second << min(throttled, 5)
			wait = min(wait, c.cfg.MaxWait)
		}
		drain(resp)
		throttled++
		if throttled >= c.cfg.MaxThrottled {
			return nil, &ThrottledError{URL: base, Op: op, Attempts: throttled}
		}
		if err := c.cfg.Sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// roundTrip sends one request. The answer's body must be read within the
// timeout between reads: it is closed (and the request cancelled) when it
// stalls longer.
func (c *Client) roundTrip(ctx context.Context, method, target string, body []byte, token string) (*http.Response, error) {
	rctx, cancel := context.WithCancel(ctx)
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(rctx, method, target, rd)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c.requests.Add(1)
	resp, err := c.hc.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &idleBody{rc: resp.Body, parent: ctx, cancel: cancel, timer: time.AfterFunc(c.cfg.Timeout, cancel), every: c.cfg.Timeout}
	return resp, nil
}

// idleBody cancels its request when no byte arrives for every.
type idleBody struct {
	rc     io.ReadCloser
	parent context.Context // the caller's context
	cancel context.CancelFunc
	timer  *time.Timer
	every  time.Duration
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.timer.Reset(b.every)
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	err := b.rc.Close()
	b.cancel()
	return err
}

// statusError turns a failed answer into a typed error and closes it.
func (c *Client) statusError(resp *http.Response, base, op string) error {
	defer drain(resp)
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	key, msg := parseAPIError(b)
	msg = c.redact(msg)
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		return &AuthError{URL: base, Op: op, Status: resp.StatusCode, Key: key, Message: msg}
	case http.StatusNotFound:
		return &NotFoundError{URL: base, Op: op, Key: key, Message: msg}
	}
	return &ServerError{URL: base, Op: op, Status: resp.StatusCode, Key: key, Message: msg}
}

// redact removes the password from what a server says, should it ever
// repeat it.
func (c *Client) redact(s string) string {
	if c.cred.Password == "" || len(c.cred.Password) < 3 {
		return s
	}
	return strings.ReplaceAll(s, c.cred.Password, "***")
}

// drain reads what is left of a body (a little) and closes it, so that
// the connection can be reused.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
}

// decodeSmall decodes a small JSON answer (a token).
func decodeSmall(r io.Reader, v any) error {
	return json.NewDecoder(io.LimitReader(r, maxErrorBody)).Decode(v)
}

// isCertificateError reports whether err is a failed certificate check.
func isCertificateError(err error) bool {
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	var ve *tls.CertificateVerificationError
	return errors.As(err, &ua) || errors.As(err, &he) || errors.As(err, &ci) || errors.As(err, &ve)
}

// stripURL drops the url.Error wrapper (its URL holds the query, which
// is not secret but long; the error names base and path already).
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
