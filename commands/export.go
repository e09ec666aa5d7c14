package commands

import (
	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/reconcile"
)

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
		Long: `Writes the federation under the base DN as LDIF content records: parents
first, objectClass first, attributes and values sorted, values that are not
plain ASCII base64-encoded. The file loads with ldapadd (or cpactl apply)
into an empty server with cpactl's schema, and every read command accepts it
with --from.

Only cpactl's layout is written: its containers, cn=Common and its objects.
Other entries under the base (a service account, an ou=Admins) are left out
and counted on stderr, and no secret is ever written: userPassword and every
other password attribute are dropped, from users too. The output is
streamed and sorted with bounded memory, whatever the directory's size.`,
		Example: `  cpactl export -O federation.ldif
  cpactl resolve --from federation.ldif --user alice --entitlement "Sales Desktops" --pod india-pod-1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	cmd.Flags().StringVar(&o.From, "from", "", "re-export an LDIF snapshot (normalizes its order), or export a Horizon pull directory, instead of reading a server")
	cmd.Flags().StringVarP(&o.File, "output-file", "O", "", "write to this file instead of stdout")
	addAtFlag(cmd)
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
		x := reconcile.NewExporter(st.DIT)
		done := func() {}
		if !isTerminal(o.g.IO.Out) { // a bar would land among the LDIF
			done = o.g.track(st, "reading", "entries", 0)
		}
		n, err := st.Export(o.g.IO.Out, x.Keep)
		done()
		if err == nil && n == 0 {
			return errNothingToExport(st.DIT.Base)
		}
		o.noteLeftOut(x)
		return err
	}
	// A regular file is replaced only when the whole snapshot is written,
	// so a failure never leaves half of one behind (docs/conventions.md).
	out, err := createOutput(o.File, 0o600)
	if err != nil {
		return err
	}
	defer out.Discard()
	x := reconcile.NewExporter(st.DIT)
	done := o.g.track(st, "reading", "entries", 0)
	n, err := st.Export(out, x.Keep)
	done()
	if err == nil && n == 0 {
		err = errNothingToExport(st.DIT.Base)
	}
	if err == nil {
		err = out.Commit()
	}
	if err != nil {
		return outputFailed(err)
	}
	o.g.report("exported %d entries to %s", n, o.File)
	o.noteLeftOut(x)
	return nil
}

// noteLeftOut says on stderr what export did not write.
func (o *exportOptions) noteLeftOut(x *reconcile.Exporter) {
	if x.Foreign > 0 {
		o.g.warn("left out %d %s that %s not cpactl's (%s%s): export writes cpactl's layout only",
			x.Foreign, plural(x.Foreign, "entry", "entries"), plural(x.Foreign, "is", "are"), x.Example,
			map[bool]string{true: ", ...", false: ""}[x.Foreign > 1])
	}
	if x.Secrets > 0 {
		o.g.warn("left out %d password %s: export never writes secrets", x.Secrets, plural(x.Secrets, "value", "values"))
	}
	if x.Unknown > 0 {
		o.g.warn("left out %d %s that no schema cpactl knows defines", x.Unknown, plural(x.Unknown, "attribute", "attributes"))
	}
}

func errNothingToExport(base string) error {
	return errorf("check -b/--base, or run `cpactl init`", "nothing under %s to export", base)
}
