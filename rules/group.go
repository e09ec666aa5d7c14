package rules

import (
	"fmt"
	"strings"

	"github.com/cpactl/cpactl/ldapschema"
)

// GroupMember is a member given to a group: its kind ("user", "group",
// "computer"), its name as stored and its DN.
type GroupMember struct {
	Kind, Name, DN string
}

// GroupMembers checks the members given to one group, one at a time as
// they are found: the group is never its own member, and each member is
// given once (compared as DNs). O(1) a member.
type GroupMembers struct {
	group, groupDN string
	seen           map[string]bool
}

// NewGroupMembers starts the check for the group named group, whose DN is
// groupDN ("" when it does not exist yet).
func NewGroupMembers(group, groupDN string) *GroupMembers {
	return &GroupMembers{group: group, groupDN: groupDN, seen: map[string]bool{}}
}

// Add checks the next member given; a *Error when it breaks a rule.
func (c *GroupMembers) Add(m GroupMember) error {
	if c.groupDN != "" && ldapschema.EqualDN(m.DN, c.groupDN) || m.Kind == "group" && strings.EqualFold(m.Name, c.group) {
		return &Error{Rule: RuleGroupMembers, Message: fmt.Sprintf("group %s cannot be a member of itself", c.group)}
	}
	k := ldapschema.NormalizeDN(m.DN)
	if c.seen[k] {
		return &Error{Rule: RuleGroupMembers, Hint: "name each member once",
			Message: fmt.Sprintf("%s %s is given twice", m.Kind, m.Name)}
	}
	c.seen[k] = true
	return nil
}
