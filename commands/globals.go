package commands

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/prompt"
)

// IOStreams are a command's standard streams.
type IOStreams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// Globals holds the global (connection) flags and the dependencies every
// command shares. Commands keep a pointer to it in their options struct.
type Globals struct {
	URLs               []string
	Base               string
	BindDN             string
	PromptPassword     bool // -W
	PasswordFile       string
	StartTLS           bool
	CAFile             string
	InsecureSkipVerify bool
	Timeout            time.Duration
	WriteURL           string

	IO       IOStreams
	Prompter prompt.Prompter
	// Interactive reports whether stdin and stdout are terminals.
	Interactive func() bool
	// ReadPassword prompts for the bind password on the terminal (-W).
	ReadPassword func(message string) (string, error)
	// Getenv reads the environment (os.Getenv; tests may replace it).
	Getenv func(string) string
	// OpenStore, when set, is what Store returns instead of connecting to
	// the server the flags name: a test hands in a store on a wrapped
	// client or a snapshot.
	OpenStore func() (*directory.Store, func(), error)

	baseExplicit bool
}

func (g *Globals) addFlags(cmd *cobra.Command) {
	f := cmd.PersistentFlags()
	f.StringSliceVarP(&g.URLs, "url", "H", nil,
		"LDAP URI(s), tried in order: ldap://host[:port], ldaps://host[:port], ldapi://%2Fpath%2Fto%2Fsocket (env CPACTL_URL, LDAPURI)")
	f.StringVarP(&g.Base, "base", "b", "", "base DN of the federation (env CPACTL_BASE, LDAPBASE; default "+ldapschema.DefaultBase+")")
	f.StringVarP(&g.BindDN, "bind-dn", "D", "", "DN to bind as (env CPACTL_BIND_DN, LDAPBINDDN); without it: anonymous, or SASL EXTERNAL over ldapi")
	f.BoolVarP(&g.PromptPassword, "prompt-password", "W", false, "prompt for the bind password on the terminal")
	f.StringVarP(&g.PasswordFile, "password-file", "y", "", "read the bind password from this file (or set CPACTL_BIND_PASSWORD)")
	f.BoolVarP(&g.StartTLS, "starttls", "Z", false, "upgrade ldap:// with StartTLS; fail rather than continue in clear text")
	f.StringVar(&g.CAFile, "ca-file", "", "PEM file of the CA(s) that signed the server certificate")
	f.BoolVar(&g.InsecureSkipVerify, "insecure-skip-tls-verify", false, "DANGEROUS: do not check the server certificate")
	f.DurationVar(&g.Timeout, "timeout", 10*time.Second, "time limit for connecting and for each request")
	f.StringVar(&g.WriteURL, "write-url", "", "the provider's URI when -H names read-only replicas: writes they refuse go there (docs/replication.md)")
}

// resolveEnv fills unset flags from CPACTL_* then LDAP* variables.
func (g *Globals) resolveEnv(cmd *cobra.Command) {
	env := g.Getenv
	first := func(names ...string) string {
		for _, n := range names {
			if v := strings.TrimSpace(env(n)); v != "" {
				return v
			}
		}
		return ""
	}
	if !cmd.Flags().Changed("url") {
		if v := first("CPACTL_URL", "LDAPURI"); v != "" {
			g.URLs = []string{v}
		}
	}
	var urls []string
	for _, u := range g.URLs {
		urls = append(urls, strings.FieldsFunc(u, func(r rune) bool { return r == ' ' || r == ',' })...)
	}
	g.URLs = urls
	g.baseExplicit = cmd.Flags().Changed("base")
	if !g.baseExplicit {
		if v := first("CPACTL_BASE", "LDAPBASE"); v != "" {
			g.Base = v
			g.baseExplicit = true
		} else {
			g.Base = ldapschema.DefaultBase
		}
	}
	if !cmd.Flags().Changed("bind-dn") {
		g.BindDN = first("CPACTL_BIND_DN", "LDAPBINDDN")
	}
}

// password finds the bind password: -y FILE, -W (terminal prompt), or
// CPACTL_BIND_PASSWORD. There is no password flag: it would land in argv.
func (g *Globals) password() (string, error) {
	if g.PromptPassword && g.PasswordFile != "" {
		return "", errorf("pass the password one way", "-W and -y both given")
	}
	switch {
	case g.PasswordFile != "":
		b, err := os.ReadFile(g.PasswordFile)
		if err != nil {
			return "", errorf("", "cannot read password file: %v", err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	case g.PromptPassword:
		pw, err := g.ReadPassword(fmt.Sprintf("Enter LDAP password for %s:", g.BindDN))
		if err != nil {
			return "", errorf("", "%v", err)
		}
		return pw, nil
	}
	return g.Getenv("CPACTL_BIND_PASSWORD"), nil
}

func (g *Globals) dialOptions() (directory.Options, error) {
	opts := directory.Options{URLs: g.URLs, BindDN: g.BindDN, StartTLS: g.StartTLS, CAFile: g.CAFile,
		InsecureSkipVerify: g.InsecureSkipVerify, Timeout: g.Timeout, WriteURL: g.WriteURL,
		Note: func(msg string) { fmt.Fprintln(g.IO.Err, "note: "+msg) }}
	if g.BindDN != "" {
		pw, err := g.password()
		if err != nil {
			return opts, err
		}
		opts.Password = pw
	}
	if g.InsecureSkipVerify {
		fmt.Fprintln(g.IO.Err, "warning: --insecure-skip-tls-verify: the server certificate is NOT checked; anyone on the path can read and change this session")
	}
	return opts, nil
}

// Dial connects to the server the flags name.
func (g *Globals) Dial() (*directory.Conn, error) {
	opts, err := g.dialOptions()
	if err != nil {
		return nil, err
	}
	if len(opts.URLs) == 0 {
		return nil, errorf("pass -H ldap://host:port or set CPACTL_URL; read commands also take --from FILE.ldif",
			"no server given")
	}
	return directory.Dial(opts)
}

// Store connects and returns a store on the live directory; close it with
// the returned function.
func (g *Globals) Store() (*directory.Store, func(), error) {
	if g.OpenStore != nil {
		return g.OpenStore()
	}
	c, err := g.Dial()
	if err != nil {
		return nil, nil, err
	}
	st := directory.NewStore(c, g.Base)
	st.Note = func(msg string) { fmt.Fprintln(g.IO.Err, "note: "+msg) }
	return st, func() { c.Close() }, nil
}

// ReadStore returns a store on the snapshot file from, or on the live
// directory when from is empty. Without an explicit base, a snapshot's base
// is found from its containers.
func (g *Globals) ReadStore(from string) (*directory.Store, func(), error) {
	if from == "" {
		return g.Store()
	}
	snap, err := directory.LoadSnapshot(from)
	if err != nil {
		return nil, nil, errorf("pass an LDIF file written by `cpactl export` or `ldapsearch -LLL`", "%v", err)
	}
	if snap.Len() == 0 {
		return nil, nil, &Failure{Code: ExitNotFound, Err: fmt.Errorf("snapshot %s is empty: it holds no entries", from),
			Hint: "pass an LDIF file written by `cpactl export` or `ldapsearch -LLL`"}
	}
	base := g.Base
	if !g.baseExplicit {
		// The parent of its ou=Sites container.
		if found := snap.Base(); found != "" {
			base = found
		}
	}
	return directory.NewStore(snap, base), func() {}, nil
}
