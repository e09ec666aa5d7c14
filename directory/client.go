// Package directory is cpactl's access to the LDAP directory: a narrow
// Client interface (search, add, modify, rename, delete and transactions;
// package ldapclient's) with three implementations, a live connection
// (Dial, package ldapconn's), a read-only LDIF snapshot (LoadSnapshot) and
// a what-if overlay (NewOverlay), both package snapshot's; and a Store that
// reads and writes cpactl's objects through any of them, with its write
// plans and transactions.
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

// Search filters (ldapclient's), their values escaped.

// Filter builds "(attr=value)" with value escaped.
func Filter(attr, value string) string { return ldapclient.Filter(attr, value) }

// And combines filters.
func And(filters ...string) string { return ldapclient.And(filters...) }

// Or combines filters.
func Or(filters ...string) string { return ldapclient.Or(filters...) }

// ChildrenFilter matches the entries immediately below dn (entryDN with
// dnOneLevelMatch).
func ChildrenFilter(dn string) string { return ldapclient.ChildrenFilter(dn) }

// ClassFilter is "(objectClass=class)".
func ClassFilter(class string) string { return ldapclient.ClassFilter(class) }

// Present is "(attr=*)": attr holds a value.
func Present(attr string) string { return ldapclient.Present(attr) }

// Not negates a filter.
func Not(filter string) string { return ldapclient.Not(filter) }

// Prefix is "(attr=value*)": a value of attr starts with value (escaped).
func Prefix(attr, value string) string { return ldapclient.Prefix(attr, value) }

// Suffix is "(attr=*value)": a value of attr ends with value (escaped).
func Suffix(attr, value string) string { return ldapclient.Suffix(attr, value) }
