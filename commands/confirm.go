package commands

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/output"
)

// deleteFlags are the flags of every delete command.
type deleteFlags struct {
	writeFlags
	Yes   bool
	Force bool
}

func (d *deleteFlags) add(cmd *cobra.Command, force string) {
	d.writeFlags.add(cmd)
	cmd.Flags().BoolVar(&d.Yes, "yes", false, "delete without asking (needed when stdin or stdout is not a terminal)")
	if force != "" {
		cmd.Flags().BoolVar(&d.Force, "force", false, force)
	}
}

// confirm asks before a destructive write. On a terminal (stdin and stdout)
// it prompts; elsewhere it needs --yes. A "no" cancels with exit 1.
func confirm(g *Globals, yes bool, what, question string) error {
	if yes {
		return nil
	}
	if g.Interactive == nil || !g.Interactive() || g.Prompter == nil {
		return errorf("pass --yes to confirm (cpactl prompts only when stdin and stdout are terminals)",
			"%s needs confirmation", what)
	}
	return ask(g, what, question)
}

// ask puts a yes/no question before a write on the terminal. Every such
// question defaults to No: Enter alone cancels, a write needs a typed "y".
// A "no" is an error (exit 1) that says what was cancelled and that
// nothing was written.
func ask(g *Globals, what, question string) error {
	ok, err := g.Prompter.Confirm(question, false)
	if err != nil {
		return err
	}
	if !ok {
		return errorf("", "%s: cancelled: nothing written", what)
	}
	return nil
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
		return errorf(forceHint, "cannot delete %s %q: %d %s to it", kind, name, n, plural(n, "entry refers", "entries refer"))
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
	if err := confirm(g, f.Yes, fmt.Sprintf("deleting %s %q", kind, name), question); err != nil {
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

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// joinOr renders a list for a message, or fallback when it is empty.
func joinOr(list []string, fallback string) string {
	if len(list) == 0 {
		return fallback
	}
	return strings.Join(list, ", ")
}
