package commands

import (
	"strings"

	"github.com/spf13/cobra"
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
