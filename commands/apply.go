package commands

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/lint"
	"github.com/cpactl/cpactl/output"
	"github.com/cpactl/cpactl/quote"
	"github.com/cpactl/cpactl/reconcile"
)

type applyOptions struct {
	g *Globals
	writeFlags
	File   string
	Prune  bool
	Force  bool
	Yes    bool
	Atomic bool
	// WaitReplicas, when positive, is how long to wait after the write for
	// the other servers of -H to hold the provider's content.
	WaitReplicas time.Duration
}

func newApplyCommand(g *Globals) *cobra.Command {
	o := &applyOptions{g: g}
	cmd := &cobra.Command{
		Use:   "apply FILE.ldif",
		Short: "Make the directory match a federation file (validated first; idempotent)",
		Long: `Makes the live directory match the desired state in FILE.ldif (what
` + "`cpactl export`" + ` writes, edited): adds the entries it lacks (parents first, and
entries before the ones that refer to them), rewrites the attributes that
differ (only attributes cpactl's schema or the standard classes define,
never operational ones), and with --prune deletes the objects FILE does not
hold (children and referrers first). The base entry, the containers and
cn=Common are never deleted. ` + "`cpactl diff FILE.ldif`" + ` shows the same differences.

Everything is checked before anything is written: FILE parses, every entry
lies under the base DN, is a cpactl object or container with known object
classes and allowed attributes, has its parent, and ` + "`cpactl lint`" + ` finds
nothing in the desired state (--force applies despite lint findings).

The writes go in one LDAP transaction when the server can take them (see
docs/diff-apply.md for slapd 2.5's limits): a plan of more than 4,000
writes goes in several, each of which leaves no dangling reference, as
slapd commits a transaction in time that grows with the square of its
size; --atomic writes up to 20,000 in one, and refuses, writing nothing,
a plan the server cannot take in one. Each modify asserts the values it
read, so a concurrent change fails the whole apply with exit 5. Running
apply again prints "unchanged". Deletes ask for confirmation on a terminal
and need --yes elsewhere.

An apply in several transactions that stops part way (an error, a server
that went down, Ctrl-C) exits 8: the transactions before it are written
and the directory is consistent; run it again to finish. Ctrl-C aborts
the transaction being sent (nothing of it is written: exit 130 when it
was the first) and waits for a commit in flight.

On a replicated directory, --wait-replicas waits (60s, or the duration
given: --wait-replicas=5m) after the write until every other server of -H
holds the provider's contextCSN and the same entries (counts and a digest
per container, as ` + "`cpactl status`" + ` compares them). A replica whose refresh
started while the provider committed the transaction can hold the
provider's contextCSN without the transaction's first writes, for good:
the provider then writes each entry the replica lacks again (a no-op
replace of objectClass, one plain modify each, which replicates), and
apply waits for it. Exit 2 when a replica has not caught up when the wait
ends, or holds entries the provider does not (re-initialise it:
docs/replication.md); the change itself is written. With an unchanged
FILE, apply --wait-replicas only checks (and completes) the replicas.`,
		Example: `  cpactl export -O federation.ldif
  $EDITOR federation.ldif
  cpactl diff federation.ldif
  cpactl apply federation.ldif --dry-run
  cpactl apply federation.ldif
  cpactl apply federation.ldif --prune --yes
  cpactl apply federation.ldif --atomic
  cpactl -H ldap://replica1,ldap://replica2,ldap://provider apply federation.ldif --atomic --wait-replicas`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.File = args[0]
			return o.g.execute(o)
		},
	}
	o.writeFlags.add(cmd)
	cmd.Flags().BoolVar(&o.Prune, "prune", false, "also delete the objects FILE does not hold")
	cmd.Flags().BoolVar(&o.Force, "force", false, "apply even when lint finds problems in FILE (cpactl lint --from FILE lists them)")
	cmd.Flags().BoolVar(&o.Yes, "yes", false, "delete without asking (needed with --prune when stdin or stdout is not a terminal)")
	cmd.Flags().BoolVar(&o.Atomic, "atomic", false, "all or nothing: write the whole change in one transaction (up to 20,000 writes; slower beyond 4,000), or refuse it, writing nothing, when the server cannot take it in one")
	cmd.Flags().DurationVar(&o.WaitReplicas, "wait-replicas", 0, "after the write, wait up to this long (60s when given alone) until the other servers of -H hold the provider's entries, having the provider send again what a replica lacks; exit 2 if one does not")
	cmd.Flags().Lookup("wait-replicas").NoOptDefVal = "60s"
	return cmd
}

func (o *applyOptions) run() error {
	if o.WaitReplicas < 0 {
		return errorf("pass a positive duration, e.g. --wait-replicas=2m", "--wait-replicas %s is negative", o.WaitReplicas)
	}
	if o.WaitReplicas > 0 && len(o.g.URLs) < 2 {
		return errorf("list the replicas and the provider in -H: -H ldap://replica1,ldap://provider",
			"--wait-replicas waits for the other servers of -H, and -H names %d", len(o.g.URLs))
	}
	check := fileCheck{errOut: o.g.IO.Err, file: o.File, force: o.Force, warn: o.g.warn, g: o.g}
	_, desired, err := check.desiredState(o.g.Base)
	if err != nil {
		return err
	}

	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	return o.applyState(st, check, desired)
}

// applyState makes the directory of st match a desired state already
// checked on its own (fileCheck.checkDesired): plan, confirm, write,
// report. apply and horizon sync --apply share it.
func (o *applyOptions) applyState(st *directory.Store, check fileCheck, desired *reconcile.State) error {
	st.OneTransaction = o.Atomic
	plan, _, err := check.plan(st, desired, o.Prune)
	if err != nil {
		return err
	}
	defer o.noteKept(plan)
	if plan.Empty() {
		o.g.report("unchanged: the directory matches %s", o.File)
		return o.waitReplicas(st)
	}
	if o.Atomic {
		// Before the dry run and the confirmation: nothing to confirm
		// when it would be refused.
		if ok, why := st.Atomic(&plan.Plan); !ok {
			return &Failure{Code: ExitError, Err: &directory.NotAtomicError{Why: why},
				Hint: "run apply without --atomic to write it in steps, each of which leaves the directory consistent, or apply the file in smaller parts"}
		}
	}
	if o.DryRun {
		reportPlan(o.g, &plan.Plan, true)
		notePlanSteps(o.g, st, &plan.Plan)
		return nil
	}
	if plan.Deletes > 0 {
		if err := o.confirmDeletes(plan); err != nil {
			return err
		}
	}
	done := o.g.track(st, "writing", "writes", int64(len(plan.Writes)))
	err = st.ApplyPlan(&plan.Plan)
	done()
	if err != nil {
		return err
	}
	reportPlan(o.g, &plan.Plan, false)
	warnStepwise(o.g, &plan.Plan)
	fmt.Fprintf(o.g.IO.Err, "apply: %d added, %d updated, %d deleted\n", plan.Adds, plan.Updates, plan.Deletes)
	return o.waitReplicas(st)
}

// waitReplicas runs --wait-replicas: one line on stderr per replica.
func (o *applyOptions) waitReplicas(st *directory.Store) error {
	if o.WaitReplicas == 0 {
		return nil
	}
	opts, err := o.g.dialOptions()
	if err != nil {
		return err
	}
	checks, err := st.WaitReplicas(opts, o.WaitReplicas)
	for _, c := range checks {
		if !c.CaughtUp {
			continue
		}
		if c.Resent > 0 {
			fmt.Fprintf(o.g.IO.Err, "replicas: %s lacked %d entries the provider holds (a refresh during a commit): the provider sent them again; it holds the provider's %d entries\n", c.URL, c.Resent, c.Entries)
		} else {
			fmt.Fprintf(o.g.IO.Err, "replicas: %s holds the provider's %d entries\n", c.URL, c.Entries)
		}
	}
	return err
}

// fileCheck is how apply checks a desired federation file before writing
// anything; a what-if --with FILE checks the file the same way, with the
// same messages.
type fileCheck struct {
	errOut io.Writer // where the problems and lint findings are listed
	file   string
	force  bool // apply despite lint findings
	warn   func(format string, args ...any)
	g      *Globals // loads the file and shows progress (nil: neither shown)
}

// desiredState reads the file and checks it on its own: it parses, lies
// under base, holds only cpactl's objects and containers, and lint finds
// nothing in it (unless force).
func (c fileCheck) desiredState(base string) (*snapshot.Snapshot, *reconcile.State, error) {
	g := c.g
	if g == nil {
		g = &Globals{}
	}
	snap, err := g.loadFederationFile(c.file)
	if err != nil {
		return nil, nil, err
	}
	desired, err := c.checkDesired(snap, base)
	if err != nil {
		return nil, nil, err
	}
	return snap, desired, nil
}

// checkDesired checks a desired state on its own: it lies under base,
// holds only cpactl's objects and containers, and lint finds nothing in
// it (unless force).
func (c fileCheck) checkDesired(snap *snapshot.Snapshot, base string) (*reconcile.State, error) {
	if err := checkFileBase(snap, base, c.file); err != nil {
		return nil, err
	}
	desired := reconcile.NewStateFromSnapshot(ldapschema.DIT{Base: base}, snap)
	if problems := append(append([]reconcile.Problem(nil), desired.Problems...), desired.Foreign...); len(problems) > 0 {
		return nil, c.refuse(problems, "correct the file: it may hold only cpactl's objects and containers under the base (check -b)")
	}
	if snap.Len() == 0 {
		return nil, errorf("pass the file `cpactl export` writes", "%s holds no entries; nothing was written", c.file)
	}
	if err := c.lint(snap, base); err != nil {
		return nil, err
	}
	return desired, nil
}

// plan compares the desired state with the directory of st and plans the
// writes, refusing what cannot be written (a structural class that
// changes, a parent that exists nowhere, an entry that is not cpactl's).
func (c fileCheck) plan(st *directory.Store, desired *reconcile.State, prune bool) (*reconcile.Plan, *reconcile.Report, error) {
	done := func() {}
	if c.g != nil {
		done = c.g.track(st, "reading", "entries", 0)
	}
	current, err := currentState(st, desired)
	done()
	if err != nil {
		return nil, nil, err
	}
	report := reconcile.Compare(desired, current)
	plan, problems := reconcile.PlanApply(desired, current, report, prune)
	if len(problems) > 0 {
		return nil, nil, c.refuse(problems, "correct the file or the directory, then apply again")
	}
	return plan, report, nil
}

// lint refuses a desired state with lint findings, unless force.
func (c fileCheck) lint(snap *snapshot.Snapshot, base string) error {
	inv, err := directory.NewStore(snap, base).Inventory()
	var layout *ldapconn.LayoutError
	if errors.As(err, &layout) {
		return nil // the file holds no container: no object to check
	}
	if err != nil {
		return err
	}
	findings := lint.Run(*inv)
	if len(findings) == 0 {
		return nil
	}
	for _, f := range findings {
		output.Fprintf(c.errOut, "  %s %s: %s: %s\n", f.Kind, f.Object, f.Check, f.Message)
	}
	n := len(findings)
	if c.force {
		c.warn("%s: applying despite %d lint %s (--force)", c.file, n, plural(n, "finding", "findings"))
		return nil
	}
	return errorf(fmt.Sprintf("correct the file (`cpactl lint --from %s` names each fix), or pass --force", quote.Shell(c.file)),
		"%s: lint found %d %s in the desired state; nothing was written", c.file, n, plural(n, "problem", "problems"))
}

// refuse lists problems on stderr and fails with exit 1.
func (c fileCheck) refuse(problems []reconcile.Problem, hint string) error {
	for _, p := range problems {
		output.Fprintf(c.errOut, "  %s\n", p)
	}
	n := len(problems)
	return errorf(hint, "%s: %d %s; nothing was written", c.file, n, plural(n, "problem", "problems"))
}

// confirmDeletes asks before pruning (or needs --yes).
func (o *applyOptions) confirmDeletes(plan *reconcile.Plan) error {
	if o.g.Interactive != nil && o.g.Interactive() && !o.Yes {
		for _, w := range plan.Writes {
			output.Fprintf(o.g.IO.Err, "  %s\n", w.Planned())
		}
	}
	question := fmt.Sprintf("Apply %s, deleting %d %s?", o.File, plan.Deletes, plural(plan.Deletes, "object", "objects"))
	return confirm(o.g, o.Yes, fmt.Sprintf("applying %s with --prune (%d %s to delete)", o.File, plan.Deletes,
		plural(plan.Deletes, "object", "objects")), question)
}

// noteKept says which objects only the directory holds, when --prune was
// not given.
func (o *applyOptions) noteKept(plan *reconcile.Plan) {
	if plan == nil || len(plan.Kept) == 0 {
		return
	}
	const shown = 10
	var names []string
	for i, k := range plan.Kept {
		if i == shown {
			names = append(names, fmt.Sprintf("and %d more (cpactl diff lists them)", len(plan.Kept)-shown))
			break
		}
		names = append(names, k.Object())
	}
	n := len(plan.Kept)
	o.g.note("%d %s only in the directory, kept (--prune deletes %s): %s", n,
		plural(n, "object is", "objects are"), plural(n, "it", "them"), strings.Join(names, ", "))
}
