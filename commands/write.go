// The write road: every create, update and delete of cpactl's objects
// goes through the steps here, which each noun fills with its own fields
// and messages. The order of the steps, the idempotency and what is
// printed when are decided once:
//
//   - create: createOrUnchanged (an identical object is "unchanged", a
//     different one is refused, naming the attributes that differ
//     (repeated), a new one is added after --dry-run);
//   - update: updateOne reads the object, applies the flags to a copy and
//     plans the modify of what changed and, with --rename, the rename and
//     every reference that follows (planUpdate); applyPlan applies the
//     plan, or shows it with --dry-run, or says "unchanged";
//   - delete: newNamedDeleteCommand and runDelete (refused while entries
//     refer to the object, --force removes them in the same transaction,
//     a question or --yes before anything is written).
//
// A plan is applied by directory.Store.ApplyPlan, which makes each write
// assert that the entry is still as this command read it (a
// *ldapclient.ConflictError otherwise): a rename and a plain update differ
// only in the plan's content.

package commands

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/output"
	"github.com/cpactl/cpactl/quote"
	"github.com/cpactl/cpactl/rules"
)

// creation is one `NOUN create`.
type creation[T any] struct {
	kind  string // an objkind word: how messages name the object
	name  string // as given
	where string // " in pod P" for the created line, or ""
	dn    string
	attrs ldapschema.Attrs // the entry to add
	// read finds the existing object of that name; a
	// *ldapclient.NotFoundError when there is none.
	read func() (T, error)
	// stored gives an existing object's name as stored and its entry, for
	// the comparison with attrs: compared are the attributes that must be
	// the same for the create to be "unchanged", counters the live ones
	// among them that a feed moves and that never decide
	// (rules.RepeatedCreate).
	stored             func(existing T) (name string, attrs ldapschema.Attrs)
	compared, counters []string
	// other, when set, refuses an existing object before the comparison
	// (one of that name in another pod, of another pool kind).
	other func(existing T) error
	// fix is the hint of a refused repeated create; unset, it points to
	// `cpactl NOUN update NAME`.
	fix string
	// check, when set, runs for a new object before anything is written or
	// --dry-run reports (a free slot in the layout, ...).
	check func() error
}

// createOrUnchanged runs c: "KIND NAME: unchanged" for an identical
// object, the refusal for a different one (repeated), else "would create"
// (dry run) or the add, and "created KIND NAME" only once the server
// confirmed it.
func createOrUnchanged[T any](g *Globals, st *directory.Store, dryRun bool, c creation[T]) error {
	existing, err := c.read()
	switch {
	case err == nil:
		if c.other != nil {
			if err := c.other(existing); err != nil {
				return err
			}
		}
		stored, attrs := c.stored(existing)
		note, err := repeated(c.kind, stored, c.attrs, attrs, c.compared, c.counters, c.fix)
		if err != nil {
			return err
		}
		g.report("%s %s: unchanged%s", c.kind, stored, note)
		return nil
	case !directory.IsNotFound(err):
		return err
	}
	if c.check != nil {
		if err := c.check(); err != nil {
			return err
		}
	}
	if dryRun {
		g.report("would create %s %s%s", c.kind, c.name, c.where)
		return nil
	}
	if err := st.Add(st.Client, c.dn, c.attrs); err != nil {
		return existsHint(err, c.kind, c.name)
	}
	g.report("created %s %s%s", c.kind, c.name, c.where)
	return nil
}

// repeated compares the object a create would write (want) with the one
// of that name that exists (rules.RepeatedCreate): the refusal "KIND NAME
// exists with a different capacity, site (UK)" (differentWords) when a
// compared attribute differs, with fix as its hint, else the note of the
// "unchanged" line (live counters left as they are, or none).
func repeated(kind, name string, want, existing ldapschema.Attrs, compared, counters []string, fix string) (string, error) {
	r := rules.RepeatedCreate(want, existing, compared, counters)
	if r.Unchanged() {
		return countersNote(r), nil
	}
	if fix == "" {
		fix = fmt.Sprintf("use `cpactl %s update %s` to change it", cliNoun(kind), quote.Shell(name))
	}
	return "", errorf(fix, "%s %s exists with %s", kind, name, aDifferent(r.Different, differentWords(r.Different, existing)))
}

// countersNote says when a repeated create left different live counters
// alone.
func countersNote(r rules.Repeat) string {
	if !r.CountersDiffer {
		return ""
	}
	return " (live counters left as they are)"
}

// modification is one `NOUN update`: the flags applied to the object as
// read, and with rename its new name.
type modification[T any] struct {
	kind string // an objkind word
	// read finds the object; apply sets the flags on a copy of it and
	// checks the rules (with any read they need), before anything is
	// written.
	read  func() (T, error)
	apply func(current T, next *T) error
	// name, dn and attrs describe a record: its name as stored, its DN
	// and its entry; managed are the attributes the update may change.
	name    func(T) string
	dn      func(T) string
	attrs   func(T) ldapschema.Attrs
	managed []string
	// rename, when set and not the current name, renames the object: no
	// other object of the kind may hold the name (lookup finds the DN of
	// the one that does, or a *ldapclient.NotFoundError), and every
	// reference follows in the same plan (Store.PlanRename).
	rename string
	lookup func(name string) (dn string, err error)
}

// updateOne runs m: the plan of what changed (planUpdate), applied with
// applyPlan: "updated KIND NAME (what)" once the server confirmed it, the
// rename's lines, or "unchanged".
func updateOne[T any](g *Globals, st *directory.Store, dryRun bool, m modification[T]) error {
	current, err := m.read()
	if err != nil {
		return err
	}
	next := current
	if err := m.apply(current, &next); err != nil {
		return err
	}
	name, dn := m.name(current), m.dn(current)
	var rename *directory.Plan
	if m.rename != "" && m.rename != name {
		if err := checkFreeName(m.rename, dn, m.lookup, m.kind); err != nil {
			return err
		}
		if rename, err = st.PlanRename(m.kind, name, dn, m.rename); err != nil {
			return err
		}
	}
	plan := planUpdate(m.kind, name, dn, m.attrs(next).Changes(m.attrs(current), m.managed...), rename)
	return applyPlan(g, st, plan, dryRun, m.kind+" "+name)
}

// planUpdate is the plan of one update of the object kind name at dn: the
// modify of changes, "update KIND NAME (what)" in the flags' words, then
// the writes of rename (nil: none). A failed assertion names the object,
// or what the rename protects.
func planUpdate(kind, name, dn string, changes ldapschema.Changes, rename *directory.Plan) *directory.Plan {
	plan := &directory.Plan{Conflict: kind + " " + name}
	if len(changes) > 0 {
		plan.Add(directory.ModifyWrite("update", fmt.Sprintf("%s %s (%s)", kind, name, attrWords(changes.Attrs())), dn, changes))
	}
	if rename != nil {
		plan.Add(rename.Writes...)
		plan.Conflict = rename.Conflict
	}
	return plan
}

// applyPlan applies (or, with dryRun, shows) a plan; an empty plan is
// "WHAT: unchanged". Each line is printed once the server confirmed the
// plan.
func applyPlan(g *Globals, st *directory.Store, plan *directory.Plan, dryRun bool, what string) error {
	if plan.Empty() {
		g.report("%s: unchanged", what)
		return nil
	}
	if !dryRun {
		if err := st.ApplyPlan(plan); err != nil {
			return err
		}
	}
	reportPlan(g, plan, dryRun)
	if dryRun {
		notePlanSteps(g, st, plan)
	}
	warnStepwise(g, plan)
	return nil
}

// namedDelete describes `NOUN delete NAME`, the one delete every named
// object (site, pod, Connection Server, pool, farm, RDS host, entitlement,
// user, group, computer) shares: look the object up, refuse while entries
// refer to it (listing them) or, with --force, remove them in the same
// transaction (runDelete).
type namedDelete struct {
	kind                        string // an objkind word
	use                         string // "delete NAME" unless set
	short, long, example, force string // help texts; force documents --force
	// hint says what to do when referrers block the delete of the object
	// named stored (as the directory spells it).
	hint func(stored string) string
	// lookup finds the object: its name as stored and its DN. Unset, it is
	// Store.NamedEntry of kind.
	lookup func(st *directory.Store, name string) (stored, dn string, err error)
	// flags, when set, names the object by flags of the noun's own instead
	// of one NAME argument (`assignment delete --user U --entitlement E`):
	// it adds them to the command and returns their check, run before
	// anything is read; lookup then reads them, and its name is "".
	flags func(cmd *cobra.Command) (check func() error)
}

type namedDeleteOptions struct {
	g *Globals
	deleteFlags
	spec  namedDelete
	Name  string
	check func() error // of spec.flags
}

func newNamedDeleteCommand(g *Globals, spec namedDelete) *cobra.Command {
	o := &namedDeleteOptions{g: g, spec: spec}
	use := spec.use
	if use == "" {
		use = "delete NAME"
	}
	cmd := &cobra.Command{
		Use:     use,
		Short:   spec.short,
		Long:    spec.long,
		Example: spec.example,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				o.Name = args[0]
			}
			return o.g.execute(o)
		},
	}
	if spec.flags != nil {
		cmd.Args = cobra.NoArgs
		o.check = spec.flags(cmd)
	}
	o.deleteFlags.add(cmd, spec.force)
	return cmd
}

func (o *namedDeleteOptions) run() error {
	if o.check != nil {
		if err := o.check(); err != nil {
			return err
		}
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	lookup := o.spec.lookup
	if lookup == nil {
		lookup = func(st *directory.Store, name string) (string, string, error) {
			e, err := st.NamedEntry(o.spec.kind, name)
			if err != nil {
				return "", "", err
			}
			return ldapschema.NameOf(e.DN), e.DN, nil
		}
	}
	stored, dn, err := lookup(st, o.Name)
	if err != nil {
		return err
	}
	return runDelete(o.g, st, o.spec.kind, stored, dn, o.deleteFlags, o.spec.hint(stored))
}

// runDelete deletes the entry dn of kind and name: without --force it
// refuses when entries refer to it or lie below it, listing them on stderr;
// with --force it removes them too, in the same transaction (or in steps,
// see directory.Store.ApplyPlan). It asks for confirmation (or --yes)
// unless --dry-run.
func runDelete(g *Globals, st *directory.Store, kind, name, dn string, f deleteFlags, forceHint string) error {
	plan, err := st.PlanDelete(kind, name, dn)
	if err != nil {
		return err
	}
	if plan.Blocked() && !f.Force {
		output.Fprintf(g.IO.Err, "%s %s is referred to by:\n", kind, name)
		for _, r := range append(append([]directory.Referrer(nil), plan.Children...), plan.Referrers...) {
			output.Fprintf(g.IO.Err, "  %s %s: %s\n", r.Kind, r.Name, r.Via)
		}
		n := len(plan.Children) + len(plan.Referrers)
		return errorf(forceHint, "cannot delete %s %s: %d %s to it", kind, name, n, plural(n, "entry refers", "entries refer"))
	}
	if f.DryRun {
		for _, w := range plan.Writes {
			g.report("%s", w.Planned())
		}
		notePlanSteps(g, st, &plan.Plan)
		return nil
	}
	question := fmt.Sprintf("Delete %s %s?", kind, name)
	if len(plan.Writes) > 1 {
		if g.Interactive != nil && g.Interactive() && !f.Yes {
			for _, w := range plan.Writes {
				output.Fprintf(g.IO.Err, "  %s\n", w.Planned())
			}
		}
		question = fmt.Sprintf("Delete %s %s and make the %d changes listed?", kind, name, len(plan.Writes))
	}
	if err := confirm(g, f.Yes, fmt.Sprintf("deleting %s %s", kind, name), question); err != nil {
		return err
	}
	if err := st.ApplyPlan(&plan.Plan); err != nil {
		return err
	}
	for _, w := range plan.Writes {
		g.report("%s", w.Done())
	}
	warnStepwise(g, &plan.Plan)
	return nil
}

// warnStepwise says when the server could not take a plan in one
// transaction (see directory.Store.ApplyPlan).
func warnStepwise(g *Globals, p *directory.Plan) {
	if p.Split {
		g.warn("the plan held %d writes, more than one transaction takes: it went in %d transactions, each of which left no dangling reference",
			len(p.Writes), p.Transactions)
	}
	if p.Stepwise {
		g.warn("the server cannot delete an entry with children in a transaction, so the change went in steps: the other writes in transactions, each such entry moved out with its children in one operation, referrers first")
	}
}

// notePlanSteps says, for a dry run, when the server will not take the plan
// in one transaction: in the plan's output and as a warning.
func notePlanSteps(g *Globals, st *directory.Store, p *directory.Plan) {
	if atomic, why := st.Atomic(p); !atomic {
		g.report("would apply in steps, not in one transaction: %s", why)
		g.warn("%s", why)
	}
}

// reportPlan prints a plan's lines: done, or planned with --dry-run.
func reportPlan(g *Globals, p *directory.Plan, dryRun bool) {
	for _, w := range p.Writes {
		if dryRun {
			g.report("%s", w.Planned())
		} else {
			g.report("%s", w.Done())
		}
	}
}

// existsHint explains an "already exists" from a concurrent create.
func existsHint(err error, kind, name string) error {
	if directory.IsAlreadyExists(err) {
		return &Failure{Code: ExitConflict, Err: fmt.Errorf("%s %s was created by someone else meanwhile", kind, name),
			Hint: fmt.Sprintf("run `cpactl %s show %s` and update it if needed", cliNoun(kind), name)}
	}
	return err
}

// checkFreeName refuses a rename onto a name another object of the kind
// holds; a change of case only of the object's own name is allowed.
func checkFreeName(newName, ownDN string, lookup func(string) (string, error), kind string) error {
	dn, err := lookup(newName)
	var nf *ldapclient.NotFoundError
	switch {
	case errors.As(err, &nf):
		return nil
	case err != nil:
		return err
	case ldapschema.EqualDN(dn, ownDN):
		return nil
	}
	return errorf(fmt.Sprintf("pick another name, or delete %s %s first", kind, ldapschema.NameOf(dn)),
		"%s %s already exists", kind, ldapschema.NameOf(dn))
}

// checkFreeSlot refuses to create an entry where another one of a
// different kind sits: pools, farms and Connection Servers of a pod share
// one namespace in the directory (cn=NAME below the pod).
func checkFreeSlot(st *directory.Store, dn, kind, name, parent string) error {
	e, err := st.Entry(dn, "objectClass")
	if err != nil || e == nil {
		return err
	}
	other, _ := directory.DescribeEntry(e)
	return errorf("pick another name", "cannot create %s %s: %s already holds a %s of that name", kind, name, parent, other)
}

func anyChanged(changed func(string) bool, names ...string) bool {
	for _, n := range names {
		if changed(n) {
			return true
		}
	}
	return false
}

// userError adds the hint to a malformed user argument; a missing user,
// also one whose domain differs (a *directory.UserDomainError), stays a
// not-found error (exit 3).
func userError(err error) error {
	var nf *ldapclient.NotFoundError
	if err == nil || errors.As(err, &nf) {
		return err
	}
	var form *directory.UserNameError
	if errors.As(err, &form) {
		return errorf(`write uid, DOMAIN\uid or uid@domain, with the user's own domain`, "%v", err)
	}
	return err
}

// checkTags validates restriction tags.
func checkTags(tags []string) error {
	for _, t := range tags {
		if err := checkName("tag", t, maxName); err != nil {
			return err
		}
	}
	if d := firstDuplicate(tags); d != "" {
		return errorf("give each tag once", "tag %s is given twice", d)
	}
	return nil
}
