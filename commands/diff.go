package commands

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/output"
	"github.com/cpactl/cpactl/reconcile"
)

type diffOptions struct {
	g *Globals
	readFlags
	File string
}

func newDiffCommand(g *Globals) *cobra.Command {
	o := &diffOptions{g: g}
	cmd := &cobra.Command{
		Use:   "diff FILE.ldif | diff OLD.ldif NEW.ldif",
		Short: "Compare a federation file with the directory, or two files; exit 2 when they differ",
		Long: `Compares the desired state in FILE.ldif (what ` + "`cpactl export`" + ` writes, edited)
with the live directory, or two files as Unix diff does: ` + "`cpactl diff OLD.ldif NEW.ldif`" + `
shows what changes from OLD to NEW (the same as ` + "`diff NEW.ldif --from OLD.ldif`" + `), over the
objects cpactl owns under the base DN: sites, pods, Connection Servers,
pools, farms, RDS hosts, entitlements, home-site rows, users, groups,
computers, sessions, pod assignments and cn=Common. The base entry and the
containers are structure: reported only when missing.

Each entry is added (only in FILE), removed (only in the directory) or
changed, attribute by attribute. Values compare as the schema matches them:
strings ignoring case, DNs as DNs, integers by value, preferred-site lists
in rank order; operational attributes are ignored. In the table, CURRENT
and DESIRED (for two files, the columns are named after them, old then
new) show single values and preferred-site lists whole, and for
attributes with several values only the values that differ (-removed,
+added); DNs are shown without the base; a setting of cn=Common that is
not stored shows the default in force ("98 (default)"), a pod's own
pae-RDS* value that is not stored "(the federation's)". -o json lists
every value as stored.

` + "`cpactl apply FILE.ldif`" + ` makes the directory match (with --prune, it also
deletes what is removed). Exit 0 when identical, 2 when they differ.`,
		Example: `  cpactl export -O federation.ldif
  sed -i '/^dn: cn=blr-desktops,/,/^$/ s/^pae-Capacity: .*/pae-Capacity: 40/' federation.ldif
  cpactl diff federation.ldif
  cpactl diff last-week.ldif federation.ldif
  cpactl diff federation.ldif --from last-week.ldif -o json | jq '.entries[].dn'`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.File = args[len(args)-1]
			if len(args) == 2 {
				if o.From != "" {
					return errorf("compare two files as `cpactl diff OLD.ldif NEW.ldif`, or a file with --from OLD.ldif",
						"--from and two files given")
				}
				o.From = args[0]
			}
			return o.g.execute(o)
		},
	}
	o.readFlags.add(cmd)
	return cmd
}

func (o *diffOptions) run() error {
	p, err := o.printer(o.g)
	if err != nil {
		return err
	}
	snap, err := o.g.loadFederationFile(o.File)
	if err != nil {
		return err
	}
	st, closeFn, err := o.g.ReadStore(o.From)
	if err != nil {
		return err
	}
	defer closeFn()
	desired := reconcile.NewStateFromSnapshot(st.DIT, snap)
	if err := checkFileBase(snap, st.DIT.Base, o.File); err != nil {
		return err
	}
	for _, pr := range append(append([]reconcile.Problem(nil), desired.Problems...), desired.Foreign...) {
		o.g.warn("%s: %s (not compared)", o.File, pr)
	}
	columns := diffColumns{current: "current", desired: "desired"}
	if o.From != "" {
		columns = diffColumns{current: o.From, desired: o.File, named: true}
	}
	r, err := o.g.showDiff(p, st, desired, columns)
	if err != nil || r.Identical {
		return err
	}
	return silentExit(ExitDiff)
}

// showDiff compares a desired state with the directory of st and prints
// the differences (diff's table, or p's format), with a summary on
// stderr when there are some: what diff and horizon sync show. columns
// names the two value columns.
func (g *Globals) showDiff(p output.Printer, st *directory.Store, desired *reconcile.State, columns diffColumns) (*reconcile.Report, error) {
	done := g.track(st, "reading", "entries", 0)
	current, err := currentState(st, desired)
	done()
	if err != nil {
		return nil, err
	}
	r := reconcile.Compare(desired, current)
	err = p.Print(r, func(w io.Writer) error { return diffTable(w, r, st.DIT.Base, columns) })
	if err != nil {
		return nil, err
	}
	if !r.Identical {
		fmt.Fprintf(g.IO.Err, "diff: %d added, %d removed, %d changed, %d unchanged\n",
			r.Summary.Added, r.Summary.Removed, r.Summary.Changed, r.Summary.Unchanged)
	}
	return r, nil
}

// loadFederationFile reads a desired state.
func (g *Globals) loadFederationFile(path string) (*snapshot.Snapshot, error) {
	snap, err := g.loadSnapshot(path)
	if err != nil {
		return nil, errorf("pass an LDIF file of entries, as `cpactl export` writes it", "%v", err)
	}
	return snap, nil
}

// checkFileBase refuses a file none of whose entries lies under the base:
// it was written for another base (-b).
func checkFileBase(snap *snapshot.Snapshot, base, file string) error {
	if snap.Len() == 0 || snap.Holds(base) {
		return nil
	}
	return errorf("pass -b with the file's base DN", "%s holds no entry under the base %s", file, base)
}

// currentState reads every entry under the store's base against desired,
// streamed: only the entries that differ are kept
// (reconcile.NewCurrentState). A base the server does not hold yet is an
// empty directory (apply creates it).
func currentState(st *directory.Store, desired *reconcile.State) (*reconcile.State, error) {
	current := reconcile.NewCurrentState(desired)
	err := st.EachEntry(current.Add)
	var layout *ldapconn.LayoutError
	if errors.As(err, &layout) && !layout.BaseExists {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	return current, nil
}

// diffColumns heads the two value columns of the table: "current" and
// "desired" against the directory, the files' names (as given, named)
// when two files are compared.
type diffColumns struct {
	current, desired string
	named            bool
}

// diffTable renders a report: one row per added or removed entry, one row
// per attribute of a changed entry.
func diffTable(w io.Writer, r *reconcile.Report, base string, columns diffColumns) error {
	if r.Identical {
		_, err := fmt.Fprintln(w, "diff: no differences")
		return err
	}
	var rows [][]string
	for _, e := range r.Entries {
		if e.Change != reconcile.Changed {
			rows = append(rows, []string{e.Change, e.Object(), "", "", ""})
			continue
		}
		for _, a := range e.Attributes {
			current, desired := showChange(e.Kind, a, base)
			rows = append(rows, []string{e.Change, e.Object(), a.Attribute, current, desired})
		}
	}
	header := []string{"change", "object", "attribute", columns.current, columns.desired}
	return output.RowsKeeping(w, header, []bool{3: columns.named, 4: columns.named}, rows)
}

// showChange renders both sides of an attribute change for the table: a
// preferred-site list whole, in rank order ("1. UK, 2. US"); single values
// whole; several values as the ones that differ (-removed, +added).
func showChange(kind string, a reconcile.AttributeChange, base string) (current, desired string) {
	if ldapschema.IsOrderedAttribute(a.Attribute) {
		return showRanked(a.Current), showRanked(a.Desired)
	}
	if len(a.Current) <= 1 && len(a.Desired) <= 1 {
		return showSingle(kind, a.Attribute, a.Current, base), showSingle(kind, a.Attribute, a.Desired, base)
	}
	return showValues(a.Attribute, a.Removed, "-", base), showValues(a.Attribute, a.Added, "+", base)
}

// showSingle renders one side of a single-valued change; a setting not
// stored shows what is in force instead of "(none)": the default in
// cn=Common ("98 (default)"), the federation's value on a pod.
func showSingle(kind, attr string, values []string, base string) string {
	if len(values) == 0 {
		if set, ok := ldapschema.LookupSetting(attr); ok {
			switch kind {
			case objkind.Settings:
				return strconv.Itoa(set.Default) + " (default)"
			case objkind.Pod:
				return "(the federation's)"
			}
		}
	}
	return showValues(attr, values, "", base)
}

func showRanked(values []string) string {
	if len(values) == 0 {
		return "(none)"
	}
	list, err := ldapschema.DecodePreferredSites(values)
	if err != nil || list.Gaps {
		return strings.Join(values, ", ")
	}
	parts := make([]string, len(list.Sites))
	for i, s := range list.Sites {
		parts[i] = strconv.Itoa(i+1) + ". " + s.Name
	}
	return strings.Join(parts, ", ")
}

func showValues(attr string, values []string, mark, base string) string {
	if len(values) == 0 {
		if mark != "" {
			return ""
		}
		return "(none)"
	}
	info, _ := ldapschema.LookupAttribute(attr)
	parts := make([]string, len(values))
	for i, v := range values {
		if info.Equality == ldapschema.EqualityDN {
			v = relativeDN(v, base)
		}
		parts[i] = mark + v
	}
	return strings.Join(parts, ", ")
}

// relativeDN shortens a DN under base for people: "uid=bob,ou=People".
func relativeDN(dn, base string) string {
	suffix := "," + strings.ToLower(base)
	if len(dn) > len(suffix) && strings.ToLower(dn[len(dn)-len(suffix):]) == suffix {
		return dn[:len(dn)-len(suffix)]
	}
	return dn
}
