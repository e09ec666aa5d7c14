package commands

import (
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
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
	if o.File == "" {
		// Export buffers and sorts before its first byte, so a failed read
		// writes nothing to stdout.
		n, err := st.Export(o.g.IO.Out)
		if err == nil && n == 0 {
			return errNothingToExport(st.DIT.Base)
		}
		return err
	}
	// Write to a temporary file and rename it, so a failure never leaves a
	// half-written snapshot behind.
	tmp, err := os.CreateTemp(filepath.Dir(o.File), ".cpactl-export-*")
	if err != nil {
		return errorf("", "cannot write %s: %v", o.File, err)
	}
	defer os.Remove(tmp.Name())
	n, err := st.Export(tmp)
	if err == nil && n == 0 {
		err = errNothingToExport(st.DIT.Base)
	}
	if err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), o.File); err != nil {
		return errorf("", "cannot write %s: %v", o.File, err)
	}
	o.g.report("exported %d entries to %s", n, o.File)
	return nil
}

func errNothingToExport(base string) error {
	return errorf("check -b/--base, or run `cpactl init`", "nothing under %s to export", base)
}
