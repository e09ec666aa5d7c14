package commands

import (
	"os"
	"path/filepath"

	"github.com/go-ldap/ldap/v3"
	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/directory"
)

func init() { register(newExportCommand) }

type exportOptions struct {
	g    *Globals
	From string
	File string
}

func newExportCommand(g *Globals) *cobra.Command {
	o := &exportOptions{g: g}
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write the whole federation under the base DN as LDIF (a snapshot for --from)",
		Long: `Writes every entry under the base DN as LDIF content records: parents first,
objectClass first, attributes and values sorted, values that are not plain
ASCII base64-encoded. The file loads with ldapadd into an empty server with
cpactl's schema, and every read command accepts it with --from.`,
		Example: `  cpactl export -O federation.ldif
  cpactl resolve --from federation.ldif --user alice --entitlement "Sales Desktops" --pod india-pod-1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.run() },
	}
	cmd.Flags().StringVar(&o.From, "from", "", "re-export an LDIF snapshot (normalizes its order) instead of reading a server")
	cmd.Flags().StringVarP(&o.File, "output-file", "O", "", "write to this file instead of stdout")
	return cmd
}

func (o *exportOptions) run() error {
	st, closeFn, err := o.g.ReadStore(o.From)
	if err != nil {
		return err
	}
	defer closeFn()
	entries, err := st.Find(st.DIT.Base, ldap.ScopeWholeSubtree, "(objectClass=*)")
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return errorf("check -b/--base, or run `cpactl init`", "nothing under %s to export", st.DIT.Base)
	}
	if o.File == "" {
		return directory.WriteLDIF(o.g.IO.Out, entries)
	}
	// Write to a temporary file and rename it, so a failure never leaves a
	// half-written snapshot behind.
	tmp, err := os.CreateTemp(filepath.Dir(o.File), ".cpactl-export-*")
	if err != nil {
		return errorf("", "cannot write %s: %v", o.File, err)
	}
	defer os.Remove(tmp.Name())
	if err := directory.WriteLDIF(tmp, entries); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), o.File); err != nil {
		return errorf("", "cannot write %s: %v", o.File, err)
	}
	o.g.report("exported %d entries to %s", len(entries), o.File)
	return nil
}
