package commands

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/horizonimport"
	"github.com/cpactl/cpactl/ldapschema"
)

// addDirectoryFlags gives a horizon command that also reads or writes the
// directory its LDAP connection flags: below `cpactl horizon`, --url, -W,
// -y and --ca-file are the Connection Server's and the REST account's, so
// the directory's take an ldap- prefix (and -H). The bind DN, base and
// context are the usual -D, -b and --context; CPACTL_URL, CPACTL_BIND_PASSWORD
// and the context apply as everywhere. The two passwords never mix.
func addDirectoryFlags(cmd *cobra.Command, g *Globals) {
	f := cmd.Flags()
	f.StringSliceVarP(&g.URLs, "ldap-url", "H", nil,
		"the directory's LDAP URI(s) (env CPACTL_URL, then the context, then LDAPURI); --url is the Connection Server here")
	f.StringVar(&g.CAFile, "ldap-ca-file", "", "PEM file of the CA(s) that signed the directory's certificate")
	f.BoolVar(&g.PromptPassword, "ldap-prompt-password", false, "prompt for the directory's bind password on the terminal (-W is the REST account's here)")
	f.StringVar(&g.PasswordFile, "ldap-password-file", "", "read the directory's bind password from this file, or set CPACTL_BIND_PASSWORD (-y is the REST account's here)")
}

// notHorizonFlags refuses the Horizon connection flags on a command that
// talks to no Horizon server: -y there would be taken for the directory's
// password file and silently ignored.
func (h *horizonFlags) refuseFor(cmd string) error {
	switch {
	case h.PasswordFile != "" || h.PromptPassword:
		return errorf("the directory's bind password: --ldap-password-file FILE, --ldap-prompt-password or CPACTL_BIND_PASSWORD",
			"%s talks to no Horizon server: -W and -y are the REST account's password", cmd)
	case h.URL != "":
		return errorf("the directory: -H/--ldap-url URI (or CPACTL_URL, a context)",
			"%s talks to no Horizon server: --url names a Connection Server", cmd)
	}
	return nil
}

type horizonImportOptions struct {
	g        *Globals
	h        *horizonFlags
	Dir      string
	File     string
	BaseFrom string
}

func newHorizonImportCommand(g *Globals, h *horizonFlags) *cobra.Command {
	o := &horizonImportOptions{g: g, h: h}
	cmd := &cobra.Command{
		Use:   "import DIR",
		Short: "Turn a pull directory into cpactl's LDIF (for apply, diff and --from)",
		Long: `Reads a pull directory (` + "`cpactl horizon pull`" + `) and writes the federation it
holds as the LDIF ` + "`cpactl export`" + ` writes, so that ` + "`cpactl apply`" + `, ` + "`cpactl diff`" + ` and
--from take it: names, not Horizon's ids (users as DOMAIN\name with the
NetBIOS domain), every field docs/horizon.md maps.

What the REST API does not carry (the four pae-* thresholds, a pod's RDS
thresholds, an RDS host's connecting sessions, features and policy
thresholds, client computers and their groups, descriptions of Connection
Servers) is never invented: it comes from --base-from LDIF when given, else
from the directory when one is given (-H/--ldap-url, CPACTL_URL or the
context), else it is left at cpactl's defaults; stderr says which.

What cpactl cannot hold (a backup of an application entitlement, PENDING
sessions, the ULTRA protocol, an application pool on a desktop pool, a value
a newer Horizon added, a user name in two domains, ...) is counted and named
on stderr, never dropped silently. Nothing is written when the pull cannot
be read. The output is sorted and streamed with bounded memory, whatever the
number of sessions.

` + "`cpactl horizon sync`" + ` pulls, imports and compares with the directory in one go.`,
		Example: `  cpactl horizon import ./pull -O federation.ldif
  cpactl diff federation.ldif && cpactl apply federation.ldif
  cpactl horizon import ./pull --base-from last-export.ldif -O federation.ldif
  cpactl horizon import ./pull -H ldap://ldap.corp.example.com -D cn=admin,dc=vdiglobal,dc=vmware,dc=int --ldap-password-file pw.txt -O federation.ldif
  cpactl resolve --from ./pull --user 'CORP\alice' --entitlement 'Sales Desktops' --connection-server india-cs-1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Dir = args[0]
			return o.g.execute(o)
		},
	}
	cmd.Flags().StringVarP(&o.File, "output-file", "O", "", "write to this file instead of stdout")
	cmd.Flags().StringVar(&o.BaseFrom, "base-from", "", "take what the REST API does not carry from this LDIF snapshot (cpactl export) instead of the directory")
	addDirectoryFlags(cmd, g)
	return cmd
}

func (o *horizonImportOptions) run() error {
	o.g.belowHorizon = true
	if err := o.h.refuseFor("horizon import"); err != nil {
		return err
	}
	if err := checkPullDir(o.Dir); err != nil {
		return err
	}
	base, dit, closeFn, err := o.g.importBase(o.BaseFrom)
	if err != nil {
		return err
	}
	defer closeFn()
	opts := horizonimport.Options{DIT: dit, Base: base}
	if m := o.g.progress.meter; m != nil {
		opts.Records = m.Stage("importing "+o.Dir, "records", 0)
		defer m.End()
	}
	if o.File == "" {
		// The import sorts before its first byte: a failure writes
		// nothing to stdout.
		rep, err := horizonimport.WriteLDIF(o.Dir, opts, o.g.IO.Out)
		if err != nil {
			return importFailed(o.Dir, err)
		}
		o.g.noteImport(rep)
		fmt.Fprintf(o.g.IO.Err, "imported %d entries from %s (%s)\n", rep.Entries, o.Dir, rep.Summary())
		return nil
	}
	out, err := createOutput(o.File, 0o600)
	if err != nil {
		return err
	}
	defer out.Discard()
	rep, err := horizonimport.WriteLDIF(o.Dir, opts, out)
	if err != nil {
		return importFailed(o.Dir, err)
	}
	if err := out.Commit(); err != nil {
		return outputFailed(err)
	}
	o.g.noteImport(rep)
	o.g.report("imported %d entries from %s to %s (%s)", rep.Entries, o.Dir, o.File, rep.Summary())
	return nil
}

// checkPullDir refuses what is not a pull directory, before any work.
func checkPullDir(dir string) error {
	if !horizonimport.IsPull(dir) {
		return errorf("pass a directory written by `cpactl horizon pull`", "%s is not a pull directory (no %s in it)", dir, "manifest.json")
	}
	return nil
}

// importFailed says that a pull could not be read.
func importFailed(dir string, err error) error {
	if f, ok := err.(*Failure); ok {
		return f
	}
	return errorf("pull it again with `cpactl horizon pull --replace`: the directory is damaged or not what a pull writes",
		"cannot import %s: %v", dir, err)
}

// importBase finds what fills what the REST API does not carry: the
// snapshot --base-from names, else the directory when one is configured,
// else nothing (cpactl's defaults). It returns the layout to write under:
// the base's.
func (g *Globals) importBase(baseFrom string) (*horizonimport.Base, ldapschema.DIT, func(), error) {
	none := func() {}
	if baseFrom != "" {
		if horizonimport.IsPull(baseFrom) {
			return nil, ldapschema.DIT{}, none, errorf("pass an LDIF file (cpactl export)", "--base-from %s is a pull directory, not a snapshot of the directory", baseFrom)
		}
		snap, err := g.loadSnapshot(baseFrom)
		if err != nil {
			return nil, ldapschema.DIT{}, none, errorf("pass an LDIF file written by `cpactl export`", "--base-from: %v", err)
		}
		st := directory.NewStore(snap, g.snapshotBase(snap))
		b, err := horizonimport.ReadBase(st, "the snapshot "+baseFrom)
		if err != nil {
			return nil, ldapschema.DIT{}, none, err
		}
		return b, st.DIT, none, nil
	}
	if len(g.URLs) == 0 && g.OpenStore == nil {
		return nil, ldapschema.DIT{Base: g.Base}, none, nil
	}
	st, closeFn, err := g.Store()
	if err != nil {
		return nil, ldapschema.DIT{}, none, err
	}
	source := "the directory"
	if len(g.URLs) > 0 {
		source += " at " + strings.Join(g.URLs, ",")
	}
	b, err := horizonimport.ReadBase(st, source)
	if err != nil {
		closeFn()
		return nil, ldapschema.DIT{}, none, err
	}
	return b, st.DIT, closeFn, nil
}

// snapshotBase is the base of a snapshot: -b when given (not by a
// context, which describes a server), else the parent of its ou=Sites.
func (g *Globals) snapshotBase(snap *snapshot.Snapshot) string {
	if !g.baseExplicit || g.baseOfContext {
		if found := snap.Base(); found != "" {
			return found
		}
	}
	return g.Base
}

// importPull imports a pull directory in memory for --from, with cpactl's
// defaults for what the API does not carry, and says so on stderr.
func (g *Globals) importPull(dir string) (*snapshot.Snapshot, error) {
	opts := horizonimport.Options{DIT: ldapschema.DIT{Base: g.Base}}
	if m := g.progress.meter; m != nil {
		opts.Records = m.Stage("importing "+dir, "records", 0)
		defer m.End()
	}
	snap, rep, err := horizonimport.Snapshot(dir, opts)
	if err != nil {
		return nil, importFailed(dir, err)
	}
	fmt.Fprintf(g.IO.Err, "note: %s is a Horizon pull, imported in memory (%s)\n", dir, rep.Summary())
	g.noteImport(rep)
	return snap, nil
}

// noteImport says on stderr where what the API does not carry came from,
// what the import noticed, and what cpactl cannot hold.
func (g *Globals) noteImport(rep *horizonimport.Report) {
	fmt.Fprintf(g.IO.Err, "note: what the REST API does not carry (the pae-* thresholds, RDS hosts' connecting sessions, features and policy thresholds, client computers) comes from %s\n", rep.Source)
	for _, n := range rep.Notes {
		fmt.Fprintln(g.IO.Err, "note: "+n)
	}
	for _, f := range rep.Findings {
		g.warn("%s", f)
	}
}
