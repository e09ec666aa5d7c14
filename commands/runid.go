package commands

import (
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cpactl/cpactl/history"
	"github.com/cpactl/cpactl/quote"
)

// newRun names the command run about to start: a fresh run ID, the
// command line as cobra parsed it (runCommandLine) and cpactl's version.
// Every write of the run carries it (ldapconn.Options.Run), so that the
// history groups them (docs/history.md).
func newRun(cmd *cobra.Command, args []string) history.Run {
	v := versionOf(debug.ReadBuildInfo())
	version := v.Version
	if v.Commit != "unknown" && len(v.Commit) >= 12 {
		version += " " + v.Commit[:12]
	}
	return history.Run{ID: history.NewRunID(), Command: runCommandLine(cmd, args), Version: version}
}

// runCommandLine is the command's path, its arguments and the flags set,
// shell-quoted, without any flag that takes a password or names a secret
// file (its value neither): what the history shows as the command.
func runCommandLine(cmd *cobra.Command, args []string) string {
	words := []string{cmd.CommandPath()}
	for _, a := range args {
		words = append(words, quote.Shell(a))
	}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if secretFlag(f.Name) {
			return
		}
		if f.Value.Type() == "bool" {
			if f.Value.String() == "true" {
				words = append(words, "--"+f.Name)
			} else {
				words = append(words, "--"+f.Name+"=false")
			}
			return
		}
		v := f.Value.String()
		if strings.HasSuffix(f.Value.Type(), "Slice") || f.Value.Type() == "strings" {
			// A list is written back "[a,b]", its CSV in brackets: the
			// CSV is what the flag reads.
			v = strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
		}
		words = append(words, "--"+f.Name, quote.Shell(v))
	})
	return strings.Join(words, " ")
}

// secretFlag says whether a flag takes a password or names a file that
// holds one (--password-file, --prompt-password, --ldap-password-file,
// --horizon-password ...).
func secretFlag(name string) bool {
	return strings.Contains(name, "password") || strings.Contains(name, "secret") || strings.Contains(name, "token")
}
