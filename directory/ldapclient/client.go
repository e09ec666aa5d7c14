// Package ldapclient is the seam every directory of cpactl meets: the
// Client interface (search, add, modify, rename, delete and transactions)
// that a live connection, an LDIF snapshot and a what-if overlay
// implement, and the errors of LDAP operations that the exit-code mapper
// and the hints read from their types and result codes (package directory
// gives them under their old names).
package ldapclient

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/internal/nearest"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/quote"
)

// Writer is the write half of a Client. Inside a transaction the writes are
// queued and applied together when the transaction ends.
type Writer interface {
	Add(req *ldap.AddRequest) error
	Modify(req *ldap.ModifyRequest) error
	ModifyDN(req *ldap.ModifyDNRequest) error
	Del(req *ldap.DelRequest) error
}

// Client is everything cpactl asks of a directory.
type Client interface {
	Writer
	Search(req *ldap.SearchRequest) (*ldap.SearchResult, error)
	// SearchEach streams the entries a search finds to each, as they
	// arrive: a live connection pages through them (RFC 2696), so memory
	// stays bounded and each page, not the whole scan, is bound by the
	// request timeout. An error from each stops the search and is
	// returned.
	SearchEach(req *ldap.SearchRequest, each func(*ldap.Entry) error) error
	// Transaction runs fn in one LDAP transaction (RFC 5805): the writes fn
	// makes through w are applied all at once or not at all. A read-only
	// client refuses it.
	Transaction(fn func(w Writer) error) error
	Close() error
}

// ErrReadOnly is returned by writes to a snapshot.
var ErrReadOnly = errors.New("an LDIF snapshot (--from) is read-only: run write commands against a server")

// NotFoundError says a named object does not exist (exit code 3).
type NotFoundError struct {
	Kind string // "site", "pod", ...
	Name string
	// Suggestion is the name of that kind nearest to Name, if one is
	// near enough: the hint asks "did you mean" it.
	Suggestion string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s %s does not exist", e.Kind, quote.Name(e.Name))
}

// Hint asks whether the nearest name was meant, when there is one.
func (e *NotFoundError) Hint() string { return nearest.Hint(e.Suggestion) }

// ConflictError says someone else changed an object between our read and
// our write (exit code 5).
type ConflictError struct {
	What string
	// Err is the server's answer, when there is one (a failed assertion,
	// no such object, already exists): errors.As finds its result code.
	Err error
	// Replica is the read-only replica the change was read from, before
	// the write moved to the provider: what it read may only have lagged
	// behind the provider.
	Replica string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s was changed by someone else since it was read", e.What)
}

// Unwrap returns the server's answer.
func (e *ConflictError) Unwrap() error { return e.Err }

// ConnectError says no URI could be reached.
type ConnectError struct {
	URL string
	Err error
}

func (e *ConnectError) Error() string {
	return fmt.Sprintf("cannot reach %s: %v", e.URL, Describe(e.Err))
}

func (e *ConnectError) Unwrap() error { return e.Err }

// OpError is an operation the server refused or did not answer: what was
// being done (Op, e.g. "adding cn=UK,ou=Sites,..."), and the error, which
// keeps its type and LDAP result code for errors.As and the exit-code
// mapper; the message renders it as "insufficient access (50): ...".
type OpError struct {
	Op  string
	Err error
}

func (e *OpError) Error() string { return e.Op + ": " + Describe(e.Err) }

func (e *OpError) Unwrap() error { return e.Err }

// OpErrorf is an *OpError of err, its operation described by format.
func OpErrorf(err error, format string, args ...any) error {
	return &OpError{Op: fmt.Sprintf(format, args...), Err: err}
}

// IsCode reports whether err carries the LDAP result code.
func IsCode(err error, code uint16) bool {
	var le *ldap.Error
	return errors.As(err, &le) && le.ResultCode == code
}

// Describe renders an error without go-ldap's "LDAP Result Code 49
// \"Invalid Credentials\": " prefix style, as "invalid credentials (49): msg".
func Describe(err error) string {
	var le *ldap.Error
	var replica *ReplicaError
	if errors.As(err, &replica) {
		return replica.Error() // it describes the provider's error itself
	}
	var auth *AuthRequiredError
	if errors.As(err, &auth) {
		return auth.Error() // it describes the server's answer itself
	}
	if !errors.As(err, &le) {
		return err.Error()
	}
	if le.ResultCode == ldap.ErrorNetwork && le.Err != nil {
		return le.Err.Error()
	}
	text, ok := ldap.LDAPResultCodeMap[le.ResultCode]
	if !ok {
		text = "result"
	}
	msg := fmt.Sprintf("%s (%d)", strings.ToLower(text), le.ResultCode)
	if le.Err != nil && le.Err.Error() != "" {
		msg += ": " + le.Err.Error()
	}
	return msg
}

// AnyEntry matches every entry: AnyEntry.
const AnyEntry = "(" + ldapschema.AttrObjectClass + "=*)"

// BatchSize is how many decoded entries go to the consumer at once.
const BatchSize = 256

// ReplicaError says a write reached a read-only replica and could not be
// sent to its provider (exit code 1, or the code of the provider's own
// error, such as a failed bind, which it wraps).
type ReplicaError struct {
	Replica  string // the replica's URI
	Referral string // the URI the replica referred the write to ("" for none)
	Provider string // the URI cpactl tried to write to ("" when refused)
	Err      error  // why the provider could not take it, when tried
}

func (e *ReplicaError) Error() string {
	switch {
	case e.Provider != "":
		return fmt.Sprintf("the write must go to the provider %s (%s is a read-only replica), but %s", e.Provider, e.Replica, Describe(e.Err))
	case e.Referral != "":
		return fmt.Sprintf("%s is a read-only replica and referred the write to %s, which is not in -H or --write-url: refused (cpactl sends its bind only to servers it was given)", e.Replica, e.Referral)
	}
	return fmt.Sprintf("%s is a read-only replica and names no provider (shadow context; no update referral)", e.Replica)
}

func (e *ReplicaError) Unwrap() error { return e.Err }

// Hint says how to fix it.
func (e *ReplicaError) Hint() string {
	switch {
	case e.Provider != "":
		return "start the provider or wait for it to answer; reads still work from the replicas"
	case e.Referral != "":
		return fmt.Sprintf("if %s is your provider, pass --write-url %s (or list it in -H)", e.Referral, ServerOf(e.Referral))
	}
	return "pass the provider with --write-url ldap://PROVIDER, or set updateref on the replica"
}

// AuthRequiredError says the server refused a write because of who the
// connection is (exit code 4, as every refusal: it keeps the LDAP result
// code): "strong authentication required" (8), which slapd answers an
// anonymous write, or insufficient access (50) on an anonymous
// connection. Anonymous, the fix is to bind; bound, it is a stronger
// authentication (TLS, SASL) than the server's security settings got.
type AuthRequiredError struct {
	Anonymous bool  // the connection did not bind
	Err       error // the server's answer
}

func (e *AuthRequiredError) Error() string {
	if e.Anonymous {
		return "authentication required (the connection is anonymous): " + Describe(e.Err)
	}
	return "the server asks for a stronger authentication: " + Describe(e.Err)
}

func (e *AuthRequiredError) Unwrap() error { return e.Err }

// Hint says how to fix it.
func (e *AuthRequiredError) Hint() string {
	if e.Anonymous {
		return "bind as an account that may write: -D DN with -W (or -y FILE)"
	}
	return "connect as the server's security settings ask: TLS (ldaps:// or -Z), or SASL EXTERNAL over ldapi://"
}

// ServerOf cuts the DN and the rest off an LDAP URI.
func ServerOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	return u.Scheme + "://" + u.Host
}
