// Package commands holds cpactl's cobra commands. Each command has an
// options struct, a constructor that builds the cobra command and fills the
// struct, and a run function. Commands stay thin: they parse and validate
// flags, ask package directory for data, hand plain values to the domain
// logic (package broker) and render the result with package output.
package commands

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/internal/pager"
	"github.com/cpactl/cpactl/output"
	"github.com/cpactl/cpactl/prompt"
	"github.com/cpactl/cpactl/quote"
)

// Main runs cpactl with args and returns the process exit code. It is the
// only entry point: nothing below it exits the process.
func Main(args []string, in io.Reader, out, errOut io.Writer) int {
	ldapconn.ResetChanges()
	setMemoryLimit()
	g := &Globals{IO: IOStreams{In: in, Out: out, Err: errOut}, Getenv: os.Getenv, LookupEnv: os.LookupEnv,
		ReadPassword: prompt.TerminalPassword, Stdout: pager.TerminalOf(out)}
	g.Interactive = g.pagedFirst(func() bool { return prompt.Interactive(in, out) })
	g.TerminalWidth = func() int { return output.TerminalWidth(out) }
	inFile, _ := in.(*os.File)
	outFile, _ := out.(*os.File)
	g.Prompter = prompt.Survey{In: inFile, Out: outFile, Err: errOut}
	root := NewRootCommand(g)
	root.SetArgs(args)
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(errOut)
	ran, err := root.ExecuteC()
	// A stage a command left running (an error on its way) ends here, its
	// bar erased before anything else is printed.
	g.endProgress()
	// The output is written or paged, and the reader has quit the pager,
	// before cpactl says anything more.
	if perr := g.closePager(); perr != nil && (err == nil || errors.Is(err, pager.ErrClosed)) {
		err = perr
	}
	if errors.Is(err, pager.ErrClosed) || errors.Is(err, pager.ErrInterrupted) {
		// The reader quit the pager before the end (exit 0), or Ctrl-C
		// stopped it (130: Interrupted said so): nothing more to say.
		return ExitCode(err)
	}
	if err == nil {
		if ldapconn.Stopped() {
			fmt.Fprintln(errOut, noteInterrupted)
		}
		if dryRun(ran) {
			fmt.Fprintln(errOut, noteDryRun)
		}
		return ExitOK
	}
	code := ExitCode(err)
	var ee *Failure
	if errors.As(err, &ee) && ee.Err == nil {
		return code // the command's output already explained
	}
	// Errors quote names and values from the directory and files: the
	// lines are rendered by quote.Visible, as tables are.
	fmt.Fprintf(errOut, "cpactl: %s\n", quote.Visible(oneLine(err)))
	if hint := hintOf(err); hint != "" {
		fmt.Fprintf(errOut, "hint: %s\n", quote.Visible(hint))
	}
	return code
}

// noteDryRun follows every --dry-run: cpactl decides no access itself, and
// slapd checks it only when a change is written (a probe would not tell:
// slapd evaluates an assertion before its ACLs, docs/access.md).
const noteDryRun = "note: --dry-run did not check access rights: the server checks them when the change is written (see `cpactl whoami`)"

// dryRun reports whether cmd ran with --dry-run.
func dryRun(cmd *cobra.Command) bool {
	if cmd == nil {
		return false
	}
	f := cmd.Flags().Lookup("dry-run")
	return f != nil && f.Value.String() == "true"
}

// softMemoryLimit is the heap size at which Go's collector works harder
// (runtime/debug.SetMemoryLimit), unless GOMEMLIMIT says otherwise. The
// commands that read a whole CPA-maximum federation hold 300-550 MB live;
// with the default pacing alone the heap would grow to twice that before a
// collection. It is a soft limit: a larger federation still works, with
// more collections.
const softMemoryLimit = 768 << 20

func setMemoryLimit() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(softMemoryLimit)
	}
}

// NewRootCommand builds the command tree.
func NewRootCommand(g *Globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "cpactl",
		Short: "Manage and explain a Horizon 8 Cloud Pod Architecture federation kept in OpenLDAP",
		Long: `cpactl keeps a Horizon 8 Cloud Pod Architecture federation's configuration
(sites, pods, Connection Servers, pools, RDS farms and hosts, global
entitlements, home sites and the load-balancing thresholds) in OpenLDAP,
under a schema it owns, and explains where a user's session would land.

Connect with -H (or CPACTL_URL / LDAPURI), bind with -D and one of -W,
-y FILE or CPACTL_BIND_PASSWORD. Read commands also run on an LDIF snapshot
with --from FILE.ldif and no server.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			g.Run = newRun(cmd, args)
			if f := cmd.Flags().Lookup("at"); f != nil {
				g.At = f.Value.String()
			}
			if err := g.resolveSettings(cmd); err != nil {
				return err
			}
			return g.startProgress(cmd)
		},
	}
	g.addFlags(root)
	g.addProgressFlag(root)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return errorf(fmt.Sprintf("see `%s --help`", cmd.CommandPath()), "%v", err)
	})
	// Every command of cpactl, in one place: each noun with its verbs.
	root.AddCommand(
		newInitCommand(g),
		withVerbs(newSchemaCommand(g),
			newSchemaPrintCommand(g),
			newSchemaInstallCommand(g),
			newSchemaCheckCommand(g),
		),
		withVerbs(newSettingsCommand(g),
			newSettingsShowCommand(g),
			newSettingsSetCommand(g),
			newSettingsResetCommand(g),
		),
		withVerbs(newSiteCommand(g),
			newSiteListCommand(g),
			newSiteShowCommand(g),
			newSiteCreateCommand(g),
			newSiteUpdateCommand(g),
			newSiteDeleteCommand(g),
			newSitePreferredCommand(g),
			newSiteGraphCommand(g),
		),
		withVerbs(newPodCommand(g),
			newPodListCommand(g),
			newPodShowCommand(g),
			newPodCreateCommand(g),
			newPodUpdateCommand(g),
			newPodDeleteCommand(g),
		),
		withVerbs(newConnectionServerCommand(g),
			newCSListCommand(g),
			newCSShowCommand(g),
			newCSCreateCommand(g),
			newCSUpdateCommand(g),
			newCSDeleteCommand(g),
		),
		withVerbs(newPoolCommand(g),
			newPoolListCommand(g),
			newPoolShowCommand(g),
			newPoolCreateCommand(g),
			newPoolUpdateCommand(g),
			newPoolDeleteCommand(g),
		),
		withVerbs(newFarmCommand(g),
			newFarmListCommand(g),
			newFarmShowCommand(g),
			newFarmCreateCommand(g),
			newFarmUpdateCommand(g),
			newFarmDeleteCommand(g),
		),
		withVerbs(newHostCommand(g),
			newHostListCommand(g),
			newHostShowCommand(g),
			newHostCreateCommand(g),
			newHostUpdateCommand(g, false), // update
			newHostUpdateCommand(g, true),  // set-load
			newHostDeleteCommand(g),
		),
		withVerbs(newEntitlementCommand(g),
			newEntitlementListCommand(g),
			newEntitlementShowCommand(g),
			newEntitlementCreateCommand(g),
			newEntitlementUpdateCommand(g),
			newEntitlementDeleteCommand(g),
			newEntitlementMembersCommand(g),
			newEntitlementMemberEditCommand(g, true),  // add-member
			newEntitlementMemberEditCommand(g, false), // remove-member
			newEntitlementPoolEditCommand(g, true),    // add-pool
			newEntitlementPoolEditCommand(g, false),   // remove-pool
		),
		withVerbs(newHomeSiteCommand(g),
			newHomeSiteSetCommand(g),
			newHomeSiteUnsetCommand(g),
			newHomeSiteListCommand(g),
			newHomeSiteResolveCommand(g),
		),
		withVerbs(newUserCommand(g),
			newUserListCommand(g),
			newUserShowCommand(g),
			newUserCreateCommand(g),
			newUserUpdateCommand(g),
			newUserDeleteCommand(g),
			newUserEntitlementsCommand(g),
		),
		withVerbs(newGroupCommand(g),
			newGroupListCommand(g),
			newGroupShowCommand(g),
			newGroupCreateCommand(g),
			newGroupMembersCommand(g, true),  // add-member
			newGroupMembersCommand(g, false), // remove-member
			newGroupDeleteCommand(g),
		),
		withVerbs(newComputerCommand(g),
			newComputerListCommand(g),
			newComputerShowCommand(g),
			newComputerCreateCommand(g),
			newComputerDeleteCommand(g),
		),
		withVerbs(newSessionCommand(g),
			newSessionListCommand(g),
			newSessionShowCommand(g),
			newSessionRecordCommand(g),
			newSessionEndCommand(g),
		),
		withVerbs(newAssignmentCommand(g),
			newAssignmentListCommand(g),
			newAssignmentSetCommand(g),
			newAssignmentDeleteCommand(g),
		),
		newResolveCommand(g),
		newLoadsCommand(g),
		newImpactCommand(g),
		withVerbs(newSimulateCommand(g),
			newSimulateStormCommand(g),
		),
		newLintCommand(g),
		withVerbs(newHistoryCommand(g),
			newHistoryUndoCommand(g),
		),
		newExportCommand(g),
		newDiffCommand(g),
		newApplyCommand(g),
		newGenerateCommand(g),
		newHorizonCommand(g),
		withVerbs(newConfigCommand(g),
			newConfigGetContextsCommand(g),
			newConfigCurrentContextCommand(g),
			newConfigUseContextCommand(g),
			newConfigSetContextCommand(g),
		),
		withVerbs(newDocsCommand(g),
			newDocsFormatCommand(g, "man"),
			newDocsFormatCommand(g, "markdown"),
		),
		withVerbs(newRoleCommand(g),
			newRoleListCommand(g),
			newRoleShowCommand(g),
			newRoleMemberCommand(g, true),  // add-member
			newRoleMemberCommand(g, false), // remove-member
		),
		newWhoamiCommand(g),
		newVersionCommand(g),
		newStatusCommand(g),
		newExitCodesTopic(),
	)
	// Parse flags level by level, so an unknown flag before the noun is
	// named as such ("unknown flag: --bogus") rather than taken for a flag
	// with a value that swallows the noun.
	root.TraverseChildren = true
	refuseUnknownSubcommands(root)
	registerCompletions(root, g)
	return root
}

// refuseUnknownSubcommands makes the root and every group command (a noun
// such as site, which only holds verbs) fail on an unknown verb with cobra's suggestion,
// exit 1, instead of printing its help and exiting 0; with no verb it
// still prints its help.
func refuseUnknownSubcommands(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		refuseUnknownSubcommands(c)
	}
	if !cmd.HasSubCommands() || cmd.Run != nil || cmd.RunE != nil {
		return
	}
	cmd.Args = cobra.ArbitraryArgs
	cmd.SuggestionsMinimumDistance = 2
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return c.Help()
		}
		hint := fmt.Sprintf("see `%s --help`", c.CommandPath())
		if s := c.SuggestionsFor(args[0]); len(s) > 0 {
			hint = fmt.Sprintf("did you mean `%s %s`?", c.CommandPath(), strings.Join(s, "` or `"+c.CommandPath()+" "))
		}
		return errorf(hint, "unknown command %q for %q", args[0], c.CommandPath())
	}
}

// withVerbs adds verbs to a noun command and returns the noun.
func withVerbs(noun *cobra.Command, verbs ...*cobra.Command) *cobra.Command {
	noun.AddCommand(verbs...)
	return noun
}

func newExitCodesTopic() *cobra.Command {
	var b strings.Builder
	b.WriteString("cpactl exits with one of these codes (stable, for scripts):\n\n")
	for _, c := range exitCodeHelp {
		fmt.Fprintf(&b, "  %3d  %s\n", c.code, c.text)
	}
	b.WriteString("\nErrors are one line on stderr (\"cpactl: ...\"), optionally followed by a\n\"hint: ...\" line; results go to stdout.")
	return &cobra.Command{
		Use:   "exit-codes",
		Short: "The exit codes cpactl returns",
		Long:  b.String(),
	}
}

// readFlags are the flags every read command takes.
type readFlags struct {
	Output string
	From   string
	// pictures are the picture formats the command also draws (resolve:
	// dot); set before add.
	pictures []output.Format
}

func (r *readFlags) add(cmd *cobra.Command) {
	usage := output.FormatUsage
	for _, p := range r.pictures {
		usage += ", " + string(p)
	}
	cmd.Flags().StringVarP(&r.Output, "output", "o", "table", usage)
	cmd.Flags().StringVar(&r.From, "from", "", "read an LDIF snapshot (cpactl export, ldapsearch -LLL) or a Horizon pull directory instead of a server")
	addAtFlag(cmd)
}

// addAtFlag gives a read command --at TIME: the federation as it was then
// (Globals.At, read by ReadStore; docs/history.md).
func addAtFlag(cmd *cobra.Command) {
	cmd.Flags().String("at", "", "read the federation as it was at this time (RFC 3339, or a duration ago: 18h), rebuilt from the server's history")
}

func (r *readFlags) printer(g *Globals) (output.Printer, error) {
	f, err := output.ParseFormatWith(r.Output, r.pictures...)
	if err != nil {
		return output.Printer{}, errorf("", "%v", err)
	}
	g.startPager()
	return output.Printer{Format: f, Out: g.IO.Out, Width: g.terminalWidth()}, nil
}

// open returns what a read command needs: its printer and a store on the
// snapshot (--from) or the server. Close the store with the function.
func (r *readFlags) open(g *Globals) (output.Printer, *directory.Store, func(), error) {
	p, err := r.printer(g)
	if err != nil {
		return p, nil, nil, err
	}
	st, closeFn, err := g.ReadStore(r.From)
	if err != nil {
		return p, nil, nil, err
	}
	return p, st, closeFn, nil
}

// terminalWidth is the width tables fit in: the terminal's when stdout is
// one, else 0 (never wrap).
func (g *Globals) terminalWidth() int {
	if g.TerminalWidth == nil {
		return 0
	}
	return g.TerminalWidth()
}

// writeFlags are the flags every mutating command takes.
type writeFlags struct {
	DryRun bool
}

func (w *writeFlags) add(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&w.DryRun, "dry-run", false, "validate and show what would change, write nothing")
}

// report prints a write's result line to stdout, its values rendered
// visibly (output.Fprintf).
func (g *Globals) report(format string, args ...any) {
	output.Fprintf(g.IO.Out, format+"\n", args...)
}

// warn prints a warning to stderr, its values rendered visibly.
func (g *Globals) warn(format string, args ...any) {
	output.Fprintf(g.IO.Err, "warning: "+format+"\n", args...)
}

// note prints a note to stderr, its values rendered visibly.
func (g *Globals) note(format string, args ...any) {
	output.Fprintf(g.IO.Err, "note: "+format+"\n", args...)
}
