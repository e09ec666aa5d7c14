package ldapschema

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cpactl/cpactl/internal/objkind"
)

// Who may do what: cpactl's three roles, after Horizon's own
// (docs/access.md). slapd enforces them with the ACLs of acl.go, which are
// generated from what this file says; cpactl never decides access itself.
// It reads the role groups only to say who the connection is (whoami)
// and, when slapd refuses something, which role would have allowed it.

// Role is one of cpactl's roles, as named on the command line.
type Role string

// The roles, from the least to the most allowed. Each allows what the
// ones before it allow.
const (
	// RoleHelpdesk reads everything (Horizon: Administrators (Read only),
	// Help Desk Administrators (Read Only)).
	RoleHelpdesk Role = "helpdesk"
	// RoleOperator reads everything and writes the global sessions and
	// the live figures a feed keeps (Horizon: Manage Global Sessions).
	RoleOperator Role = "operator"
	// RoleAdmin writes everything, the role groups included (Horizon:
	// Administrators).
	RoleAdmin Role = "admin"
)

// RoleDefinition describes a role: its group and what it allows.
type RoleDefinition struct {
	Role Role
	// Group is the cn of the role's group under ou=Roles (DIT.RoleGroup).
	Group string
	// Horizon names Horizon's roles and privileges it stands for.
	Horizon string
	// May says in one line what it allows beyond the roles before it.
	May string
}

// Roles are the role definitions, from the least to the most allowed.
var Roles = []RoleDefinition{
	{Role: RoleHelpdesk, Group: "cpactl-helpdesk",
		Horizon: "Administrators (Read only), Help Desk Administrators (Read Only)",
		May:     "read the whole federation: list, show, resolve, loads, impact, lint, export, diff, status"},
	{Role: RoleOperator, Group: "cpactl-operators",
		Horizon: "Manage Global Sessions (Help Desk Administrators), plus the live figures a feed writes",
		May:     "record and end sessions, set and delete pod assignments, set the live figures (host set-load, pool update --sessions/--assigned)"},
	{Role: RoleAdmin, Group: "cpactl-admins",
		Horizon: "Administrators (Manage Cloud Pod Architecture, Manage Global Configuration and Policies, Manage Roles and Permissions)",
		May:     "change everything else: init, schema install, sites, pods, pools, farms, hosts, entitlements, home sites, users, groups, settings, apply --prune, the role groups and passwords"},
}

// ParseRole returns the role named name (admin, operator, helpdesk).
func ParseRole(name string) (Role, bool) {
	for _, d := range Roles {
		if strings.EqualFold(name, string(d.Role)) {
			return d.Role, true
		}
	}
	return "", false
}

// RoleNames lists the roles' names, from the least to the most allowed.
func RoleNames() []string {
	out := make([]string, len(Roles))
	for i, d := range Roles {
		out[i] = string(d.Role)
	}
	return out
}

// Definition returns r's definition.
func (r Role) Definition() RoleDefinition {
	for _, d := range Roles {
		if d.Role == r {
			return d
		}
	}
	panic(fmt.Sprintf("ldapschema: unknown role %q", string(r)))
}

// rank orders the roles: helpdesk 1, operator 2, admin 3; 0 for none.
func (r Role) rank() int {
	for i, d := range Roles {
		if d.Role == r {
			return i + 1
		}
	}
	return 0
}

// Allows reports whether holding r allows what needed needs (r is needed
// or a role after it).
func (r Role) Allows(needed Role) bool { return r.rank() >= needed.rank() && r.rank() > 0 }

// Highest returns the most allowed of roles ("" for none).
func Highest(roles []Role) Role {
	var top Role
	for _, r := range roles {
		if r.rank() > top.rank() {
			top = r
		}
	}
	return top
}

// Roles is the container of the role groups, ou=Roles,<base>. It is not
// part of the federation: export, diff, apply and lint leave it alone,
// and `cpactl init --roles` creates it.
func (d DIT) Roles() string { return d.under("ou=Roles") }

// RoleGroup is the DN of r's group.
func (d DIT) RoleGroup(r Role) string {
	return RDN(AttrCN, r.Definition().Group) + "," + d.Roles()
}

// Classes and attributes of the role groups and of service accounts.
const (
	ClassGroupOfNames         = "groupOfNames"
	ClassAccount              = "account"
	ClassSimpleSecurityObject = "simpleSecurityObject"
	AttrUserPassword          = "userPassword"
)

// NoMember is the placeholder member every role group keeps (the empty
// DN, which names no account): groupOfNames must hold a member, and a role
// may have none. Nobody binds as the empty DN (an anonymous connection is
// no member: slapd's group and set checks give it no identity).
const NoMember = ""

// LiveFigures are the attributes a feed writes (the operator role): the
// sessions and assigned machines of a pool, the load of an RDS host.
var LiveFigures = []string{AttrSessions, AttrAssigned, AttrLoadIndex, AttrConnectingSessions}

// operatorContainers are the containers whose entries the operator role
// creates, changes and deletes whole: session records and pod assignments.
func (d DIT) operatorContainers() []string { return []string{d.Sessions(), d.Assignments()} }

// RoleToWrite returns the role that may write the entry dn (create,
// delete or rename it when attrs is empty, else change attrs): operator
// for the entries below ou=Sessions and ou=Assignments and for the live
// figures below ou=Pods, admin for everything else. The ACLs of acl.go
// say the same to slapd.
func (d DIT) RoleToWrite(dn string, attrs []string) Role {
	for _, c := range d.operatorContainers() {
		if IsUnder(dn, c) && !EqualDN(dn, c) {
			return RoleOperator
		}
	}
	if len(attrs) > 0 && IsUnder(dn, d.Pods()) && !EqualDN(dn, d.Pods()) {
		for _, a := range attrs {
			if !slices.ContainsFunc(LiveFigures, func(l string) bool { return strings.EqualFold(l, a) }) {
				return RoleAdmin
			}
		}
		return RoleOperator
	}
	return RoleAdmin
}

// RoleToRead is the role that may read the federation.
const RoleToRead = RoleHelpdesk

// Two cells of the table that are not roles.
const (
	// Anyone marks a command every identity may run, anonymous included:
	// it does not read the directory, or reads only what slapd shows
	// anyone (the root DSE and the subschema).
	Anyone Role = "anyone"
	// AnyAccount marks a command every bound account may run, whatever
	// its roles; anonymous may not.
	AnyAccount Role = "any account"
)

// CommandAccess is one cell of the role x command table: the least role
// that may run a command (Case says which invocation, for a command whose
// flags decide), against a federation `cpactl init --roles` set up.
type CommandAccess struct {
	Command string // the command path without "cpactl": "site list"
	Case    string // "" for every invocation, else which flags
	Needs   Role   // helpdesk, operator, admin, AnyAccount or Anyone
	// Except are roles that Needs would allow but that may not run it
	// (the history: not the operator role, a feed's service account).
	Except []Role
	Why    string // for Anyone, and for a cell that needs saying
}

// Allowed reports whether holding r may run the command.
func (c CommandAccess) Allowed(r Role) bool {
	return r.Allows(c.Needs) && !slices.Contains(c.Except, r)
}

// HistoryExcept are the roles that do not read the history although they
// read the federation: operators (a feed's service account), so that the
// log stays with the admin and the help desk (acl.go's accessLogACL).
var HistoryExcept = []Role{RoleOperator}

// CommandRoles is the role x command table: what each command needs. The
// matrix test (cmd/cpactl/roles_test.go) runs every command of the tree
// as each role, a bound account with no role and anonymous, against slapd
// with the ACLs of acl.go, and fails on a command missing here.
var CommandRoles = []CommandAccess{
	{Command: "init", Needs: RoleAdmin, Why: "creates what is missing (only the root DN can create the base of an empty database); where nothing is missing it writes nothing, and any reader sees `unchanged`"},
	{Command: "init", Case: "--roles", Needs: RoleAdmin, Why: "as init, with the role groups"},
	{Command: "schema print", Needs: Anyone, Why: "prints what cpactl carries"},
	{Command: "schema install", Needs: RoleAdmin, Why: "writes cn=schema,cn=config"},
	{Command: "schema check", Needs: Anyone, Why: "reads the subschema, which slapd shows anyone"},
	{Command: "settings show", Needs: RoleHelpdesk},
	{Command: "settings set", Needs: RoleAdmin},
	{Command: "settings reset", Needs: RoleAdmin},
	{Command: "site list", Needs: RoleHelpdesk},
	{Command: "site show", Needs: RoleHelpdesk},
	{Command: "site create", Needs: RoleAdmin},
	{Command: "site update", Needs: RoleAdmin},
	{Command: "site delete", Needs: RoleAdmin},
	{Command: "site preferred", Case: "--set", Needs: RoleAdmin},
	{Command: "site preferred", Case: "--show", Needs: RoleHelpdesk},
	{Command: "site graph", Needs: RoleHelpdesk},
	{Command: "pod list", Needs: RoleHelpdesk},
	{Command: "pod show", Needs: RoleHelpdesk},
	{Command: "pod create", Needs: RoleAdmin},
	{Command: "pod update", Needs: RoleAdmin},
	{Command: "pod delete", Needs: RoleAdmin},
	{Command: "cs list", Needs: RoleHelpdesk},
	{Command: "cs show", Needs: RoleHelpdesk},
	{Command: "cs create", Needs: RoleAdmin},
	{Command: "cs update", Needs: RoleAdmin},
	{Command: "cs delete", Needs: RoleAdmin},
	{Command: "pool list", Needs: RoleHelpdesk},
	{Command: "pool show", Needs: RoleHelpdesk},
	{Command: "pool create", Needs: RoleAdmin},
	{Command: "pool update", Case: "--sessions/--assigned", Needs: RoleOperator},
	{Command: "pool update", Case: "--capacity", Needs: RoleAdmin},
	{Command: "pool delete", Needs: RoleAdmin},
	{Command: "farm list", Needs: RoleHelpdesk},
	{Command: "farm show", Needs: RoleHelpdesk},
	{Command: "farm create", Needs: RoleAdmin},
	{Command: "farm update", Needs: RoleAdmin},
	{Command: "farm delete", Needs: RoleAdmin},
	{Command: "host list", Needs: RoleHelpdesk},
	{Command: "host show", Needs: RoleHelpdesk},
	{Command: "host create", Needs: RoleAdmin},
	{Command: "host update", Needs: RoleAdmin},
	{Command: "host set-load", Needs: RoleOperator},
	{Command: "host delete", Needs: RoleAdmin},
	{Command: "entitlement list", Needs: RoleHelpdesk},
	{Command: "entitlement show", Needs: RoleHelpdesk},
	{Command: "entitlement create", Needs: RoleAdmin},
	{Command: "entitlement update", Needs: RoleAdmin},
	{Command: "entitlement delete", Needs: RoleAdmin},
	{Command: "entitlement members", Needs: RoleHelpdesk},
	{Command: "entitlement add-member", Needs: RoleAdmin},
	{Command: "entitlement remove-member", Needs: RoleAdmin},
	{Command: "entitlement add-pool", Needs: RoleAdmin},
	{Command: "entitlement remove-pool", Needs: RoleAdmin},
	{Command: "homesite set", Needs: RoleAdmin},
	{Command: "homesite unset", Needs: RoleAdmin},
	{Command: "homesite list", Needs: RoleHelpdesk},
	{Command: "homesite resolve", Needs: RoleHelpdesk},
	{Command: "user list", Needs: RoleHelpdesk},
	{Command: "user show", Needs: RoleHelpdesk},
	{Command: "user create", Needs: RoleAdmin},
	{Command: "user update", Needs: RoleAdmin},
	{Command: "user delete", Needs: RoleAdmin},
	{Command: "user entitlements", Needs: RoleHelpdesk},
	{Command: "group list", Needs: RoleHelpdesk},
	{Command: "group show", Needs: RoleHelpdesk},
	{Command: "group create", Needs: RoleAdmin},
	{Command: "group add-member", Needs: RoleAdmin},
	{Command: "group remove-member", Needs: RoleAdmin},
	{Command: "group delete", Needs: RoleAdmin},
	{Command: "computer list", Needs: RoleHelpdesk},
	{Command: "computer show", Needs: RoleHelpdesk},
	{Command: "computer create", Needs: RoleAdmin},
	{Command: "computer delete", Needs: RoleAdmin},
	{Command: "session list", Needs: RoleHelpdesk},
	{Command: "session show", Needs: RoleHelpdesk},
	{Command: "session record", Needs: RoleOperator},
	{Command: "session end", Needs: RoleOperator},
	{Command: "assignment list", Needs: RoleHelpdesk},
	{Command: "assignment set", Needs: RoleOperator},
	{Command: "assignment delete", Needs: RoleOperator},
	{Command: "resolve", Needs: RoleHelpdesk},
	{Command: "loads", Needs: RoleHelpdesk},
	{Command: "impact", Needs: RoleHelpdesk},
	{Command: "simulate storm", Needs: RoleHelpdesk},
	{Command: "lint", Needs: RoleHelpdesk},
	{Command: "export", Needs: RoleHelpdesk},
	{Command: "history", Needs: RoleHelpdesk, Except: HistoryExcept, Why: "reads the log (cn=accesslog), which only the admin and help-desk roles read: an operator gets exit 4"},
	{Command: "history undo", Needs: RoleAdmin, Why: "reads the log, then writes what the run changed back (a run of an operator's writes too: only the admin and the help desk read the log)"},
	{Command: "diff", Needs: RoleHelpdesk},
	{Command: "apply", Case: "(a session's state)", Needs: RoleOperator},
	{Command: "apply", Case: "--prune", Needs: RoleAdmin},
	{Command: "generate", Needs: Anyone, Why: "writes a file"},
	{Command: "horizon pull", Needs: Anyone, Why: "reads Horizon's REST API, not the directory"},
	{Command: "horizon import", Needs: RoleHelpdesk, Why: "reads what the REST API does not carry from the directory"},
	{Command: "horizon sync", Needs: RoleHelpdesk, Why: "compares with the directory (--apply writes it, as apply does)"},
	{Command: "horizon push", Needs: RoleHelpdesk, Why: "reads the desired state from the directory; writes Horizon, not the directory"},
	{Command: "config get-contexts", Needs: Anyone, Why: "the configuration file"},
	{Command: "config current-context", Needs: Anyone, Why: "the configuration file"},
	{Command: "config use-context", Needs: Anyone, Why: "the configuration file"},
	{Command: "config set-context", Needs: Anyone, Why: "the configuration file"},
	{Command: "docs man", Needs: Anyone, Why: "writes files"},
	{Command: "docs markdown", Needs: Anyone, Why: "writes files"},
	{Command: "completion bash", Needs: Anyone, Why: "prints a script"},
	{Command: "completion fish", Needs: Anyone, Why: "prints a script"},
	{Command: "completion powershell", Needs: Anyone, Why: "prints a script"},
	{Command: "completion zsh", Needs: Anyone, Why: "prints a script"},
	{Command: "version", Needs: Anyone, Why: "prints cpactl's version"},
	{Command: "status", Needs: RoleHelpdesk, Why: "an identity that cannot read the base is not healthy (exit 4)"},
	{Command: "whoami", Needs: Anyone, Why: "every bound account, and anonymous, may ask who it is; a failed bind is exit 4"},
	{Command: "role list", Needs: AnyAccount, Why: "every bound account reads the role groups"},
	{Command: "role show", Needs: AnyAccount, Why: "every bound account reads the role groups"},
	{Command: "role add-member", Needs: RoleAdmin},
	{Command: "role remove-member", Needs: RoleAdmin},
}

// Describe names the entry at dn as cpactl's messages name objects: "site
// UK", "lon-desktops of pod London-1" (a pool, farm or Connection Server:
// the DN alone does not tell them apart), "rds host rds-1 of farm F in pod
// P", "the global settings cn=Common", "the container ou=Sites", "the base
// dc=...", "role group cpactl-admins"; any other DN is itself.
func (d DIT) Describe(dn string) string {
	k := NormalizeDN(dn)
	n := func(s string) string { return NormalizeDN(s) }
	parent := NormalizeDN(ParentOf(dn))
	name := NameOf(dn)
	switch {
	case k == n(d.Base):
		return "the base " + dn
	case k == n(d.Settings()):
		return "the global settings " + RDN(AttrCN, name)
	case k == n(d.Roles()):
		return "the role groups' container " + RDN(AttrOU, name)
	}
	for _, c := range d.Containers() {
		if k == n(c) {
			return "the container " + RDN(AttrOU, name)
		}
	}
	kinds := map[string]string{n(d.Sites()): objkind.Site, n(d.Pods()): objkind.Pod, n(d.Entitlements()): objkind.Entitlement,
		n(d.HomeSites()): objkind.HomeSiteRow, n(d.People()): objkind.User, n(d.Groups()): objkind.Group, n(d.Computers()): objkind.Computer,
		n(d.Sessions()): objkind.Session, n(d.Assignments()): objkind.Assignment, n(d.Roles()): objkind.RoleGroup}
	if kind, ok := kinds[parent]; ok {
		return kind + " " + name
	}
	grand := NormalizeDN(ParentOf(ParentOf(dn)))
	switch {
	case grand == n(d.Pods()):
		return name + " of pod " + NameOf(ParentOf(dn))
	case NormalizeDN(ParentOf(ParentOf(ParentOf(dn)))) == n(d.Pods()):
		return objkind.Host + " " + name + " of farm " + NameOf(ParentOf(dn)) + " in pod " + NameOf(ParentOf(ParentOf(dn)))
	}
	return dn
}

// CommandRolesMarkdown renders CommandRoles as the table docs/access.md
// holds (a test keeps the two equal): one row per cell, the identities
// that may run it.
func CommandRolesMarkdown() string {
	var b strings.Builder
	b.WriteString("| command | case | needs | admin | operator | helpdesk | no role | anonymous | note |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	mark := func(ok bool) string {
		if ok {
			return "yes"
		}
		return "4"
	}
	for _, c := range CommandRoles {
		var cells []string
		for _, held := range []Role{RoleAdmin, RoleOperator, RoleHelpdesk, "", "anonymous"} {
			var ok bool
			switch c.Needs {
			case Anyone:
				ok = true
			case AnyAccount:
				ok = held != "anonymous"
			default:
				ok = c.Allowed(held)
			}
			cells = append(cells, mark(ok))
		}
		needs := string(c.Needs)
		for _, r := range c.Except {
			needs += " (not " + string(r) + ")"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", c.Command, c.Case, needs, strings.Join(cells, " | "), c.Why)
	}
	return b.String()
}
