// Package rules holds the business rules a federation's objects must keep:
// the options of a global entitlement, the ranges of the figures, which
// pool an entitlement may hold, a site's preferred sites, the capacity of
// pools and RDS hosts, what a repeated create compares. The write commands
// apply them before writing and lint reports the objects that break them,
// through the same functions, so a value a command refuses is a value lint
// reports.
//
// The package is pure: it takes plain records (package ldapschema) and
// returns violations (for lint and the warnings of a write) or errors of
// type *Error (a write's refusal); it imports neither LDAP access nor cobra.
package rules

import (
	"fmt"
	"strings"
)

// Finding classes (the "check" of a violation, and of the lint finding
// that reports it). They are a stable contract: scripts may filter on them.
const (
	CheckPreferredSelf               = "preferred-site-self"
	CheckPreferredDuplicate          = "preferred-site-duplicate"
	CheckIgnoreHighLoadWithoutPolicy = "ignore-high-load-without-policy"
	CheckIgnoreHighLoadWithoutPrefer = "ignore-high-load-without-preferred-sites"
	CheckPreferredSitesScope         = "preferred-sites-non-any-scope"
	CheckRequireHomeSiteWithoutUse   = "require-home-site-without-use-home-site"
	CheckOptionNotAllowed            = "option-not-allowed"
	CheckPoolInTwoEntitlements       = "pool-in-two-entitlements"
	CheckDedicatedFloatingMismatch   = "dedicated-floating-mismatch"
	CheckPoolTypeMismatch            = "pool-type-mismatch"
	CheckFarmInAnotherPod            = "farm-in-another-pod"
	CheckOutOfRange                  = "out-of-range"
	CheckOverCapacity                = "over-capacity"
)

// The rules only a write applies, to what the command was given (the
// Rule of their errors); lint never reports them.
const (
	RulePoolKind     = "pool-kind"     // a pool's user assignment, farm and figures fit its kind
	RuleGroupMembers = "group-members" // a group is not its own member, each member is named once
	// RuleFederationWideSetting: only the pae-RDS* settings may be set on
	// a pod (docs/storm.md).
	RuleFederationWideSetting = "federation-wide-setting"
)

// Violation is one rule an object breaks.
type Violation struct {
	// Check is the finding class lint reports it under.
	Check string
	// Message says what is wrong, one lower-case line naming the options as
	// the command-line flags spell them.
	Message string
	// Fixes are the alternative flags (of the object's update command) that
	// put it right; empty when no flag can (the fix is in Hint).
	Fixes []string
	// Hint is a fix in words, for violations no flag repairs.
	Hint string
	// Warning marks a violation that is allowed but probably not meant.
	Warning bool
}

// FixText renders the fixes as a hint: "pass --a, or --b".
func (v Violation) FixText() string {
	if len(v.Fixes) == 0 {
		return v.Hint
	}
	return "pass " + strings.Join(v.Fixes, ", or ")
}

// Errors returns the violations that are not warnings.
func Errors(vs []Violation) []Violation { return filter(vs, false) }

// Warnings returns the violations that are warnings.
func Warnings(vs []Violation) []Violation { return filter(vs, true) }

func filter(vs []Violation, warning bool) []Violation {
	var out []Violation
	for _, v := range vs {
		if v.Warning == warning {
			out = append(out, v)
		}
	}
	return out
}

// Error is a write refused by a rule: the one-line message names the
// object and the problem, Hint says how to put it right.
type Error struct {
	// Rule is the rule broken: one of the Check* classes, or of the Rule*
	// names of the rules only a write applies.
	Rule    string
	Message string
	Hint    string
}

func (e *Error) Error() string { return e.Message }

// Refusal returns the error refusing to write object kind name for the
// violations vs that are not warnings, nil when there are none: their
// messages in one line, and the first one's fix as the hint.
func Refusal(kind, name string, vs []Violation) error {
	errs := Errors(vs)
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, v := range errs {
		msgs[i] = v.Message
	}
	return &Error{Rule: errs[0].Check, Hint: errs[0].FixText(),
		Message: fmt.Sprintf("%s %s: %s", kind, name, strings.Join(msgs, "; "))}
}
