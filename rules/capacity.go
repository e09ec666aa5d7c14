package rules

import (
	"fmt"

	"github.com/cpactl/cpactl/ldapschema"
)

// PoolCapacity applies the capacity rule to the pool a write would store:
// counters above its capacity (PoolOvercommit) are refused, unless
// allowOvercommit (--allow-overcommit), which turns the violation into a
// warning for the command to print. O(1).
func PoolCapacity(p ldapschema.Pool, allowOvercommit bool) (warning *Violation, err error) {
	return overcommit(PoolOvercommit(p), allowOvercommit, fmt.Sprintf("pool %s", p.Name),
		"lower the figure, raise --capacity, or pass --allow-overcommit")
}

// HostCapacity applies the capacity rule to the RDS host a write would
// store in farm f: more sessions than the farm's limit per host
// (HostOvercommit) are refused, unless allowOvercommit, which turns the
// violation into a warning. O(1).
func HostCapacity(h ldapschema.Host, f ldapschema.Farm, allowOvercommit bool) (warning *Violation, err error) {
	return overcommit(HostOvercommit(h, f), allowOvercommit, fmt.Sprintf("rds host %s", h.Name),
		"lower --sessions, raise the farm's --max-sessions-per-host, or pass --allow-overcommit")
}

func overcommit(v *Violation, allow bool, object, hint string) (*Violation, error) {
	switch {
	case v == nil:
		return nil, nil
	case allow:
		return v, nil
	}
	return nil, &Error{Rule: v.Check, Message: object + ": " + v.Message, Hint: hint}
}
