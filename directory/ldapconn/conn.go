// Package ldapconn is cpactl's transport to a live LDAP server: the
// connection (Conn, Dial), the bulk connection that streams paged searches
// and pipelines a transaction's write Requests, replicas (writes moved to
// the provider, read failover), and the process's interrupt control
// (StopChanges: a change stops where the directory is consistent). It
// knows requests, not plans: package directory turns its plans' writes
// into Requests and gives this package's names under its own.
package ldapconn

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ber "github.com/go-asn1-ber/asn1-ber"
	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/history"
	"github.com/cpactl/cpactl/internal/fold"
	"github.com/cpactl/cpactl/internal/ldapuri"
	"github.com/cpactl/cpactl/internal/osfile"
	"github.com/cpactl/cpactl/ldapschema"
)

// Options says how to reach and bind to a server.
type Options struct {
	// URLs are tried in order; the first that answers is used. Schemes:
	// ldap://, ldaps://, ldapi:// (a Unix socket, e.g.
	// ldapi://%2Fvar%2Frun%2Fslapd%2Fldapi).
	URLs []string
	// BindDN and Password for a simple bind. Without a BindDN an ldapi://
	// connection binds with SASL EXTERNAL (the peer's uid and gid) and any
	// other connection stays anonymous.
	BindDN   string
	Password string
	// Credentials says where the bind DN and the password came from
	// ("the password from -y pw.txt, the bind DN from -D"), for the hint
	// of a refused bind; never the password itself.
	Credentials string
	// StartTLS upgrades an ldap:// connection; a failed upgrade is an error,
	// never a fall back to clear text.
	StartTLS bool
	// CAFile holds PEM certificates to trust instead of the system pool.
	CAFile string
	// InsecureSkipVerify turns certificate checks off (for tests only).
	InsecureSkipVerify bool
	// Timeout bounds dialing and every request (default 10s), except the
	// commit of a transaction, which gets CommitTimeout(Timeout).
	Timeout time.Duration
	// WriteURL is the provider's URI when URLs name read-only replicas:
	// a write a replica refuses goes there, and a replica's referral to
	// it is followed (see replica.go). Referrals are followed only to
	// URLs and WriteURL.
	WriteURL string
	// Note receives the one-line notes a Conn gives about where it goes:
	// a write moved to the provider, a read that failed over.
	Note func(string)
	// Run is the command run every write names in the run control: the
	// history groups a command's writes by it. A zero Run sends none.
	Run history.Run
}

// Conn is a live directory connection.
type Conn struct {
	conn *ldap.Conn
	URL  string
	run  ldap.Control // the run control every write carries (nil: none)
	txns atomic.Int64 // the transactions started, which number them in the run control

	// mu guards conn, URL and the bulk connection when a read fails
	// over or a write moves to the provider (replica.go).
	mu         sync.Mutex
	moveMu     sync.Mutex  // one move to the provider at a time
	onProvider atomic.Bool // moved to the provider: reads and writes stay there
	writable   atomic.Bool // a write or the probe showed this server takes writes
	probeDN    string      // an entry of the database the writes go to (the base)
	replica    *ldap.Conn  // the replica's connection the move left (it applies no write)
	replicaURL string      // that replica's URI: what the command read before the move

	timeout    time.Duration
	settleOnce sync.Once
	settle     time.Duration // pause before End Transaction, see endSettle

	opts     Options // to open the bulk connection the same way
	bulkOnce sync.Once
	bulk     *bulkConn
	bulkErr  error
}

// Dial connects to the first reachable URL of opts, upgrades with StartTLS
// when asked, and binds.
func Dial(opts Options) (*Conn, error) {
	if len(opts.URLs) == 0 {
		return nil, errors.New("no server given: pass -H ldap://host or set CPACTL_URL (or use --from FILE.ldif for reads)")
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	if opts.WriteURL != "" {
		if _, err := checkURL(opts.WriteURL); err != nil {
			return nil, fmt.Errorf("--write-url: %v", err)
		}
	}
	tlsConfig, err := tlsConfigFor(opts)
	if err != nil {
		return nil, err
	}
	var lastErr error
	for _, raw := range opts.URLs {
		u, err := checkURL(raw)
		if err != nil {
			return nil, err
		}
		cfg := tlsConfig.Clone()
		if host, _, err := net.SplitHostPort(u.Host); err == nil {
			cfg.ServerName = host
		} else if u.Scheme != "ldapi" {
			cfg.ServerName = u.Host
		}
		c, err := ldap.DialURL(raw, ldap.DialWithDialer(&net.Dialer{Timeout: timeout}), ldap.DialWithTLSConfig(cfg))
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				lastErr = &NoAnswerError{URL: raw, Timeout: timeout, Op: "connect"}
			} else {
				lastErr = &ldapclient.ConnectError{URL: raw, Err: tlsHint(err)}
			}
			continue
		}
		c.SetTimeout(timeout)
		if opts.StartTLS {
			if u.Scheme != "ldap" {
				c.Close()
				return nil, fmt.Errorf("--starttls applies to ldap:// URLs only, not %s", raw)
			}
			if err := c.StartTLS(cfg); err != nil {
				c.Close()
				return nil, &ldapclient.ConnectError{URL: raw, Err: fmt.Errorf("starttls failed, refusing to continue in clear text: %s", ldapclient.Describe(tlsHint(err)))}
			}
		}
		start := time.Now()
		if err := bind(c, u, opts); err != nil {
			c.Close()
			if noAnswer(err, start, timeout) {
				// A frozen or overloaded server: the next URI may answer.
				lastErr = &NoAnswerError{URL: raw, Timeout: timeout, Op: "bind"}
				continue
			}
			if broke := connectionBroke(err); broke != nil {
				// Closed or reset before the bind's answer: a server that
				// cannot be used (a connection limit, a TLS-only port, a
				// proxy with nothing behind it), not a refused bind.
				lastErr = &ClosedError{URL: raw, Op: "bind", Err: broke}
				continue
			}
			return nil, err
		}
		return &Conn{conn: c, URL: raw, timeout: timeout, opts: opts, run: runControl(opts.Run)}, nil
	}
	return nil, lastErr
}

func checkURL(raw string) (*url.URL, error) {
	if err := ldapuri.Check("URI", raw); err != nil {
		return nil, err // before anything that would echo it
	}
	if strings.HasPrefix(raw, "ldapi://") {
		return &url.URL{Scheme: "ldapi"}, nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "ldap" && u.Scheme != "ldaps") || u.Host == "" {
		return nil, fmt.Errorf("bad URI %q: use ldap://host[:port], ldaps://host[:port] or ldapi://socket", raw)
	}
	return u, nil
}

func bind(c *ldap.Conn, u *url.URL, opts Options) error {
	var err error
	switch {
	case opts.BindDN != "":
		if opts.Password == "" {
			return fmt.Errorf("bind as %q needs a password: use -W, -y FILE or CPACTL_BIND_PASSWORD", opts.BindDN)
		}
		err = c.Bind(opts.BindDN, opts.Password)
	case u.Scheme == "ldapi":
		err = c.ExternalBind()
	default:
		return nil // anonymous
	}
	if err != nil {
		return &AuthError{Who: opts.BindDN, Err: err, Credentials: opts.Credentials}
	}
	return nil
}

// NoAnswerError says the server took the connection but did not answer a
// request in time (exit code 1): a frozen or overloaded server, never an
// authentication failure.
type NoAnswerError struct {
	URL     string
	Timeout time.Duration
	Op      string // connect, bind, search, add, ...
}

func (e *NoAnswerError) Error() string {
	return fmt.Sprintf("%s did not answer within %s (%s)", e.URL, e.Timeout, e.Op)
}

// noAnswer reports whether err is go-ldap's client-side timeout: a
// network-level error (no LDAP result) after the whole time limit.
func noAnswer(err error, start time.Time, timeout time.Duration) bool {
	var le *ldap.Error
	return errors.As(err, &le) && le.ResultCode == ldap.ErrorNetwork && time.Since(start) >= timeout*9/10
}

// ClosedError says the server took the connection, then closed or reset
// it before answering a request (exit code 1): a server that cannot be
// used, never an authentication failure. Dial goes on to the next URI.
type ClosedError struct {
	URL string
	Op  string // bind
	Err error
}

func (e *ClosedError) Error() string {
	return fmt.Sprintf("%s: the server closed the connection during the %s (%s)", e.URL, e.Op, ldapclient.Describe(e.Err))
}

func (e *ClosedError) Unwrap() error { return e.Err }

// Hint says what makes a server close a connection it accepted.
func (e *ClosedError) Hint() string {
	return "check that the URI names the server's LDAP port (ldaps:// for a port that speaks TLS from the start) and the server's log " +
		"(a connection limit, a TLS requirement, a proxy with no server behind it); -H takes several URIs, tried in order"
}

// connectionBroke returns the failure of a bind whose connection broke
// (closed, reset) before the server answered: go-ldap's network error, or
// its reader's plain error ("unable to read LDAP response packet: EOF");
// nil for a bind the server answered, or refused to send.
func connectionBroke(err error) error {
	var auth *AuthError
	if !errors.As(err, &auth) {
		return nil
	}
	var le *ldap.Error
	switch {
	case !errors.As(auth.Err, &le):
		return auth.Err
	case le.ResultCode == ldap.ErrorNetwork:
		return le
	}
	return nil
}

// answered turns a client-side timeout of op into a NoAnswerError.
func (c *Conn) answered(err error, start time.Time, op string) error {
	if err != nil && noAnswer(err, start, c.timeout) {
		return &NoAnswerError{URL: c.URL, Timeout: c.timeout, Op: op}
	}
	return err
}

// AuthError says the bind failed (exit code 4).
type AuthError struct {
	Who string
	Err error
	// Credentials says where the bind DN and password came from
	// (Options.Credentials).
	Credentials string
}

// Hint says, for a simple bind the server refused as invalid credentials
// (49), where the password and the bind DN came from: a stale
// CPACTL_BIND_PASSWORD or a context's bind DN is the usual cause.
func (e *AuthError) Hint() string {
	if e.Credentials == "" || !ldapclient.IsCode(e.Err, ldap.LDAPResultInvalidCredentials) {
		return ""
	}
	return "check the password and the bind DN: " + e.Credentials
}

func (e *AuthError) Error() string {
	who := e.Who
	if who == "" {
		who = "SASL EXTERNAL"
	}
	return fmt.Sprintf("bind as %s failed: %s", who, ldapclient.Describe(e.Err))
}

func (e *AuthError) Unwrap() error { return e.Err }

// caFile is what --ca-file may be: a PEM bundle (a few hundred kB for
// every public CA) in a regular file or a pipe (--ca-file <(vault ...)).
var caFile = osfile.Source{Max: 4 * osfile.MiB, Pipes: true}

func tlsConfigFor(opts Options) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: opts.InsecureSkipVerify}
	if opts.CAFile != "" {
		pem, _, err := caFile.Read(opts.CAFile)
		if err != nil {
			return nil, &CAFileError{Path: opts.CAFile, Err: err}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &CAFileError{Path: opts.CAFile}
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// CAFileError is a --ca-file that cannot be used (exit code 1): it cannot
// be read, is not a file of PEM certificates (a device, a directory), is
// larger than 4 MiB, or holds no certificate (Err nil).
type CAFileError struct {
	Path string
	Err  error
}

func (e *CAFileError) Error() string {
	var kind *osfile.KindError
	var large *osfile.TooLargeError
	switch {
	case e.Err == nil:
		return fmt.Sprintf("--ca-file %s holds no PEM certificate", e.Path)
	case errors.As(e.Err, &kind), errors.As(e.Err, &large):
		return "--ca-file " + e.Err.Error()
	}
	return fmt.Sprintf("cannot read --ca-file: %v", e.Err)
}

func (e *CAFileError) Unwrap() error { return e.Err }

// Hint says what --ca-file takes.
func (e *CAFileError) Hint() string {
	return "pass --ca-file the PEM file of the CA(s) that signed the server's certificate"
}

// tlsHint makes certificate failures say so plainly: the three a client
// meets most by name, any other failure to verify the server's certificate
// (crypto/tls reports those as a *tls.CertificateVerificationError) as a
// certificate problem.
func tlsHint(err error) error {
	var unknown x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	switch {
	case errors.As(err, &unknown):
		return fmt.Errorf("the server's certificate is signed by an unknown authority (pass its CA with --ca-file): %v", unknown.Error())
	case errors.As(err, &hostErr):
		return fmt.Errorf("the server's certificate does not match the host name: %v", hostErr.Error())
	case errors.As(err, &invalid):
		return fmt.Errorf("the server's certificate is invalid: %v", invalid.Error())
	case errors.As(err, &verify):
		return fmt.Errorf("certificate problem: %s", ldapclient.Describe(err))
	}
	return err
}

// Reconnect replaces the connection with a fresh one to the same server,
// bound the same way: what re-reads a write whose answer never came, and
// what the command goes on with. It is not safe for concurrent use.
func (c *Conn) Reconnect() error {
	opts := c.opts
	opts.URLs = []string{c.URL}
	fresh, err := Dial(opts)
	if err != nil {
		return err
	}
	c.swap(fresh)
	return nil
}

// swap makes fresh (a connection to c.URL or another server) the
// connection c goes on with, and closes the old one.
func (c *Conn) swap(fresh *Conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bulk != nil {
		c.bulk.close()
	}
	c.conn.Close()
	c.conn, c.URL = fresh.conn, fresh.URL
	c.bulkOnce, c.bulk, c.bulkErr = sync.Once{}, nil, nil
}

// live returns the connection in use and its URL.
func (c *Conn) live() (*ldap.Conn, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn, c.URL
}

// Close closes the connection.
func (c *Conn) Close() error {
	if c.bulk != nil {
		c.bulk.close()
	}
	return c.conn.Close()
}

// Search runs a search. A search that gets no answer, or loses its
// connection, is tried once more on the next URI (failover).
func (c *Conn) Search(req *ldap.SearchRequest) (*ldap.SearchResult, error) {
	conn, _ := c.live()
	start := time.Now()
	res, err := conn.Search(req)
	err = c.answered(err, start, "search")
	if c.failover(conn, err) {
		conn, _ = c.live()
		start = time.Now()
		res, err = conn.Search(req)
		err = c.answered(err, start, "search")
	}
	return res, err
}

// PageSize is how many entries each page of a streamed search asks for.
// Pages keep the client's memory bounded whatever the directory's size,
// and each page is one request, bound by the request timeout: a scan of
// 250,000 sessions takes as long as it needs as long as pages keep coming.
const PageSize = 1000

// SearchEach runs a paged search (RFC 2696) and hands each entry to each
// as it is decoded. An error from each abandons the rest of the search.
// It runs on a second connection that decodes entries without go-ldap's
// generic BER tree (bulkConn), opened on first use.
//
// A search that fails before it handed over any entry (the server died,
// or did not answer) is tried once more on the next URI; one that fails
// part way is not, as each has seen entries already.
func (c *Conn) SearchEach(req *ldap.SearchRequest, each func(*ldap.Entry) error) error {
	conn, _ := c.live()
	seen := false
	var eachErr error
	counted := func(e *ldap.Entry) error {
		seen = true
		eachErr = each(e)
		return eachErr
	}
	err := c.searchEach(req, counted)
	if err != nil && eachErr == nil && !seen && c.failover(conn, asNetwork(err)) {
		err = c.searchEach(req, counted)
	}
	return err
}

func (c *Conn) searchEach(req *ldap.SearchRequest, each func(*ldap.Entry) error) error {
	bulk, err := c.bulkConn()
	if err != nil {
		return err
	}
	return bulk.searchEach(req, each)
}

// bulkConn returns the bulk connection to the server in use, opened on
// first use.
func (c *Conn) bulkConn() (*bulkConn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bulkOnce.Do(func() { c.bulk, c.bulkErr = dialBulk(c.URL, c.opts, c.timeout) })
	return c.bulk, c.bulkErr
}

// dropBulk closes b, a bulk connection that failed, so that the next use
// opens a fresh one (unless the connection moved on already).
func (c *Conn) dropBulk(b *bulkConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bulk == b {
		b.close()
		c.bulkOnce, c.bulk, c.bulkErr = sync.Once{}, nil, nil
	}
}

// Add adds an entry. Like every write, it goes to the provider when the
// server is a read-only replica that refuses it (see write), and carries
// the run control (tagged).
func (c *Conn) Add(req *ldap.AddRequest) error {
	req.Controls = c.tagged(req.Controls)
	return c.write(req.DN, "add", func(conn *ldap.Conn) error { return conn.Add(req) })
}

// Modify modifies an entry.
func (c *Conn) Modify(req *ldap.ModifyRequest) error {
	req.Controls = c.tagged(req.Controls)
	return c.write(req.DN, "modify", func(conn *ldap.Conn) error { return conn.Modify(req) })
}

// ModifyDN renames or moves an entry.
func (c *Conn) ModifyDN(req *ldap.ModifyDNRequest) error {
	req.Controls = c.tagged(req.Controls)
	return c.write(req.DN, "rename", func(conn *ldap.Conn) error { return conn.ModifyDN(req) })
}

// Del deletes an entry.
func (c *Conn) Del(req *ldap.DelRequest) error {
	req.Controls = c.tagged(req.Controls)
	return c.write(req.DN, "delete", func(conn *ldap.Conn) error { return conn.Del(req) })
}

// runControl is the run control of run, nil for none. It is not
// critical: a server that does not know it ignores it.
func runControl(run history.Run) ldap.Control {
	if run.ID == "" {
		return nil
	}
	return ldap.NewControlString(ldapschema.OIDRunControl, false, string(run.Value()))
}

// tagged returns ctls with the run control, the one place it joins a
// write sent one at a time (a transaction's writes get it with the
// transaction's control: startTxn). A request sent again (a lost answer
// settled, a write moved to the provider) is not tagged twice.
func (c *Conn) tagged(ctls []ldap.Control) []ldap.Control {
	if c.run == nil {
		return ctls
	}
	for _, ctl := range ctls {
		if ctl.GetControlType() == ldapschema.OIDRunControl {
			return ctls
		}
	}
	return append(ctls, c.run)
}

// RFC 5805 OIDs.
const (
	oidStartTxn = "1.3.6.1.1.21.1"
	oidTxnSpec  = "1.3.6.1.1.21.2"
	oidEndTxn   = "1.3.6.1.1.21.3"
)

// txnControl is the transaction specification control. go-ldap's
// NewControlString drops an empty value, but slapd's transaction ID is empty
// and the value must still be present, so this control always encodes it.
type txnControl struct{ id string }

func (t txnControl) GetControlType() string { return oidTxnSpec }

func (t txnControl) String() string { return "transaction specification" }

func (t txnControl) Encode() *ber.Packet {
	p := ber.Encode(ber.ClassUniversal, ber.TypeConstructed, ber.TagSequence, nil, "Control")
	p.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, oidTxnSpec, "Control Type"))
	p.AppendChild(ber.NewBoolean(ber.ClassUniversal, ber.TypePrimitive, ber.TagBoolean, true, "Criticality"))
	p.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, t.id, "Control Value"))
	return p
}

// How a transaction is paced, and why (measured on slapd 2.5.13; the same
// code is in OpenLDAP up to 2.6's latest releases).
//
// slapd answers each request of a transaction ("queued") from the worker
// thread that queued it, and that thread goes on using the operation
// after the answer has left: it updates the statistics counters, restores
// op->o_bd in fe_op_add/modify/delete/modrdn, and finishes in
// connection_operation. The End Transaction request, run by another
// worker, executes the queued operations and then frees them. An End that
// reaches a worker before the thread of an earlier operation is done makes
// that thread use freed memory (cores: a segfault in
// send_ldap_response or connection_operation locking a NULL counter
// mutex; by the source, the late `op->o_bd = bd` can also make End run
// the operation through the frontend database). Only End races: a next operation of the transaction, a Start
// after an End, and the operations' own order are safe (measured: a pause
// between operations but none before End crashes within 10 transactions;
// a pause before End only, none elsewhere, made 2,000 pass).
//
// slapd itself serializes the operations of one connection when it runs
// at most 3 worker threads (`threads`; it defers a request while threads/2
// operations of that connection execute, and an operation counts until
// its thread is done with it): then nothing races. Otherwise cpactl waits
// txnSettle before sending End, once per transaction, which leaves the
// earlier threads time to finish; it lowers the risk and cannot remove it,
// as the pause is the client's time and a loaded (or stopped) server may
// not run the late thread within it (measured under a load average of 14
// on 2 cores, in 2,000 transactions each: 3 crashes with a 2 ms pause, 1
// with 5 ms, none with 20 ms). Use `threads 2` for cpactl's directory.

// txnSettle is how long a transaction waits after its last operation was
// queued before it sends End Transaction (commit or abort), on a server
// that may run the operations of a connection concurrently.
const txnSettle = 20 * time.Millisecond

// maxSerialThreads is the largest slapd thread count at which slapd runs
// one operation of a connection at a time (threads/2 == 1).
const maxSerialThreads = 3

// MinCommitTimeout is the least time cpactl waits for the server to commit
// (or abort) a transaction. A commit runs every queued write, so it takes
// longer than one request; and a client that gives up and closes its
// connection while slapd 2.5 commits makes slapd free the operations it is
// running (connection_abandon), which crashes it.
const MinCommitTimeout = 60 * time.Second

// CommitTimeout is the deadline of End Transaction for a request timeout:
// six times it, at least MinCommitTimeout.
func CommitTimeout(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	return max(MinCommitTimeout, 6*timeout)
}

// defaultTimeout bounds dialing and each request when Options.Timeout is
// not set.
const defaultTimeout = 10 * time.Second

// ErrMoveInTransaction refuses a move (modrdn with a new superior) inside
// a transaction: slapd 2.5 keeps a pointer into the stack of the thread
// that queued it, and the commit crashes when that stack was reused
// (measured: 5 crashes in 80 pod deletes that moved a subtree to the trash
// as a transaction's last operation).
var ErrMoveInTransaction = errors.New("slapd cannot move an entry to another parent inside a transaction")

// Transaction runs fn inside an RFC 5805 transaction. If fn fails, the
// transaction is aborted and nothing is written; otherwise it is
// committed, and the server applies every write or none. The commit has
// its own deadline (CommitTimeout); a commit that gets no answer in time,
// or loses its connection, is an *OutcomeUnknownError. On StopChanges the
// writer stops sending and the transaction is aborted, its answer awaited:
// an *InterruptedError.
//
// A transaction runs on the provider only: on a read-only replica (found
// with a write probe before the transaction starts) the connection first
// moves to the provider, as a refused write does. It runs on the bulk
// connection (bulktxn.go), opened to the server the writes go to, which
// it holds to itself until it ends.
func (c *Conn) Transaction(fn func(w ldapclient.Writer) error) error {
	if err := c.ToWritable(); err != nil {
		return err
	}
	settle := c.endSettle()
	b, err := c.bulkConn()
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	noteTimeout(c.requestTimeout())
	t, err := c.startTxn(b)
	if err != nil {
		return err
	}
	openTxns.Add(1)
	defer openTxns.Add(-1)
	err = fn(t)
	if err == nil && stopAsked.Load() {
		err = ErrStopped // an interrupt: abort rather than commit
	}
	var ended error
	if t.lost == nil {
		ended = t.end(err == nil, settle, CommitTimeout(c.timeout))
	}
	if t.lost != nil {
		// The connection was closed, and with it the transaction if it
		// had not ended: the next use opens a fresh one.
		c.dropBulk(b)
	}
	if errors.Is(err, ErrStopped) {
		return &InterruptedError{Transaction: true, Abort: cmp.Or(ended, t.lost)}
	}
	return cmp.Or(err, ended, t.lost)
}

// startTxn sends Start Transaction on b; b is dropped when it got no
// answer.
func (c *Conn) startTxn(b *bulkConn) (*bulkTxn, error) {
	t, err := b.startTxn(c.requestTimeout())
	var le *ldap.Error
	switch {
	case err == nil:
		if c.run != nil {
			// Each write of the transaction carries the run control
			// after the transaction's own, numbered: the history tells
			// the transactions of one run apart.
			run := c.opts.Run
			run.Txn = int(c.txns.Add(1))
			t.ctl = append(t.ctl, runControl(run).Encode().Bytes()...)
		}
		return t, nil
	case errors.As(err, &le) && le.ResultCode < ldap.ErrorNetwork:
		return nil, ldapclient.OpErrorf(c.startRefused(err), "cannot start a transaction")
	}
	c.dropBulk(b)
	return nil, fmt.Errorf("cannot start a transaction: %s", ldapclient.Describe(err))
}

// startRefused explains the server's refusal of Start Transaction by its
// result code: a refusal of who the connection is (an anonymous one
// above all) is an *AuthRequiredError; an unknown operation, an
// unavailable critical extension or unwilling to perform say the server
// has no transactions; anything else keeps its code.
func (c *Conn) startRefused(err error) error {
	switch {
	case ldapclient.IsCode(err, ldap.LDAPResultProtocolError), ldapclient.IsCode(err, ldap.LDAPResultUnavailableCriticalExtension),
		ldapclient.IsCode(err, ldap.LDAPResultUnwillingToPerform):
		return fmt.Errorf("the server needs back-mdb with transactions (RFC 5805): %w", err)
	}
	return authRequired(err, c.Anonymous())
}

func (c *Conn) requestTimeout() time.Duration {
	if c.timeout <= 0 {
		return defaultTimeout
	}
	return c.timeout
}

// endSettle returns the pause before End Transaction this server needs,
// found once per connection: none for a server other than OpenLDAP, or for
// an OpenLDAP slapd that says (in cn=config or cn=Monitor, when this bind
// may read them) that it runs at most maxSerialThreads threads; txnSettle
// otherwise.
func (c *Conn) endSettle() time.Duration {
	c.settleOnce.Do(func() {
		c.settle = txnSettle
		root, err := c.baseEntry("", "objectClass", "configContext", "monitorContext")
		if err != nil || root == nil {
			return
		}
		if !fold.Contains(root.GetEqualFoldAttributeValues(ldapschema.AttrObjectClass), "OpenLDAProotDSE") {
			c.settle = 0
			return
		}
		if threads := c.slapdThreads(root); threads > 0 && threads <= maxSerialThreads {
			c.settle = 0
		}
	})
	return c.settle
}

// slapdThreads reads slapd's worker thread count from cn=config
// (olcThreads) or cn=Monitor (cn=Max,cn=Threads); 0 when neither can be
// read.
func (c *Conn) slapdThreads(root *ldap.Entry) int {
	if ctx := root.GetEqualFoldAttributeValue("configContext"); ctx != "" {
		if e, err := c.baseEntry(ctx, "olcThreads"); err == nil && e != nil {
			if n, err := strconv.Atoi(e.GetEqualFoldAttributeValue("olcThreads")); err == nil {
				return n
			}
		}
	}
	if ctx := root.GetEqualFoldAttributeValue("monitorContext"); ctx != "" {
		if e, err := c.baseEntry("cn=Max,cn=Threads,"+ctx, "monitoredInfo"); err == nil && e != nil {
			if n, err := strconv.Atoi(e.GetEqualFoldAttributeValue("monitoredInfo")); err == nil {
				return n
			}
		}
	}
	return 0
}

// BaseEntry reads one entry; nil when it does not exist or may not be
// read. A read that gets no answer in time is a *NoAnswerError.
func (c *Conn) BaseEntry(dn string, attrs ...string) (*ldap.Entry, error) {
	start := time.Now()
	e, err := c.baseEntry(dn, attrs...)
	if err != nil {
		return nil, c.answered(err, start, "search")
	}
	return e, nil
}

// baseEntry reads one entry; nil when it does not exist or may not be
// read.
func (c *Conn) baseEntry(dn string, attrs ...string) (*ldap.Entry, error) {
	conn, _ := c.live()
	res, err := conn.Search(ldap.NewSearchRequest(dn, ldap.ScopeBaseObject, ldap.NeverDerefAliases, 1, 0, false,
		ldapclient.AnyEntry, attrs, nil))
	switch {
	case ldapclient.IsCode(err, ldap.LDAPResultNoSuchObject), ldapclient.IsCode(err, ldap.LDAPResultInsufficientAccessRights):
		return nil, nil
	case err != nil:
		return nil, err
	case len(res.Entries) == 0:
		return nil, nil
	}
	return res.Entries[0], nil
}

// commitsInFlight counts the End Transaction requests waiting for their
// answer, for CommitInFlight.
var commitsInFlight atomic.Int64

// CommitInFlight reports whether a transaction of this process is being
// committed or aborted: an exit then closes the connection under slapd's
// feet (see MinCommitTimeout), so an interrupt handler should let it end.
func CommitInFlight() bool { return commitsInFlight.Load() > 0 }

// OutcomeUnknownError says a write was sent but its answer never came (a
// timeout, or the connection was lost): it may have been applied or not
// (exit code 7; `cpactl diff` tells).
type OutcomeUnknownError struct {
	What string
	Err  error
}

func (e *OutcomeUnknownError) Error() string {
	return fmt.Sprintf("%s got no answer, so it may or may not have been applied: %s", e.What, ldapclient.Describe(e.Err))
}

func (e *OutcomeUnknownError) Unwrap() error { return e.Err }

// OIDAssertion is the assertion control (RFC 4528).
const OIDAssertion = "1.3.6.1.1.12"

// AssertionControl returns the RFC 4528 assertion control for filter: the
// server applies the operation only if the entry matches the filter, and
// answers assertionFailed (122) otherwise.
func AssertionControl(filter string) (ldap.Control, error) {
	p, err := ldap.CompileFilter(filter)
	if err != nil {
		return nil, err
	}
	return ldap.NewControlString(OIDAssertion, true, string(p.Bytes())), nil
}
