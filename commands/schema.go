package commands

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/output"
)

func newSchemaCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schema",
		Short: "Print, install and check cpactl's LDAP schema",
		Long: `cpactl owns an LDAP schema (attribute types and object classes under the OID
arc ` + ldapschema.Arc + `). It loads into a stock slapd after core,
cosine, nis and inetorgperson. See docs/schema.md for every attribute.`,
	}
	return cmd
}

type schemaPrintOptions struct {
	g          *Globals
	Format     string
	File       string
	Database   string
	Replicator string
	LogDir     string
	Retention  string
}

func newSchemaPrintCommand(g *Globals) *cobra.Command {
	o := &schemaPrintOptions{g: g}
	cmd := &cobra.Command{
		Use:   "print",
		Short: "Print the schema as a slapd.conf .schema file or a cn=config LDIF, or the indexes cpactl needs",
		Long: `Prints cpactl's schema, or the slapd indexes its searches need.

--format indexes prints slapd.conf "index" lines for the database that holds
the federation; --format indexes-ldif prints the same as an ldapmodify
change of that database's olcDbIndex under cn=config (--database names the
database entry). Without these indexes slapd reads every entry of a
container to answer a search: at Horizon's maximum (250,000 sessions) one
resolve then reads all sessions. See docs/performance.md.

--format acl prints the slapd.conf "access" lines that enforce cpactl's
roles for the base (-b), each list under a comment saying where it goes;
--format acl-ldif prints the same as an ldapmodify change of cn=config (the
federation database's olcAccess replaced, --database; run with ldapmodify
-c, which goes past the rules a second run finds there already). --replicator DN lets
a consumer's syncrepl account read everything. See docs/access.md.

--format accesslog prints what the history (` + "`cpactl history`" + `, --at) needs:
the accesslog overlay's lines for the end of the federation's database
section and the log database (` + ldapschema.AccessLogBase + `, in --log-directory), its indexes
and its ACL (readable by the admin and help-desk roles, password values
hidden); --format accesslog-ldif the same as cn=config changes (--database
names the federation's database entry). See docs/history.md.`,
		Example: `  # for slapd.conf: include /etc/ldap/schema/cpactl.schema
  cpactl schema print > /etc/ldap/schema/cpactl.schema
  # for cn=config
  cpactl schema print --format ldif | ldapadd -Y EXTERNAL -H ldapi:///
  # indexes: slapd.conf lines, or a cn=config change
  cpactl schema print --format indexes >> /etc/ldap/slapd.conf
  cpactl schema print --format indexes-ldif --database 'olcDatabase={1}mdb,cn=config' | ldapmodify -Y EXTERNAL -H ldapi:///
  # the roles' ACLs
  cpactl schema print --format acl -b dc=vdiglobal,dc=vmware,dc=int
  cpactl schema print --format acl-ldif --database 'olcDatabase={1}mdb,cn=config' | ldapmodify -c -Y EXTERNAL -H ldapi:///
  # the history's log
  cpactl schema print --format accesslog --log-directory /var/lib/ldap/accesslog
  cpactl schema print --format accesslog-ldif --database 'olcDatabase={1}mdb,cn=config' | ldapmodify -Y EXTERNAL -H ldapi:///`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	cmd.Flags().StringVar(&o.Format, "format", "schema",
		"schema (slapd.conf include), ldif (cn=config), markdown (docs/schema.md), indexes (slapd.conf lines), indexes-ldif (cn=config), acl (slapd.conf access lines for -b), acl-ldif (cn=config), accesslog (the history's log: slapd.conf lines) or accesslog-ldif (cn=config)")
	cmd.Flags().StringVar(&o.Database, "database", "olcDatabase={1}mdb,cn=config", "the cn=config entry of the database, for --format indexes-ldif, acl-ldif and accesslog-ldif")
	cmd.Flags().StringVar(&o.Replicator, "replicator", "", "for --format acl and acl-ldif: the DN a consumer's syncrepl binds as, which reads everything, passwords included")
	cmd.Flags().StringVar(&o.LogDir, "log-directory", ldapschema.DefaultAccessLogDirectory, "for --format accesslog and accesslog-ldif: the log database's directory")
	cmd.Flags().StringVar(&o.Retention, "log-retention", ldapschema.DefaultAccessLogRetention, "for --format accesslog and accesslog-ldif: how long records are kept, [DAYS+]HH:MM (logpurge)")
	cmd.Flags().StringVarP(&o.File, "output-file", "O", "", "write to this file instead of stdout")
	return cmd
}

func (o *schemaPrintOptions) run() error {
	render, ok := schemaFormats[strings.ToLower(o.Format)]
	if !ok {
		return errorf("use --format schema, ldif, markdown, indexes, indexes-ldif, acl, acl-ldif, accesslog or accesslog-ldif", "unknown schema format %q", o.Format)
	}
	if !retentionPattern.MatchString(o.Retention) {
		return errorf("write it as DAYS+HH:MM or HH:MM, e.g. 30+00:00 for 30 days", "--log-retention %q is not a logpurge age", o.Retention)
	}
	if !strings.HasPrefix(o.LogDir, "/") || strings.ContainsAny(o.LogDir, " \t\n\"") {
		return errorf("pass an absolute path without spaces or quotes, e.g. /var/lib/ldap/accesslog", "--log-directory %q is not a directory slapd.conf can name", o.LogDir)
	}
	if o.Replicator != "" {
		if _, err := ldapschema.NormalizeDNChecked(o.Replicator); err != nil {
			return errorf("pass the replication account's whole DN", "--replicator %q is not a DN", o.Replicator)
		}
	}
	text := render(schemaPrintInput{Database: o.Database, Base: o.g.Base, Replicator: o.Replicator,
		Log: ldapschema.AccessLogOptions{Directory: o.LogDir, Retention: o.Retention}})
	if o.File != "" {
		out, err := createOutput(o.File, 0o644)
		if err != nil {
			return err
		}
		defer out.Discard()
		if _, err = io.WriteString(out, text); err == nil {
			err = out.Commit()
		}
		return outputFailed(err)
	}
	_, err := io.WriteString(o.g.IO.Out, text)
	return err
}

// schemaPrintInput is what a format may use: --database, the base (-b),
// --replicator and the log's settings.
type schemaPrintInput struct {
	Database, Base, Replicator string
	Log                        ldapschema.AccessLogOptions
}

// retentionPattern is logpurge's age: [ddd+]hh:mm[:ss].
var retentionPattern = regexp.MustCompile(`^([0-9]{1,5}\+)?[0-9]{1,2}:[0-5][0-9](:[0-5][0-9])?$`)

func (in schemaPrintInput) acl() (ldapschema.DIT, ldapschema.ACLOptions) {
	return ldapschema.DIT{Base: in.Base}, ldapschema.ACLOptions{Replicator: in.Replicator}
}

// schemaFormats are the values of schema print --format (md is markdown's
// short form) and what each prints: what run accepts and completion
// offers.
var schemaFormats = map[string]func(in schemaPrintInput) string{
	"schema":       func(schemaPrintInput) string { return ldapschema.SchemaFile() },
	"ldif":         func(schemaPrintInput) string { return ldapschema.ConfigLDIF() },
	"markdown":     func(schemaPrintInput) string { return ldapschema.Markdown() },
	"md":           func(schemaPrintInput) string { return ldapschema.Markdown() },
	"indexes":      func(schemaPrintInput) string { return ldapschema.IndexesConf() },
	"indexes-ldif": func(in schemaPrintInput) string { return ldapschema.IndexesLDIF(in.Database) },
	"acl": func(in schemaPrintInput) string {
		dit, opts := in.acl()
		return dit.ACLConf(opts)
	},
	"acl-ldif": func(in schemaPrintInput) string {
		dit, opts := in.acl()
		return dit.ACLLDIF(in.Database, opts)
	},
	"accesslog": func(in schemaPrintInput) string {
		return ldapschema.DIT{Base: in.Base}.AccessLogConf(in.Log)
	},
	"accesslog-ldif": func(in schemaPrintInput) string {
		return ldapschema.DIT{Base: in.Base}.AccessLogLDIF(in.Database, in.Log)
	},
}

type schemaInstallOptions struct {
	g *Globals
	writeFlags
}

func newSchemaInstallCommand(g *Globals) *cobra.Command {
	o := &schemaInstallOptions{g: g}
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Add cpactl's schema to a server's cn=config (idempotent)",
		Long: `Adds the schema to cn=schema,cn=config. It needs a connection that may write
cn=config: ldapi:// with SASL EXTERNAL as root (no -D), or a bind such as
-D cn=admin,cn=config. Elements are compared by OID: missing ones are added,
identical ones left alone ("unchanged"), object classes an older cpactl
installed with fewer optional (MAY) attributes are upgraded in place, and
ones whose definition differs otherwise are listed and left alone (exit 2),
since an OID never changes meaning.`,
		Example: `  sudo cpactl schema install -H ldapi://%2Fvar%2Frun%2Fslapd%2Fldapi
  cpactl schema install -H ldap://ldap.example.com -Z -D cn=admin,cn=config -W`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	o.writeFlags.add(cmd)
	return cmd
}

func (o *schemaInstallOptions) run() error {
	c, err := o.g.Dial()
	if err != nil {
		return err
	}
	defer c.Close()
	res, err := directory.InstallSchema(c, o.DryRun)
	var readErr *directory.SchemaReadError
	var writeErr *directory.SchemaWriteError
	if errors.As(err, &readErr) || errors.As(err, &writeErr) {
		// The generated ACLs let the admin role write the schema: a
		// refusal names who was refused and that role.
		if refused, ok := directory.NewStore(c, o.g.Base).Refused(errors.Unwrap(err), "install the schema in",
			ldapschema.SchemaConfigBase, ldapschema.RoleAdmin); ok {
			return refused
		}
	}
	switch {
	case errors.As(err, &readErr):
		code := ExitCode(err)
		if code == ExitNotFound {
			// cn=schema,cn=config always exists on a slapd with cn=config:
			// "no such object" is slapd hiding it from this bind.
			code = ExitAuth
		}
		return &Failure{Code: code, Err: err,
			Hint: "bind as a member of the admin role (the generated ACLs let it write the schema), connect with ldapi:// as root (SASL EXTERNAL, no -D) or bind as the cn=config root DN"}
	case errors.As(err, &writeErr):
		return &Failure{Code: ExitCode(err), Err: err, Hint: "the connection must be allowed to write cn=config"}
	case err != nil:
		return err
	}
	verb := "added"
	if o.DryRun {
		verb = "would add"
	}
	for _, f := range res.Findings {
		if f.Status == "missing" {
			o.g.report("%s %s %s (%s)", verb, f.Kind, f.Name, f.OID)
		}
	}
	upgradeVerb := "upgraded"
	if o.DryRun {
		upgradeVerb = "would upgrade"
	}
	for _, f := range res.Upgraded {
		o.g.report("%s %s %s (%s): %s", upgradeVerb, f.Kind, f.Name, f.OID, strings.Join(f.Differences, "; "))
	}
	for _, f := range res.Different {
		o.g.report("differs: %s %s (%s): %s", f.Kind, f.Name, f.OID, strings.Join(f.Differences, "; "))
	}
	switch {
	case res.Added == 0 && len(res.Upgraded) == 0 && len(res.Different) == 0:
		o.g.report("schema %s: unchanged (%d elements)", ldapschema.SchemaName, res.Unchanged)
	case len(res.Upgraded) > 0:
		o.g.report("schema %s: %d %s, %d %s, %d unchanged, %d different", ldapschema.SchemaName, res.Added, verb,
			len(res.Upgraded), upgradeVerb, res.Unchanged, len(res.Different))
	default:
		o.g.report("schema %s: %d %s, %d unchanged, %d different", ldapschema.SchemaName, res.Added, verb, res.Unchanged, len(res.Different))
	}
	if len(res.Different) > 0 {
		return &Failure{Code: ExitDiff, Err: fmt.Errorf("%d schema elements differ from cpactl's definition and were left alone", len(res.Different)),
			Hint: "an OID never changes meaning: remove the conflicting definitions from the server by hand"}
	}
	return nil
}

type schemaCheckOptions struct {
	g      *Globals
	Output string
}

func newSchemaCheckCommand(g *Globals) *cobra.Command {
	o := &schemaCheckOptions{g: g}
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Compare the server's schema with cpactl's definition (exit 2 on differences)",
		Long: `Reads the server's subschema (any bind that may read it, no cn=config rights
needed) and compares each of cpactl's attribute types and object classes by
OID. Lists every element that is missing, different or outdated (an object
class with fewer MAY attributes, which ` + "`cpactl schema install`" + ` upgrades)
and exits 2 if any.`,
		Example: `  cpactl schema check -H ldap://ldap.example.com
  cpactl schema check -o json | jq '.[] | select(.status != "ok")'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "table", output.FormatUsage)
	return cmd
}

func (o *schemaCheckOptions) run() error {
	format, err := output.ParseFormat(o.Output)
	if err != nil {
		return errorf("", "%v", err)
	}
	c, err := o.g.Dial()
	if err != nil {
		return err
	}
	defer c.Close()
	findings, err := directory.CheckSchema(c)
	if err != nil {
		return &Failure{Code: ExitCode(err), Err: err}
	}
	var bad []ldapschema.Finding
	for _, f := range findings {
		if f.Status != "ok" {
			bad = append(bad, f)
		}
	}
	p := output.Printer{Format: format, Out: o.g.IO.Out, Width: o.g.terminalWidth()}
	err = p.Print(findings, func(w io.Writer) error {
		if len(bad) == 0 {
			_, err := fmt.Fprintf(w, "schema %s: all %d elements match\n", ldapschema.SchemaName, len(findings))
			return err
		}
		rows := make([][]string, 0, len(bad))
		for _, f := range bad {
			rows = append(rows, []string{f.Kind, f.Name, f.OID, f.Status, strings.Join(f.Differences, "; ")})
		}
		if err := output.Rows(w, []string{"kind", "name", "oid", "status", "differences"}, rows); err != nil {
			return err
		}
		_, err := fmt.Fprintf(w, "%d of %d elements missing or different: run `cpactl schema install`\n", len(bad), len(findings))
		return err
	})
	if err != nil {
		return err
	}
	if len(bad) > 0 {
		return silentExit(ExitDiff)
	}
	return nil
}
