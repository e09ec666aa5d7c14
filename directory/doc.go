// Package directory is cpactl's typed store over the LDAP directory: a
// Store that reads and writes cpactl's objects through any
// ldapclient.Client (a live ldapconn.Conn, a read-only snapshot.Snapshot
// or a what-if snapshot.Overlay), with its write plans and transactions,
// the broker's view of the federation (brokerview.go), integrity, history
// and replication reads.
//
// Nothing here imports cobra; nothing above it imports go-ldap's Conn.
package directory
