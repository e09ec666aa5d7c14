package ldapschema

import (
	"fmt"
	"strings"
)

// The history of the federation (`cpactl history`, `--at`): OpenLDAP's
// accesslog overlay (slapo-accesslog) on the federation's database writes
// one entry per write into a log database of its own. `cpactl schema print
// --format accesslog` (slapd.conf lines) and `--format accesslog-ldif`
// (cn=config) render the setup from what this file says; the test harness
// and docker/slapd.conf run it. docs/history.md explains each line.

// AccessLogBase is the suffix of the log database.
const AccessLogBase = "cn=accesslog"

// DefaultAccessLogDirectory is where the log database's files go unless
// the administrator says otherwise (--log-directory): beside Debian's
// /var/lib/ldap, owned by the user slapd runs as.
const DefaultAccessLogDirectory = "/var/lib/ldap/accesslog"

// DefaultAccessLogRetention is how long records are kept: logpurge's age
// ([ddd+]hh:mm); the purge runs once a day.
const DefaultAccessLogRetention = "30+00:00"

// OIDRunControl is the request control every write of cpactl carries: a
// non-critical control under cpactl's arc (Arc.3.N: controls) whose value
// names the command run (package history's Run). slapd ignores it and the
// accesslog overlay keeps it in reqControls.
const OIDRunControl = Arc + ".3.1"

// Attributes and classes of the log (slapo-accesslog(5)).
const (
	ClassAuditWriteObject = "auditWriteObject"
	AttrReqStart          = "reqStart"
	AttrReqEnd            = "reqEnd"
	AttrReqType           = "reqType"
	AttrReqSession        = "reqSession"
	AttrReqAuthzID        = "reqAuthzID"
	AttrReqDN             = "reqDN"
	AttrReqResult         = "reqResult"
	AttrReqMessage        = "reqMessage"
	AttrReqMod            = "reqMod"
	AttrReqOld            = "reqOld"
	AttrReqNewRDN         = "reqNewRDN"
	AttrReqDeleteOldRDN   = "reqDeleteOldRDN"
	AttrReqNewSuperior    = "reqNewSuperior"
	AttrReqEntryUUID      = "reqEntryUUID"
	AttrReqControls       = "reqControls"
)

// AccessLogOptions shape the log's setup.
type AccessLogOptions struct {
	// Directory holds the log database's files (default
	// DefaultAccessLogDirectory).
	Directory string
	// Retention is logpurge's age (default DefaultAccessLogRetention).
	Retention string
}

func (o AccessLogOptions) directory() string {
	if o.Directory == "" {
		return DefaultAccessLogDirectory
	}
	return o.Directory
}

func (o AccessLogOptions) retention() string {
	if o.Retention == "" {
		return DefaultAccessLogRetention
	}
	return o.Retention
}

// AccessLogSetting is one setting of the overlay or of the log database:
// its slapd.conf keyword and cn=config attribute, its value and why.
type AccessLogSetting struct {
	Keyword, ConfigAttr, Value, Why string
}

// AccessLogOverlay is the overlay's settings on the federation's
// database.
func AccessLogOverlay(opts AccessLogOptions) []AccessLogSetting {
	return []AccessLogSetting{
		{"logdb", "olcAccessLogDB", AccessLogBase, "the log database below"},
		{"logops", "olcAccessLogOps", "writes", "adds, deletes, modifies and renames (binds would outnumber them)"},
		{"logsuccess", "olcAccessLogSuccess", "FALSE", "refused writes are logged too: history marks them"},
		{"logold", "olcAccessLogOld", "(objectClass=*)", "the old values of what a write changes: history's old -> new, undo and --at"},
		{"logpurge", "olcAccessLogPurge", opts.retention() + " 1+00:00", "records older than that are deleted once a day (it runs as the log's rootdn)"},
	}
}

// AccessLogIndexes are the log database's indexes: history searches by
// time, by object and by who.
func AccessLogIndexes() []Index {
	return []Index{
		{Attrs: []string{AttrObjectClass}, Kind: "eq", Why: "the write records among the log's entries"},
		{Attrs: []string{AttrReqStart}, Kind: "eq", Why: "time windows (history --since/--until, --at) and logpurge"},
		{Attrs: []string{AttrReqDN, AttrReqAuthzID}, Kind: "eq", Why: "history --object and --by"},
		{Attrs: []string{AttrReqEntryUUID}, Kind: "eq", Why: "an object's records across renames"},
	}
}

// sensitiveAttributes are the standard attributes whose values are never
// printed (passwords).
func sensitiveAttributes() []string {
	var out []string
	for _, a := range StandardAttributes {
		if a.Sensitive {
			out = append(out, a.Name)
		}
	}
	return out
}

// accessLogACL is the log database's access list: password values in
// reqMod and reqOld hidden from everyone, then the log readable by the
// admin and help-desk roles only.
func (d DIT) accessLogACL() ACLSection {
	var rules []ACL
	for i, attr := range sensitiveAttributes() {
		comment := ""
		if i == 0 {
			comment = "1. Passwords: a write that sets one logs its value (in clear text when the client sent it so);\n   those values are hidden from everyone, admins included (slapcat on the server still shows them)."
		}
		for _, logged := range []string{AttrReqMod, AttrReqOld} {
			rules = append(rules, ACL{Comment: comment,
				What: "dn.subtree=" + quoteACL(AccessLogBase) + " attrs=" + logged + ` val.regex="^` + attr + `:.*"`,
				By:   []By{{"*", "none"}}})
			comment = ""
		}
	}
	rules = append(rules, ACL{
		Comment: "2. The admin and help-desk roles read the log (cpactl history, --at); a bound account with\n   another role learns only that access is refused; anonymous gets nothing.",
		What:    "dn.subtree=" + quoteACL(AccessLogBase),
		By:      append(d.readers(RoleAdmin, RoleHelpdesk), By{"users", "disclose"}, By{"*", "none"})})
	return ACLSection{Database: ACLAccessLog,
		Comment: "The log database " + AccessLogBase + ": readable by the admin and help-desk roles only.",
		Rules:   rules}
}

// AccessLogOverlayConf renders the overlay lines that end the federation's
// database section of slapd.conf.
func AccessLogOverlayConf(opts AccessLogOptions) string {
	var b strings.Builder
	b.WriteString("overlay accesslog\n")
	for _, s := range AccessLogOverlay(opts) {
		fmt.Fprintf(&b, "# %s\n%s %s\n", s.Why, s.Keyword, s.Value)
	}
	return b.String()
}

// AccessLogDatabaseConf renders the log database's section of slapd.conf.
func (d DIT) AccessLogDatabaseConf(opts AccessLogOptions) string {
	var b strings.Builder
	b.WriteString("database mdb\nmaxsize 1073741824\n")
	fmt.Fprintf(&b, "suffix %q\n", AccessLogBase)
	b.WriteString("# logpurge deletes as the log's rootdn: without one it finds nothing and deletes nothing.\n")
	b.WriteString("# It has no password: nobody binds as it.\n")
	fmt.Fprintf(&b, "rootdn %q\n", AccessLogBase)
	b.WriteString("# Adjust: the log's own directory, owned by the user slapd runs as.\n")
	fmt.Fprintf(&b, "directory %s\n", opts.directory())
	for _, ix := range AccessLogIndexes() {
		fmt.Fprintf(&b, "# %s\nindex %s %s\n", ix.Why, strings.Join(ix.Attrs, ","), ix.Kind)
	}
	b.WriteString("limits users size=unlimited\n")
	acl := d.accessLogACL()
	b.WriteString("# " + acl.Comment + "\n")
	for _, r := range acl.Rules {
		if r.Comment != "" {
			b.WriteString("# " + strings.ReplaceAll(r.Comment, "\n", "\n# ") + "\n")
		}
		b.WriteString("access " + r.text("    ") + "\n")
	}
	return b.String()
}

// AccessLogConf renders `schema print --format accesslog`: the module,
// the overlay lines for the end of the federation's database section and
// the log database's section.
func (d DIT) AccessLogConf(opts AccessLogOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# The history of the federation under %s (%s); docs/history.md.\n", d.Base, generatedNote)
	b.WriteString("# ---- global, with the other moduleload lines:\nmoduleload accesslog.so\n\n")
	b.WriteString("# ---- at the end of the federation's database section:\n")
	b.WriteString(AccessLogOverlayConf(opts))
	b.WriteString("\n# ---- the log database, after the federation's:\n")
	b.WriteString(d.AccessLogDatabaseConf(opts))
	return b.String()
}

// AccessLogLDIF renders `schema print --format accesslog-ldif`: the same
// as cn=config changes (the module loaded, the log database added, then
// the overlay on the federation's database, databaseDN).
func (d DIT) AccessLogLDIF(databaseDN string, opts AccessLogOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# The history of the federation under %s, for cn=config (%s); docs/history.md.\n", d.Base, generatedNote)
	b.WriteString("# Create the log's directory first (owned by the user slapd runs as), then\n")
	b.WriteString("# ldapmodify -Y EXTERNAL -H ldapi:/// -f FILE\n\n")
	b.WriteString("dn: cn=module{0},cn=config\nchangetype: modify\nadd: olcModuleLoad\nolcModuleLoad: accesslog\n-\n\n")
	b.WriteString("dn: olcDatabase=mdb,cn=config\nchangetype: add\nobjectClass: olcDatabaseConfig\nobjectClass: olcMdbConfig\nolcDatabase: mdb\n")
	fmt.Fprintf(&b, "olcSuffix: %s\nolcRootDN: %s\nolcDbDirectory: %s\nolcDbMaxSize: 1073741824\n", AccessLogBase, AccessLogBase, opts.directory())
	for _, ix := range AccessLogIndexes() {
		fmt.Fprintf(&b, "olcDbIndex: %s %s\n", strings.Join(ix.Attrs, ","), ix.Kind)
	}
	b.WriteString("olcLimits: users size=unlimited\n")
	for _, r := range d.accessLogACL().Rules {
		fmt.Fprintf(&b, "olcAccess: %s\n", r.text("  "))
	}
	fmt.Fprintf(&b, "\ndn: olcOverlay=accesslog,%s\nchangetype: add\nobjectClass: olcOverlayConfig\nobjectClass: olcAccessLogConfig\nolcOverlay: accesslog\n", databaseDN)
	for _, s := range AccessLogOverlay(opts) {
		fmt.Fprintf(&b, "%s: %s\n", s.ConfigAttr, s.Value)
	}
	return b.String()
}
