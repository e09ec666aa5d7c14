package rules

import (
	"fmt"
	"strings"

	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/quote"
)

// PoolKind checks the user assignment and farm given for a new pool p (of
// p.Kind, in p.Pod): a desktop pool is dedicated or floating (one of them,
// fixed at creation); rds-desktop and application pools are floating and
// need a farm. O(1).
func PoolKind(p ldapschema.Pool, dedicated, floating, farmGiven bool) error {
	refuse := func(hint, format string, args ...any) error {
		return &Error{Rule: RulePoolKind, Hint: hint, Message: fmt.Sprintf(format, args...)}
	}
	desktop := p.Kind == ldapschema.KindDesktop
	switch {
	case dedicated && floating:
		return refuse("pass one of --dedicated and --floating", "--dedicated and --floating contradict each other")
	case desktop && !dedicated && !floating:
		return refuse("pass --dedicated or --floating (it cannot be changed later)", "desktop pool %s needs --dedicated or --floating", p.Name)
	case !desktop && dedicated:
		return refuse("drop --dedicated: rds-desktop and application pools are floating",
			"--dedicated is for desktop pools; pool %s is %s", p.Name, kindFlag(p.Kind))
	case !desktop && !farmGiven:
		return refuse(fmt.Sprintf("pass --farm FARM, a farm of pod %s", quote.Shell(p.Pod)), "%s pool %s needs --farm", kindFlag(p.Kind), p.Name)
	}
	return nil
}

// kindFlag renders a pool kind as --kind spells it: rds-desktop.
func kindFlag(kind string) string {
	return strings.ReplaceAll(strings.ToLower(kind), "_", "-")
}

// PoolOwners checks the entitlements that hold a pool (their names): a
// pool belongs to at most one. O(1), plus the list in the message.
func PoolOwners(pool string, entitlements []string) *Violation {
	if len(entitlements) < 2 {
		return nil
	}
	return &Violation{Check: CheckPoolInTwoEntitlements,
		Message: fmt.Sprintf("pool %s is in %d entitlements (%s): a pool belongs to at most one",
			pool, len(entitlements), strings.Join(entitlements, ", "))}
}

// AddPoolFits checks that pool may join entitlement ge (PoolFits): a
// *Error saying why not, or nil.
func AddPoolFits(ge ldapschema.Entitlement, pool ldapschema.Pool) error {
	if v := PoolFits(ge, pool); v != nil {
		return &Error{Rule: v.Check, Hint: v.Hint,
			Message: fmt.Sprintf("cannot add pool %s to entitlement %s: %s", pool.Name, ge.Name, v.Message)}
	}
	return nil
}

// AddPoolOwner checks that pool, which the entitlements holders hold
// today, may join entitlement ge without breaking PoolOwners: a *Error
// naming the entitlement that holds it, or nil.
func AddPoolOwner(ge ldapschema.Entitlement, pool ldapschema.Pool, holders []ldapschema.Entitlement) error {
	owners := []string{ge.Name}
	var other string
	for _, h := range holders {
		if !ldapschema.EqualDN(h.DN, ge.DN) {
			owners = append(owners, h.Name)
			if other == "" {
				other = h.Name
			}
		}
	}
	if PoolOwners(pool.Name, owners) == nil {
		return nil
	}
	return &Error{Rule: CheckPoolInTwoEntitlements,
		Hint: fmt.Sprintf("remove it there first: cpactl entitlement remove-pool %s %s", quote.Shell(other), quote.Shell(pool.Name)),
		Message: fmt.Sprintf("cannot add pool %s to entitlement %s: it belongs to entitlement %s, and a pool belongs to at most one",
			pool.Name, ge.Name, other)}
}

// PoolFigures checks the figures given for pool p (given reports whether
// the flag of that name was: "farm", "capacity", "sessions", "assigned")
// against its kind: a desktop pool has no farm and, when floating, no
// assigned machines; a farm-backed pool's figures come from its farm's
// hosts. O(1).
func PoolFigures(p ldapschema.Pool, given func(field string) bool) error {
	refuse := func(hint, format string, args ...any) error {
		return &Error{Rule: RulePoolKind, Hint: hint, Message: fmt.Sprintf(format, args...)}
	}
	if p.Kind == ldapschema.KindDesktop {
		if given("farm") {
			return refuse("drop --farm: desktop pools are virtual machines, not farm sessions",
				"--farm is for rds-desktop and application pools; pool %s is a desktop pool", p.Name)
		}
		if given("assigned") && !p.Dedicated {
			return refuse("drop --assigned: floating pools assign no machines",
				"--assigned is for dedicated desktop pools; pool %s is floating", p.Name)
		}
		return nil
	}
	for _, name := range []string{"capacity", "sessions", "assigned"} {
		if given(name) {
			return refuse(fmt.Sprintf("drop --%s: the figures of a farm-backed pool come from its farm's hosts (cpactl host set-load)", name),
				"--%s is for desktop pools; pool %s is %s", name, p.Name, kindFlag(p.Kind))
		}
	}
	return nil
}
