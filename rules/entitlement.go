package rules

import (
	"fmt"
	"strings"

	"github.com/cpactl/cpactl/ldapschema"
)

// RuleEntitlementKind is the rule on an entitlement's type and user
// assignment (only a write applies it, to what the command was given).
const RuleEntitlementKind = "entitlement-kind"

// EntitlementKind checks the type (newType, "" when not given) and user
// assignment (--dedicated, --floating) given for entitlement ge, as stored
// or, when creating, as being built: an entitlement has a type; dedicated
// or floating is for desktop entitlements, which need one at creation;
// neither changes after creation (repeating it is fine). O(1).
func EntitlementKind(ge ldapschema.Entitlement, creating bool, newType string, dedicated, floating bool) error {
	const fixed = "create another entitlement and move the members and pools (`cpactl entitlement create --help`)"
	refuse := func(hint, format string, args ...any) error {
		return &Error{Rule: RuleEntitlementKind, Hint: hint, Message: fmt.Sprintf(format, args...)}
	}
	t := ge.Type
	if newType != "" {
		if !creating && newType != ge.Type {
			return refuse(fixed, "entitlement %s is a %s entitlement: its type is fixed at creation", ge.Name, strings.ToLower(ge.Type))
		}
		t = newType
	}
	if creating && t == "" {
		return refuse("pass --type desktop or --type application", "entitlement %s needs --type", ge.Name)
	}
	switch {
	case (dedicated || floating) && t != ldapschema.TypeDesktop:
		return refuse("drop --dedicated/--floating: application entitlements have no user assignment",
			"--dedicated and --floating are for desktop entitlements only")
	case (dedicated || floating) && !creating && dedicated != ge.Dedicated:
		return refuse(fixed, "entitlement %s is %s: dedicated or floating is fixed at creation", ge.Name, assignmentWords(ge.Dedicated))
	case !dedicated && !floating && creating && t == ldapschema.TypeDesktop:
		return refuse("pass --dedicated or --floating (it cannot be changed later)",
			"desktop entitlement %s needs --dedicated or --floating", ge.Name)
	}
	return nil
}
