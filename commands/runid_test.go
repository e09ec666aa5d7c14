package commands

import (
	"testing"

	"github.com/spf13/cobra"
)

// TestRunCommandLine: the command line a run records keeps the command,
// its arguments and flags (quoted for a shell), and drops every flag that
// takes a password or names a secret file, with its value.
func TestRunCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"site", "create", "Mars", "--description", "red planet"},
			"cpactl site create Mars --description 'red planet'"},
		{[]string{"-y", "/secret/pw.txt", "site", "preferred", "India", "--set", "UK,US"},
			"cpactl site preferred India --set UK,US"},
		{[]string{"--password-file=/secret/pw.txt", "-W", "-D", "uid=ann,ou=Admins,dc=x", "site", "delete", "Mars", "--yes"},
			"cpactl site delete Mars --bind-dn 'uid=ann,ou=Admins,dc=x' --yes"},
		{[]string{"horizon", "import", "pull", "-y", "/secret/rest.txt", "--ldap-password-file", "/secret/ldap.txt", "--ldap-prompt-password"},
			"cpactl horizon import pull"},
		{[]string{"site", "create", "Paris, FR", "--description", "it's"},
			`cpactl site create 'Paris, FR' --description 'it'\''s'`},
	} {
		root := NewRootCommand(&Globals{})
		var got string
		cmd, rest, err := root.Find(tc.args)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		cmd.PersistentPreRunE, cmd.RunE = nil, func(cmd *cobra.Command, args []string) error { return nil }
		if err := cmd.ParseFlags(rest); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		got = runCommandLine(cmd, cmd.Flags().Args())
		if got != tc.want {
			t.Errorf("%q: %q, want %q", tc.args, got, tc.want)
		}
	}
}
