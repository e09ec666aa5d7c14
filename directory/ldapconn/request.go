package ldapconn

import "github.com/go-ldap/ldap/v3"

// Request is one write request as the transport sends it: exactly one of
// its fields is set (none: nothing to send). A plan's Write turns into
// one; a transaction's sender encodes and sends requests and reports a
// result for each, knowing nothing of plans.
type Request struct {
	Add    *ldap.AddRequest
	Modify *ldap.ModifyRequest
	Rename *ldap.ModifyDNRequest
	Del    *ldap.DelRequest
}
