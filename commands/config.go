package commands

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/config"
	"github.com/cpactl/cpactl/internal/osfile"
	"github.com/cpactl/cpactl/output"
	"github.com/cpactl/cpactl/quote"
)

func newConfigCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "config",
		Short: "Named connection contexts in cpactl's configuration file (kubectl's shape)",
		Long: `A context names a set of connection settings: URIs, base DN, bind DN,
StartTLS, CA file and timeout, never a password (-y FILE, -W or
CPACTL_BIND_PASSWORD still give it). Commands use the current context, or
the one --context NAME (or CPACTL_CONTEXT) names. Flags win over CPACTL_*
variables, which win over the context, which wins over OpenLDAP's LDAP*
variables (docs/config.md).

The file is $CPACTL_CONFIG, else $XDG_CONFIG_HOME/cpactl/config.yaml, else
~/.config/cpactl/config.yaml; cpactl writes it atomically, mode 0600.`,
		Example: `  cpactl config set-context prod -H ldaps://ldap1.example.com,ldaps://ldap2.example.com \
      -b dc=vdiglobal,dc=vmware,dc=int -D cn=cpactl,ou=Services,dc=vdiglobal,dc=vmware,dc=int
  cpactl config use-context prod
  cpactl config get-contexts
  cpactl site list --context lab`,
		// The config commands connect nowhere: they neither need nor check
		// the context in force (one may be named that does not exist yet).
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error { return nil },
	}
}

// ContextView is one context in `config get-contexts -o json|yaml`.
type ContextView struct {
	Name     string   `json:"name"`
	Current  bool     `json:"current"`
	URL      []string `json:"url"`
	Base     string   `json:"base"`
	BindDN   string   `json:"bind_dn"`
	StartTLS bool     `json:"starttls"`
	CAFile   string   `json:"ca_file"`
	Timeout  string   `json:"timeout"`
}

type configGetContextsOptions struct {
	g      *Globals
	Output string
}

func newConfigGetContextsCommand(g *Globals) *cobra.Command {
	o := &configGetContextsOptions{g: g}
	cmd := &cobra.Command{
		Use:   "get-contexts",
		Short: "List the contexts; * marks the current one",
		Example: `  cpactl config get-contexts
  cpactl config get-contexts -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "table", "output format: table, json or yaml")
	return cmd
}

func (o *configGetContextsOptions) run() error {
	format, err := output.ParseFormat(o.Output)
	if err != nil {
		return errorf("", "%v", err)
	}
	f, _, err := o.g.loadConfig()
	if err != nil {
		return err
	}
	views := make([]ContextView, 0, len(f.Contexts))
	for _, c := range f.Contexts {
		views = append(views, ContextView{Name: c.Name, Current: c.Name == f.CurrentContext, URL: orEmpty(c.URL),
			Base: c.Base, BindDN: c.BindDN, StartTLS: c.StartTLS, CAFile: c.CAFile, Timeout: c.Timeout})
	}
	return output.Printer{Format: format, Out: o.g.IO.Out}.Print(views, func(w io.Writer) error {
		rows := make([][]string, 0, len(views))
		for _, v := range views {
			rows = append(rows, []string{onOff(v.Current, "*", ""), v.Name, joinOr(v.URL, "-"), orDash(v.Base), orDash(v.BindDN)})
		}
		return output.Rows(w, []string{"current", "name", "url", "base", "bind dn"}, rows)
	})
}

func newConfigCurrentContextCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:     "current-context",
		Short:   "Print the name of the current context",
		Example: `  cpactl config current-context`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f, path, err := g.loadConfig()
			if err != nil {
				return err
			}
			if f.CurrentContext == "" {
				return errorf("choose one with `cpactl config use-context NAME`", "no current context is set in %s", path)
			}
			fmt.Fprintln(g.IO.Out, quote.Visible(f.CurrentContext))
			return nil
		},
	}
}

func newConfigUseContextCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "use-context NAME",
		Short: "Make a context the current one",
		Long: `Makes NAME the current context: commands connect with its settings unless
a flag, a CPACTL_* variable or --context says otherwise. A context the file
does not hold is exit 3.`,
		Example: `  cpactl config use-context prod`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, path, err := g.loadConfig()
			if err != nil {
				return err
			}
			name := args[0]
			if _, ok := f.Lookup(name); !ok {
				return &Failure{Code: ExitNotFound, Err: fmt.Errorf("context %s is not in %s", quote.Name(name), path),
					Hint: "see `cpactl config get-contexts`, or create it with `cpactl config set-context " + quote.Shell(name) + " -H URI`"}
			}
			if f.CurrentContext == name {
				g.report("current context %s: unchanged", quote.Name(name))
				return nil
			}
			f.CurrentContext = name
			if err := g.saveConfig(path, f); err != nil {
				return err
			}
			g.report("switched to context %s", quote.Name(name))
			return nil
		},
	}
}

// contextFlags are the global flags set-context stores, in the order
// messages name them.
var contextFlags = []string{"url", "base", "bind-dn", "starttls", "ca-file", "timeout"}

func newConfigSetContextCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "set-context NAME [-H URI,...] [-b BASE] [-D BIND-DN] [-Z] [--ca-file FILE] [--timeout D]",
		Short: "Create a context, or change the settings the flags name",
		Long: `Creates the context NAME, or changes it: each connection flag given is
stored (--url, --base, --bind-dn, --starttls, --ca-file, --timeout); the
others keep their value. An empty value removes a setting (--base "";
--starttls=false). No password is ever stored: -y and -W are refused
here; give them, or CPACTL_BIND_PASSWORD, when you run commands.
--insecure-skip-tls-verify is not stored either: pass it each time.`,
		Example: `  cpactl config set-context lab -H ldap://127.0.0.1:3389 -D cn=admin,dc=vdiglobal,dc=vmware,dc=int
  cpactl config set-context prod -Z --ca-file /etc/pki/corp-ca.pem --timeout 5s`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return g.setContext(cmd, args[0]) },
	}
}

func (g *Globals) setContext(cmd *cobra.Command, name string) error {
	changed := cmd.Flags().Changed
	for _, refused := range []string{"password-file", "prompt-password", "insecure-skip-tls-verify"} {
		if changed(refused) {
			return errorf("pass -y, -W or CPACTL_BIND_PASSWORD (and --insecure-skip-tls-verify) when you run commands",
				"--%s is not stored in a context: cpactl keeps no password and no insecure setting in its config file", refused)
		}
	}
	if err := checkName("context", name, maxName); err != nil {
		return err
	}
	f, path, err := g.loadConfig()
	if err != nil {
		return err
	}
	if path == "" {
		return errorf("set HOME, XDG_CONFIG_HOME or CPACTL_CONFIG", "no place for the config file")
	}
	old, exists := f.Lookup(name)
	c := old
	c.Name = name
	if changed("url") {
		c.URL = splitURLs(g.URLs)
		if err := checkURLs("-H", c.URL); err != nil {
			return err
		}
	}
	if changed("base") {
		c.Base = g.Base
	}
	if changed("bind-dn") {
		c.BindDN = g.BindDN
	}
	if changed("starttls") {
		c.StartTLS = g.StartTLS
	}
	if changed("ca-file") {
		c.CAFile = g.CAFile
	}
	if changed("timeout") {
		if g.Timeout <= 0 {
			return errorf("pass a duration such as --timeout 5s", "--timeout must be positive")
		}
		c.Timeout = g.Timeout.String()
	}
	var what []string
	for _, flag := range contextFlags {
		if changed(flag) && contextValue(old, flag) != contextValue(c, flag) {
			what = append(what, flag)
		}
	}
	if exists && len(what) == 0 {
		g.report("context %s: unchanged", quote.Name(name))
		return nil
	}
	f.Set(c)
	if err := g.saveConfig(path, f); err != nil {
		return err
	}
	if exists {
		g.report("updated context %s (%s)", quote.Name(name), strings.Join(what, ", "))
	} else {
		g.report("created context %s in %s", quote.Name(name), path)
	}
	return nil
}

// contextValue renders one setting of a context, to tell what changed.
func contextValue(c config.Context, flag string) string {
	switch flag {
	case "url":
		return strings.Join(c.URL, ",")
	case "base":
		return c.Base
	case "bind-dn":
		return c.BindDN
	case "starttls":
		return yesNo(c.StartTLS)
	case "ca-file":
		return c.CAFile
	}
	return c.Timeout
}

// saveConfig writes the configuration file; a failure names it.
func (g *Globals) saveConfig(path string, f *config.File) error {
	if err := config.Save(path, f); err != nil {
		var we *osfile.WriteError
		if errors.As(err, &we) {
			err = we.Err // the path is named once
		}
		return errorf("check that the directory is writable, or point CPACTL_CONFIG elsewhere", "cannot write config file %s: %v", path, err)
	}
	return nil
}
