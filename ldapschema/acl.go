package ldapschema

import (
	"fmt"
	"slices"
	"strings"
)

// The access control lists that enforce the roles (roles.go), generated
// from the DIT so that a container cannot be forgotten: `cpactl schema
// print --format acl` (slapd.conf lines) and `--format acl-ldif`
// (olcAccess values for cn=config). Tested against real slapd processes
// role by role (cmd/cpactl/roles_test.go); docs/access.md explains each
// rule.

// ACLOptions shape the generated ACLs.
type ACLOptions struct {
	// Replicator is the DN a consumer's syncrepl binds as on this server:
	// it reads every entry, passwords included, which no role does. ""
	// for none.
	Replicator string
	// WithoutCpactlSchema leaves out the rules that name cpactl's own
	// attributes (the live figures), for a server that does not have the
	// schema yet: slapd refuses an ACL naming an attribute it does not
	// know. Operators then cannot write the live figures.
	WithoutCpactlSchema bool
}

// ACL is one access directive: "access to What by Who Access ...".
type ACL struct {
	Comment string // what the rule is for, one or more lines
	What    string
	By      []By
}

// By is one "by" clause.
type By struct{ Who, Access string }

// ACLDatabase says which database a list of ACLs goes to.
type ACLDatabase string

// The databases the ACLs go to.
const (
	// ACLFrontend: the global part of slapd.conf, before the first
	// database (cn=config: olcDatabase={-1}frontend,cn=config).
	ACLFrontend ACLDatabase = "frontend"
	// ACLConfig: the config database (olcDatabase={0}config,cn=config).
	ACLConfig ACLDatabase = "config"
	// ACLFederation: the database that holds the base.
	ACLFederation ACLDatabase = "federation"
	// ACLAccessLog: the log database of the federation's history
	// (accesslog.go): readable by the admin and help-desk roles only,
	// password values hidden. Its list is printed by `schema print
	// --format accesslog` with the log database, not with the others.
	ACLAccessLog ACLDatabase = "accesslog"
)

// ACLSection is the list of one database.
type ACLSection struct {
	Database ACLDatabase
	Comment  string
	Rules    []ACL
}

// roleWho returns the "by" clauses that grant access to the members of r's
// group: direct members (group.exact, the fast check) and members through
// nested groups (a set: the group's members, theirs, and so on).
func (d DIT) roleWho(r Role, access string) []By {
	g := quoteACL(d.RoleGroup(r))
	return []By{
		{Who: "group.exact=" + g, Access: access},
		{Who: `set="[` + strings.Trim(g, `"`) + `]/member* & user"`, Access: access},
	}
}

// readers grants read to the members of roles (the federation's readers;
// the log database's: readers(RoleAdmin, RoleHelpdesk)).
func (d DIT) readers(roles ...Role) []By {
	var out []By
	for _, r := range roles {
		out = append(out, d.roleWho(r, "read")...)
	}
	return out
}

// quoteACL quotes a DN for slapd.conf.
func quoteACL(dn string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(dn) + `"`
}

// AccessControl returns the ACLs of every database, in the order slapd
// needs them.
func (d DIT) AccessControl(opts ACLOptions) []ACLSection {
	base := quoteACL(d.Base)
	admins := func(access string) []By { return d.roleWho(RoleAdmin, access) }
	operators := func(access string) []By { return d.roleWho(RoleOperator, access) }
	then := func(bys []By, more ...By) []By { return append(bys, more...) }

	frontend := ACLSection{Database: ACLFrontend,
		Comment: "The root DSE and the subschema stay readable by anyone: clients find the naming contexts,\nStartTLS, SASL mechanisms, controls and the schema there.",
		Rules: []ACL{
			{What: `dn.base=""`, By: []By{{"*", "read"}}},
			{What: `dn.base="cn=Subschema"`, By: []By{{"*", "read"}}},
		}}

	config := ACLSection{Database: ACLConfig,
		Comment: "cn=config: admins may read and write the schema (cpactl schema install), nothing else;\nthe server's own administrators keep their rules before these.",
		Rules: []ACL{
			{What: `dn.subtree="` + SchemaConfigBase + `"`,
				By: then(admins("write"), By{"users", "disclose"}, By{"*", "none"})},
		}}

	var rules []ACL
	if opts.Replicator != "" {
		rules = append(rules, ACL{
			Comment: "0. The replication account reads everything, passwords included (a consumer's syncrepl).",
			What:    "*",
			By:      []By{{"dn.exact=" + quoteACL(opts.Replicator), "read"}, {"*", "break"}}})
	}
	rules = append(rules,
		ACL{Comment: "1. Passwords: nobody reads one, admins included; admins set them, an account changes its own,\n   anonymous may only bind with it.",
			What: "attrs=" + AttrUserPassword,
			By:   then(admins("=wx"), By{"self", "=wx"}, By{"anonymous", "auth"}, By{"*", "none"})},
		ACL{Comment: "2. The role groups: admins manage them; every bound account reads them (whoami, and a\n   refusal names the roles of who was refused).",
			What: "dn.subtree=" + quoteACL(d.Roles()),
			By:   then(admins("write"), By{"users", "read"}, By{"*", "none"})},
		ACL{Comment: "3. Admins (Horizon: Administrators) write everything else.",
			What: "dn.subtree=" + base,
			By:   then(admins("write"), By{"*", "break"})},
	)
	for i, c := range d.operatorContainers() {
		comment := ""
		if i == 0 {
			comment = "4. Operators (Horizon: Manage Global Sessions) create, change and delete whole entries below\n   ou=Sessions and ou=Assignments (cpactl's transaction placeholders there included)."
		}
		rules = append(rules,
			ACL{Comment: comment,
				What: "dn.base=" + quoteACL(c) + " attrs=children",
				By:   then(operators("write"), By{"*", "break"})},
			ACL{What: "dn.children=" + quoteACL(c),
				By: then(operators("write"), By{"*", "break"})})
	}
	if !opts.WithoutCpactlSchema {
		rules = append(rules, ACL{
			Comment: "5. Operators write the live figures of pools and RDS hosts (what a feed writes:\n   pool update --sessions/--assigned, host set-load).",
			What:    "dn.subtree=" + quoteACL(d.Pods()) + " attrs=" + strings.Join(LiveFigures, ","),
			By:      then(operators("write"), By{"*", "break"})})
	}
	rules = append(rules, ACL{
		Comment: "6. Operators and the help desk read everything else. A bound account with no role learns\n   only that access is refused (disclose: exit 4, not \"does not exist\"); anonymous gets nothing.",
		What:    "dn.subtree=" + base,
		By:      then(d.readers(RoleOperator, RoleHelpdesk), By{"users", "disclose"}, By{"*", "none"})})

	federation := ACLSection{Database: ACLFederation,
		Comment: "The federation under " + d.Base + ": cpactl's roles (docs/access.md). A write that refers to an\nentry also sends an empty modify of it (a touch: directory/guard.go), which slapd allows any\nbound account without an ACL check; it changes no value.",
		Rules:   rules}
	return []ACLSection{frontend, config, federation}
}

// text renders a rule as slapd.conf continues it: "to What" and one
// indented line per "by".
func (a ACL) text(indent string) string {
	var b strings.Builder
	b.WriteString("to " + a.What)
	for _, by := range a.By {
		fmt.Fprintf(&b, "\n%sby %s %s", indent, by.Who, by.Access)
	}
	return b.String()
}

// ACLConf renders the ACLs as slapd.conf lines, each database's list under
// a comment saying where it goes.
func (d DIT) ACLConf(opts ACLOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Access control for cpactl's roles (%s).\n", generatedNote)
	b.WriteString("# Role groups: " + d.Roles() + " (cpactl init --roles); docs/access.md.\n")
	for _, s := range d.AccessControl(opts) {
		b.WriteString("\n" + sectionHeading(s.Database) + "\n")
		for _, line := range strings.Split(s.Comment, "\n") {
			b.WriteString("# " + line + "\n")
		}
		for _, r := range s.Rules {
			if r.Comment != "" {
				for _, line := range strings.Split(r.Comment, "\n") {
					b.WriteString("# " + line + "\n")
				}
			}
			b.WriteString("access " + r.text("    ") + "\n")
		}
	}
	return b.String()
}

// ACLConfSection renders one database's list as slapd.conf lines.
func (d DIT) ACLConfSection(db ACLDatabase, opts ACLOptions) string {
	var b strings.Builder
	for _, s := range d.AccessControl(opts) {
		if s.Database != db {
			continue
		}
		for _, r := range s.Rules {
			b.WriteString("access " + r.text("    ") + "\n")
		}
	}
	return b.String()
}

func sectionHeading(db ACLDatabase) string {
	switch db {
	case ACLFrontend:
		return "# ---- global: before the first \"database\" line"
	case ACLConfig:
		return "# ---- after \"database config\""
	}
	return "# ---- the federation's database: after its \"suffix\", \"rootdn\" and \"index\" lines,\n# in place of every \"access\" line it has"
}

// ACLLDIF renders the ACLs as an ldapmodify change of cn=config: the
// federation database's list (databaseDN) replaced whole, as it must be
// complete and first; then the config database's and the frontend's
// lists added after the rules they have (Debian's root access over ldapi
// stays first). Run again, the two additions report "value already
// exists" (ldapmodify -c goes on).
func (d DIT) ACLLDIF(databaseDN string, opts ACLOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Access control for cpactl's roles, for cn=config (%s).\n", generatedNote)
	b.WriteString("# ldapmodify -c -Y EXTERNAL -H ldapi:/// -f FILE (-c: run again, the last two changes report\n")
	b.WriteString("# \"value already exists\"); find the database's DN with\n")
	b.WriteString("# ldapsearch -Y EXTERNAL -H ldapi:/// -b cn=config '(olcSuffix=*)' dn olcSuffix\n")
	sections := d.AccessControl(opts)
	slices.Reverse(sections) // the federation's first
	for _, s := range sections {
		dn, op := databaseDN, "replace"
		switch s.Database {
		case ACLFrontend:
			dn, op = "olcDatabase={-1}frontend,cn=config", "add"
		case ACLConfig:
			dn, op = "olcDatabase={0}config,cn=config", "add"
		}
		b.WriteString("\n")
		for _, line := range strings.Split(s.Comment, "\n") {
			b.WriteString("# " + line + "\n")
		}
		fmt.Fprintf(&b, "dn: %s\nchangetype: modify\n%s: olcAccess\n", dn, op)
		for _, r := range s.Rules {
			fmt.Fprintf(&b, "olcAccess: %s\n", r.text("  "))
		}
		b.WriteString("-\n")
	}
	return b.String()
}
