package ldapschema

import (
	"strings"
	"testing"
)

// TestRoleToWrite: one row per rule of the ACLs, as refusals name them.
func TestRoleToWrite(t *testing.T) {
	d := DIT{Base: DefaultBase}
	for _, tc := range []struct {
		rule  string
		dn    string
		attrs []string
		want  Role
	}{
		{"a session record is the operator's", d.Session("s1"), nil, RoleOperator},
		{"a session's state too", d.Session("s1"), []string{AttrSessionState}, RoleOperator},
		{"a transaction placeholder under ou=Sessions", "ou=cpactl-txn-1," + d.Sessions(), nil, RoleOperator},
		{"a pod assignment", d.Assignment(d.User("bob"), d.Entitlement("E")), nil, RoleOperator},
		{"the container itself is not", d.Sessions(), nil, RoleAdmin},
		{"a pool's sessions", d.Pool("P", "pool"), []string{AttrSessions}, RoleOperator},
		{"a pool's sessions and assigned, any case", d.Pool("P", "pool"), []string{"PAE-SESSIONS", AttrAssigned}, RoleOperator},
		{"a host's load", d.Host("P", "F", "h"), []string{AttrLoadIndex, AttrConnectingSessions, AttrSessions}, RoleOperator},
		{"a figure and a description", d.Pool("P", "pool"), []string{AttrSessions, AttrDescription}, RoleAdmin},
		{"a pool's capacity", d.Pool("P", "pool"), []string{"pae-Capacity"}, RoleAdmin},
		{"creating a pool", d.Pool("P", "pool"), nil, RoleAdmin},
		{"a site's preferred sites", d.Site("India"), []string{AttrPreferredSite}, RoleAdmin},
		{"the settings", d.Settings(), []string{AttrLoadThresholdForSite}, RoleAdmin},
		{"a role group", d.RoleGroup(RoleHelpdesk), []string{AttrMember}, RoleAdmin},
		{"the live figures outside ou=Pods", d.Site("UK"), []string{AttrSessions}, RoleAdmin},
	} {
		if got := d.RoleToWrite(tc.dn, tc.attrs); got != tc.want {
			t.Errorf("%s: %s %v needs %q, want %q", tc.rule, tc.dn, tc.attrs, got, tc.want)
		}
	}
}

func TestRolesAllow(t *testing.T) {
	for _, tc := range []struct {
		held, needed Role
		want         bool
	}{
		{RoleAdmin, RoleAdmin, true}, {RoleAdmin, RoleOperator, true}, {RoleAdmin, RoleHelpdesk, true},
		{RoleOperator, RoleAdmin, false}, {RoleOperator, RoleOperator, true}, {RoleOperator, RoleHelpdesk, true},
		{RoleHelpdesk, RoleOperator, false}, {RoleHelpdesk, RoleHelpdesk, true},
		{"", RoleHelpdesk, false}, {"", "", false},
	} {
		if got := tc.held.Allows(tc.needed); got != tc.want {
			t.Errorf("%q allows %q: %v, want %v", tc.held, tc.needed, got, tc.want)
		}
	}
	if Highest([]Role{RoleHelpdesk, RoleAdmin, RoleOperator}) != RoleAdmin || Highest(nil) != "" {
		t.Error("Highest")
	}
	for _, name := range []string{"admin", "Operator", "HELPDESK"} {
		if _, ok := ParseRole(name); !ok {
			t.Errorf("ParseRole(%q) fails", name)
		}
	}
	if _, ok := ParseRole("boss"); ok {
		t.Error("ParseRole(boss) succeeds")
	}
}

func TestDescribe(t *testing.T) {
	d := DIT{Base: DefaultBase}
	for dn, want := range map[string]string{
		d.Base:                        "the base " + d.Base,
		d.Sites():                     "the container ou=Sites",
		d.Site("UK"):                  "site UK",
		d.Pool("London-1", "lon"):     "lon of pod London-1",
		d.Host("L", "farm", "h1"):     "rds host h1 of farm farm in pod L",
		d.Settings():                  "the global settings cn=Common",
		d.RoleGroup(RoleAdmin):        "role group cpactl-admins",
		d.Roles():                     "the role groups' container ou=Roles",
		d.Session("s1"):               "session s1",
		"uid=x,ou=Accounts," + d.Base: "uid=x,ou=Accounts," + d.Base,
	} {
		if got := d.Describe(dn); got != want {
			t.Errorf("Describe(%s) = %q, want %q", dn, got, want)
		}
	}
}

// TestACLOrder: the rules come in the order slapd needs them (the first
// that matches an entry wins): passwords, the role groups, the admins,
// the operators' containers and figures, the readers last; every
// container a role other than admin writes has its rule.
func TestACLOrder(t *testing.T) {
	d := DIT{Base: DefaultBase}
	conf := d.ACLConf(ACLOptions{Replicator: "uid=r," + DefaultBase})
	order := []string{
		`access to dn.base=""`,
		`access to dn.subtree="cn=schema,cn=config"`,
		`access to *` + "\n" + `    by dn.exact="uid=r,` + DefaultBase + `" read`,
		"access to attrs=userPassword",
		`access to dn.subtree="` + d.Roles() + `"`,
		`access to dn.subtree="` + DefaultBase + `"` + "\n    by group.exact=\"" + d.RoleGroup(RoleAdmin) + "\" write",
		`access to dn.base="` + d.Sessions() + `" attrs=children`,
		`access to dn.children="` + d.Assignments() + `"`,
		`access to dn.subtree="` + d.Pods() + `" attrs=` + strings.Join(LiveFigures, ","),
		"    by users disclose\n    by * none",
	}
	at := 0
	for _, want := range order {
		i := strings.Index(conf[at:], want)
		if i < 0 {
			t.Fatalf("ACLConf lacks, after position %d:\n%s\n---\n%s", at, want, conf)
		}
		at += i + len(want)
	}
	if strings.Contains(d.ACLConf(ACLOptions{WithoutCpactlSchema: true}), "pae-") {
		t.Error("WithoutCpactlSchema still names cpactl's attributes")
	}
	if strings.Contains(d.ACLConf(ACLOptions{}), "dn.exact=") {
		t.Error("no replicator, yet a dn.exact rule")
	}
}
