package ldapconn

// Replicated directories (docs/replication.md): writes go to the provider,
// reads to any replica, with one failover.
//
// A read-only replica (a syncrepl consumer) refuses a write before it
// looks at the entry or the controls: with `updateref` it answers a
// referral (10) to the provider, without it "shadow context; no update
// referral" (53). The write was not applied, so sending it again to the
// provider is not a blind retry. The Conn follows one referral, to a URI
// it was told to trust (Options.URLs or Options.WriteURL) and with the
// same bind and TLS settings, and then stays on the provider: reads after
// a write see it (read-your-writes). A 53 is told apart from other
// refusals by the write probe, by result code, never by the server's
// wording. Assertions (entryCSN) and transactions are evaluated by the
// provider only: a transaction probes first and moves before it starts.

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	ber "github.com/go-asn1-ber/asn1-ber"
	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/ldapschema"
)

// SetProbeDN names an entry of the database cpactl writes to (the
// federation's base): what the write probe of a transaction modifies.
func (c *Conn) SetProbeDN(dn string) { c.probeDN = dn }

// write sends a write; when a read-only replica refuses it, it moves to
// the provider and sends it there, once. A refusal because of who the
// connection is becomes an *AuthRequiredError, and an "unwilling to
// perform" (53) at a DN outside every naming context a *LayoutError: a
// server answers that, like a read-only replica, where it holds no
// database.
func (c *Conn) write(dn, op string, send func(*ldap.Conn) error) error {
	return authRequired(c.sendWrite(dn, op, send), c.Anonymous())
}

func (c *Conn) sendWrite(dn, op string, send func(*ldap.Conn) error) error {
	conn, _ := c.live()
	start := time.Now()
	err := c.answered(send(conn), start, op)
	if err == nil {
		c.writable.Store(true)
		return nil
	}
	if Unanswered(err) && c.leftReplica(conn) {
		// A concurrent write moved to the provider and closed the
		// replica's connection under this one: the replica applies no
		// write, so this one goes to the provider too.
		conn, _ = c.live()
		start = time.Now()
		return c.answered(send(conn), start, op)
	}
	if ldapclient.IsCode(err, ldap.LDAPResultUnwillingToPerform) {
		if outside := c.outsideContexts(dn); outside != nil {
			return outside
		}
	}
	refs, shadow := c.refusedAsReplica(err, dn)
	if !shadow {
		return err
	}
	if merr := c.moveToProvider(conn, refs); merr != nil {
		return merr
	}
	conn, _ = c.live()
	start = time.Now()
	return c.answered(send(conn), start, op)
}

// refusedAsReplica reports whether err is a read-only replica's refusal
// of a write: a referral, or a 53 that the write probe confirms (a server
// that takes writes answers the probe otherwise).
func (c *Conn) refusedAsReplica(err error, dn string) ([]string, bool) {
	switch {
	case ldapclient.IsCode(err, ldap.LDAPResultReferral):
		return referrals(err), true
	case ldapclient.IsCode(err, ldap.LDAPResultUnwillingToPerform) && !c.writable.Load() && !c.onProvider.Load():
		refs, shadow, perr := c.Probe(dn)
		return refs, perr == nil && shadow
	}
	return nil, false
}

// probeValue is the value the write probe deletes: none holds it, so even
// a server that ignored the assertion would change nothing (16).
const probeValue = "cpactl write probe: never stored"

// Probe asks the server whether it takes writes at dn without writing: a
// modify guarded by an assertion no entry matches. A read-only replica
// refuses it as a write (referral or 53) before it evaluates the
// assertion; a server that takes writes answers assertion failed (122),
// no such object, insufficient access or anything else. A 53 at a dn
// outside every naming context is no replica's: the server holds no
// database there, and the error is a *LayoutError.
func (c *Conn) Probe(dn string) (refs []string, shadow bool, err error) {
	ctl, err := AssertionControl("(!(objectClass=*))")
	if err != nil {
		return nil, false, err
	}
	req := ldap.NewModifyRequest(dn, c.tagged([]ldap.Control{ctl}))
	req.Delete(ldapschema.AttrDescription, []string{probeValue})
	conn, _ := c.live()
	start := time.Now()
	perr := c.answered(conn.Modify(req), start, "write probe")
	switch {
	case perr == nil:
		return nil, false, nil
	case ldapclient.IsCode(perr, ldap.LDAPResultReferral):
		return referrals(perr), true, nil
	case ldapclient.IsCode(perr, ldap.LDAPResultUnwillingToPerform):
		if outside := c.outsideContexts(dn); outside != nil {
			return nil, false, outside
		}
		return nil, true, nil
	case Unanswered(perr):
		return nil, false, perr
	}
	return nil, false, nil
}

// outsideContexts returns a *LayoutError when dn lies under none of the
// naming contexts the server lists in its root DSE (a wrong -b): the
// base named is the federation's (the probe DN) when dn is under it.
// It returns nil when dn lies under one, or when the root DSE lists none
// or cannot be read (nothing is known then).
func (c *Conn) outsideContexts(dn string) error {
	contexts, err := c.NamingContexts()
	if err != nil || len(contexts) == 0 || UnderAny(dn, contexts) {
		return nil
	}
	base := dn
	if c.probeDN != "" && ldapschema.IsUnder(dn, c.probeDN) {
		base = c.probeDN
	}
	return &LayoutError{Base: base, DN: dn, Contexts: contexts}
}

// NamingContexts returns the naming contexts the server lists in its
// root DSE (the suffixes of its databases), nil when it lists none or
// the bind may not read them.
func (c *Conn) NamingContexts() ([]string, error) {
	root, err := c.baseEntry("", ldapschema.AttrNamingContexts)
	if err != nil || root == nil {
		return nil, err
	}
	return root.GetEqualFoldAttributeValues(ldapschema.AttrNamingContexts), nil
}

// UnderAny reports whether dn is one of bases or lies under one.
func UnderAny(dn string, bases []string) bool {
	for _, b := range bases {
		if ldapschema.IsUnder(dn, b) {
			return true
		}
	}
	return false
}

// Anonymous reports whether the connection did not bind: no bind DN,
// and not ldapi:// (where cpactl binds with SASL EXTERNAL).
func (c *Conn) Anonymous() bool {
	_, url := c.live()
	return c.opts.BindDN == "" && !strings.HasPrefix(strings.ToLower(url), "ldapi://")
}

// ToProvider moves the connection to the provider when the server is a
// read-only replica (found with the write probe), and says whether it
// moved: what a read that only the provider answers needs (the history).
func (c *Conn) ToProvider() (bool, error) {
	if c.onProvider.Load() || c.probeDN == "" {
		return false, nil
	}
	conn, _ := c.live()
	refs, shadow, err := c.Probe(c.probeDN)
	if err != nil || !shadow {
		return false, err
	}
	if err := c.moveToProvider(conn, refs); err != nil {
		return false, err
	}
	return true, nil
}

// ToWritable makes sure the connection is on a server that takes writes
// before a transaction starts: the probe, then the move when it is a
// read-only replica.
func (c *Conn) ToWritable() error {
	if c.writable.Load() || c.onProvider.Load() || c.probeDN == "" {
		return nil
	}
	conn, _ := c.live()
	refs, shadow, err := c.Probe(c.probeDN)
	if err != nil {
		return err
	}
	if !shadow {
		c.writable.Store(true)
		return nil
	}
	return c.moveToProvider(conn, refs)
}

// moveToProvider replaces the connection with one to the provider: the
// first referral URI that matches a trusted URI, or WriteURL when the
// replica named none. It says so through Options.Note. conn is the
// connection the replica refused the write on: when another write moved
// already, there is nothing to do.
func (c *Conn) moveToProvider(conn *ldap.Conn, refs []string) error {
	c.moveMu.Lock()
	defer c.moveMu.Unlock()
	current, replica := c.live()
	if current != conn && c.onProvider.Load() {
		return nil
	}
	target := ""
	for _, ref := range refs {
		if target = c.trusted(ref); target != "" {
			break
		}
	}
	switch {
	case target == "" && len(refs) > 0:
		return &ldapclient.ReplicaError{Replica: replica, Referral: ldapclient.ServerOf(refs[0])}
	case target == "" && c.opts.WriteURL != "":
		target = c.opts.WriteURL
	case target == "":
		return &ldapclient.ReplicaError{Replica: replica}
	}
	if c.onProvider.Load() || SameServer(target, replica) {
		// The provider itself refused: follow no second referral.
		return &ldapclient.ReplicaError{Replica: replica, Provider: target, Err: errors.New("it refused the write as a replica too")}
	}
	opts := c.opts
	opts.URLs = []string{target}
	fresh, err := Dial(opts)
	if err != nil {
		return &ldapclient.ReplicaError{Replica: replica, Provider: target, Err: err}
	}
	c.mu.Lock()
	c.replica, c.replicaURL = current, replica
	c.mu.Unlock()
	c.swap(fresh)
	c.onProvider.Store(true)
	c.writable.Store(true)
	if c.opts.Note != nil {
		c.opts.Note(fmt.Sprintf("%s is a read-only replica: writing to the provider %s (and reading from it for the rest of the command)", replica, target))
	}
	return nil
}

// OnProvider reports whether the connection moved to the provider (a
// write a replica refused, or ToProvider): reads and writes stay there.
func (c *Conn) OnProvider() bool { return c.onProvider.Load() }

// Server is the URI of the server the connection is on now.
func (c *Conn) Server() string {
	_, url := c.live()
	return url
}

// WhoAmI asks the server who the connection is (RFC 4532 "Who am I?"):
// its authorization identity ("dn:...", "" when anonymous).
func (c *Conn) WhoAmI() (string, error) {
	conn, _ := c.live()
	res, err := conn.WhoAmI(nil)
	if err != nil {
		return "", err
	}
	return res.AuthzID, nil
}

// ReadReplica is the read-only replica this connection read from before
// a write moved it to the provider, "" when it did not move.
func (c *Conn) ReadReplica() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.replicaURL
}

// leftReplica reports whether conn is the read-only replica's connection
// that a move to the provider replaced.
func (c *Conn) leftReplica(conn *ldap.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.replica != nil && conn == c.replica
}

// trusted returns the URI of URLs or WriteURL that names the same server
// as ref (scheme, host and port; ref's DN and the rest are ignored), or "".
func (c *Conn) trusted(ref string) string {
	for _, u := range append([]string{c.opts.WriteURL}, c.opts.URLs...) {
		if u != "" && SameServer(u, ref) {
			return u
		}
	}
	return ""
}

// SameServer compares two LDAP URIs by scheme, host (without regard to
// case) and port (389 and 636 by default); ldapi URIs by their socket.
func SameServer(a, b string) bool {
	ka, oka := serverKey(a)
	kb, okb := serverKey(b)
	return oka && okb && ka == kb
}

func serverKey(raw string) (string, bool) {
	if rest, ok := strings.CutPrefix(strings.ToLower(raw), "ldapi://"); ok {
		socket, _, _ := strings.Cut(rest, "/")
		return "ldapi://" + socket, true
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" {
		port = map[string]string{"ldap": "389", "ldaps": "636"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(host, port), true
}

// referrals reads the referral URIs of an LDAP result (RFC 4511 4.1.10:
// the [3] element of the result).
func referrals(err error) []string {
	var le *ldap.Error
	if !errors.As(err, &le) || le.Packet == nil || len(le.Packet.Children) < 2 {
		return nil
	}
	var refs []string
	for _, child := range le.Packet.Children[1].Children {
		if child.ClassType != ber.ClassContext || child.Tag != 3 {
			continue
		}
		for _, uri := range child.Children {
			if s, ok := uri.Value.(string); ok {
				refs = append(refs, s)
			} else if uri.Data != nil {
				refs = append(refs, uri.Data.String())
			}
		}
	}
	return refs
}

// failover moves a read whose server died or did not answer to the next
// URI, once per failure: true when the read should be sent again. It does
// not move after a write (the reads stay where the write went), nor with
// a single URI. conn is the connection the read failed on: when another
// read moved already, this one just goes again.
func (c *Conn) failover(conn *ldap.Conn, err error) bool {
	if err == nil || !Unanswered(err) {
		return false
	}
	var le *ldap.Error
	if errors.As(err, &le) && le.ResultCode < ldap.ErrorNetwork {
		return false // an answer from the server
	}
	current, failed := c.live()
	if current != conn {
		return true // moved already (a failover, or a write to the provider)
	}
	if c.onProvider.Load() || len(c.opts.URLs) < 2 {
		return false
	}
	var rest []string
	for i, u := range c.opts.URLs {
		if u == failed {
			rest = append(append(rest, c.opts.URLs[i+1:]...), c.opts.URLs[:i]...)
			break
		}
	}
	if len(rest) == 0 {
		return false
	}
	opts := c.opts
	opts.URLs = rest
	fresh, derr := Dial(opts)
	if derr != nil {
		return false
	}
	c.swap(fresh)
	if c.opts.Note != nil {
		c.opts.Note(fmt.Sprintf("%s stopped answering (%s): reading from %s", failed, ldapclient.Describe(err), fresh.URL))
	}
	return true
}

// asNetwork keeps err for failover when it is not an answer from the
// server (a streamed search reports a lost connection as a plain error).
func asNetwork(err error) error {
	var le *ldap.Error
	if errors.As(err, &le) && le.ResultCode < ldap.ErrorNetwork {
		return nil
	}
	return err
}
