// Package directory is cpactl's access to the LDAP directory: a narrow
// Client interface (search, add, modify, rename, delete and transactions)
// with two implementations, a live connection (Dial) and a read-only LDIF
// snapshot (LoadSnapshot), and a Store that reads and writes cpactl's
// objects through either.
//
// Nothing here imports cobra; nothing above it imports go-ldap's Conn.
package directory

import "github.com/cpactl/cpactl/directory/ldapclient"

// The client seam and the errors of LDAP operations are package
// ldapclient's (the snapshot and the overlay implement the seam below this
// package); here under the names the rest of cpactl uses.
type (
	// Writer is the write half of a Client (ldapclient.Writer).
	Writer = ldapclient.Writer
	// Client is everything cpactl asks of a directory (ldapclient.Client).
	Client = ldapclient.Client
	// NotFoundError says a named object does not exist (exit code 3).
	NotFoundError = ldapclient.NotFoundError
	// ConflictError says someone else changed an object between our read
	// and our write (exit code 5).
	ConflictError = ldapclient.ConflictError
	// ConnectError says no URI could be reached.
	ConnectError = ldapclient.ConnectError
	// OpError is an operation the server refused or did not answer.
	OpError = ldapclient.OpError
	// ReplicaError says a write reached a read-only replica and could not
	// be sent to its provider.
	ReplicaError = ldapclient.ReplicaError
	// AuthRequiredError says the server refused a write because of who the
	// connection is (exit code 4).
	AuthRequiredError = ldapclient.AuthRequiredError
)

// ErrReadOnly is returned by writes to a snapshot.
var ErrReadOnly = ldapclient.ErrReadOnly

// AnyEntry matches every entry.
const AnyEntry = ldapclient.AnyEntry

// IsCode reports whether err carries the LDAP result code.
func IsCode(err error, code uint16) bool { return ldapclient.IsCode(err, code) }
