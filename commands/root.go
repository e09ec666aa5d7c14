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
	"github.com/cpactl/cpactl/output"
	"github.com/cpactl/cpactl/prompt"
)

// Main runs cpactl with args and returns the process exit code. It is the
// only entry point: nothing below it exits the process.
func Main(args []string, in io.Reader, out, errOut io.Writer) int {
	setMemoryLimit()
	g := &Globals{IO: IOStreams{In: in, Out: out, Err: errOut}, Getenv: os.Getenv, ReadPassword: prompt.TerminalPassword}
	g.Interactive = func() bool { return prompt.Interactive(in, out) }
	inFile, _ := in.(*os.File)
	outFile, _ := out.(*os.File)
	g.Prompter = prompt.Survey{In: inFile, Out: outFile, Err: errOut}
	root := NewRootCommand(g)
	root.SetArgs(args)
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(errOut)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	code := ExitCode(err)
	var ee *Failure
	if errors.As(err, &ee) && ee.Err == nil {
		return code // the command's output already explained
	}
	fmt.Fprintf(errOut, "cpactl: %s\n", oneLine(err))
	if hint := hintOf(err); hint != "" {
		fmt.Fprintf(errOut, "hint: %s\n", hint)
	}
	return code
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
			g.resolveEnv(cmd)
			return nil
		},
	}
	g.addFlags(root)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return errorf(fmt.Sprintf("see `%s --help`", cmd.CommandPath()), "%v", err)
	})
	root.AddCommand(
		newExitCodesTopic(),
		newSchemaCommand(g),
		newInitCommand(g),
		newSettingsCommand(g),
		newGenerateCommand(g),
	)
	for _, add := range extraCommands {
		root.AddCommand(add(g))
	}
	// Parse flags level by level, so an unknown flag before the noun is
	// named as such ("unknown flag: --bogus") rather than taken for a flag
	// with a value that swallows the noun.
	root.TraverseChildren = true
	refuseUnknownSubcommands(root)
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

// extraCommands lets each noun's file register its command from init, so
// files for new nouns do not all edit this one.
var extraCommands []func(*Globals) *cobra.Command

func register(f func(*Globals) *cobra.Command) { extraCommands = append(extraCommands, f) }

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
}

func (r *readFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&r.Output, "output", "o", "table", "output format: table, json or yaml")
	cmd.Flags().StringVar(&r.From, "from", "", "read an LDIF snapshot (cpactl export, ldapsearch -LLL) instead of a server")
}

func (r *readFlags) printer(g *Globals) (output.Printer, error) {
	f, err := output.ParseFormat(r.Output)
	if err != nil {
		return output.Printer{}, errorf("", "%v", err)
	}
	return output.Printer{Format: f, Out: g.IO.Out}, nil
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

// writeFlags are the flags every mutating command takes.
type writeFlags struct {
	DryRun bool
}

func (w *writeFlags) add(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&w.DryRun, "dry-run", false, "validate and show what would change, write nothing")
}

// report prints a write's result line to stdout.
func (g *Globals) report(format string, args ...any) {
	fmt.Fprintf(g.IO.Out, format+"\n", args...)
}

// warn prints a warning to stderr.
func (g *Globals) warn(format string, args ...any) {
	fmt.Fprintf(g.IO.Err, "warning: "+format+"\n", args...)
}
