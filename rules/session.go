package rules

import (
	"fmt"
	"strings"

	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/quote"
)

// The rules only a write applies to a session record or a pod assignment.
const (
	RuleSessionPool    = "session-pool"           // a session's pool is in its pod and its entitlement
	RuleSessionHost    = "session-host"           // a session's RDS host serves its pool
	RuleAssignmentType = "assignment-entitlement" // pod assignments are for dedicated desktop entitlements
)

// SessionPool checks the pool a session record names: it is in the
// session's pod and one of its entitlement's pools. O(pools of ge).
func SessionPool(ge ldapschema.Entitlement, pod ldapschema.Pod, pool ldapschema.Pool) error {
	if !strings.EqualFold(pool.Pod, pod.Name) {
		return &Error{Rule: RuleSessionPool,
			Hint:    fmt.Sprintf("pass --pod %s, or a pool of pod %s", quote.Shell(pool.Pod), quote.Shell(pod.Name)),
			Message: fmt.Sprintf("pool %s is in pod %s, not %s", pool.Name, pool.Pod, pod.Name)}
	}
	for _, dn := range ge.PoolDNs {
		if pool.DN != "" && ldapschema.EqualDN(dn, pool.DN) {
			return nil
		}
	}
	return &Error{Rule: RuleSessionPool,
		Hint:    fmt.Sprintf("cpactl entitlement add-pool %s %s", quote.Shell(ge.Name), quote.Shell(pool.Name)),
		Message: fmt.Sprintf("pool %s is not associated with entitlement %s", pool.Name, ge.Name)}
}

// SessionHost checks the RDS host a session record names: its pool is
// farm-backed and served by the host's farm. O(1).
func SessionHost(pool ldapschema.Pool, h ldapschema.Host) error {
	if pool.Kind == ldapschema.KindDesktop {
		return &Error{Rule: RuleSessionHost, Hint: "drop --host: desktop pools have no RDS hosts",
			Message: fmt.Sprintf("pool %s is a desktop pool: a session there has no RDS host", pool.Name)}
	}
	if !ldapschema.EqualDN(ldapschema.ParentOf(h.DN), pool.FarmDN) {
		return &Error{Rule: RuleSessionHost,
			Hint: fmt.Sprintf("pass a host of farm %s (cpactl host list --farm %s)", quote.Shell(pool.Farm), quote.Shell(pool.Farm)),
			Message: fmt.Sprintf("rds host %s is in farm %s, but pool %s is served by farm %s",
				h.Name, h.Farm, pool.Name, pool.Farm)}
	}
	return nil
}

// AssignmentEntitlement checks the entitlement of a pod assignment: only
// dedicated desktop entitlements have them. O(1).
func AssignmentEntitlement(ge ldapschema.Entitlement) error {
	if ge.Type == ldapschema.TypeDesktop && ge.Dedicated {
		return nil
	}
	return &Error{Rule: RuleAssignmentType, Hint: "pod assignments are made for dedicated desktop entitlements only",
		Message: fmt.Sprintf("entitlement %s is not a dedicated desktop entitlement", ge.Name)}
}
