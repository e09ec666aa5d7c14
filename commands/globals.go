package commands

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cpactl/cpactl/config"
	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/history"
	"github.com/cpactl/cpactl/horizonimport"
	"github.com/cpactl/cpactl/internal/ldapuri"
	"github.com/cpactl/cpactl/internal/osfile"
	"github.com/cpactl/cpactl/internal/pager"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/prompt"
	"github.com/cpactl/cpactl/quote"
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
	// Run is the command run (newRun, set before the command runs): its
	// writes carry it.
	Run history.Run
	// At is a read command's --at: ReadStore reads the federation as it
	// was then.
	At                 string
	URLs               []string
	Base               string
	BindDN             string
	PromptPassword     bool // -W
	PasswordFile       string
	StartTLS           bool
	CAFile             string
	InsecureSkipVerify bool
	Timeout            time.Duration
	// Context names the context of the configuration file to use
	// (--context, CPACTL_CONTEXT, else the file's current context).
	Context  string
	WriteURL string
	// Strict refuses a configuration file others could change instead of
	// warning (--strict; on by default when CI is set, see strict).
	Strict     bool
	strictFlag *pflag.Flag

	IO       IOStreams
	Prompter prompt.Prompter
	// Interactive reports whether stdin and stdout are terminals.
	Interactive func() bool
	// TerminalWidth is the width of the terminal stdout is, 0 for none:
	// tables wrap their cells to fit it (output.Printer.Width).
	TerminalWidth func() int
	// ReadPassword prompts for the bind password on the terminal (-W).
	ReadPassword func(message string) (string, error)
	// Getenv reads the environment (os.Getenv; tests may replace it).
	Getenv func(string) string
	// LookupEnv tells a variable set to "" from one not set
	// (os.LookupEnv): PAGER= means no pager. nil: Getenv's non-empty
	// values count as set.
	LookupEnv func(string) (string, bool)
	// Stdout is the terminal standard output is, for the pager
	// (pager.TerminalOf; tests may replace it); nil: not a terminal.
	Stdout pager.Terminal
	// NoPager is --no-pager.
	NoPager bool
	// pager pages the read command's output once printer starts it;
	// pagerErr is the first error closing it met.
	pager    *pager.Writer
	pagerErr error
	// OpenStore, when set, is what Store returns instead of connecting to
	// the server the flags name: a test hands in a store on a wrapped
	// client or a snapshot.
	OpenStore func() (*directory.Store, func(), error)
	// runF, when set (by a test), is called with a command's options in
	// place of running them: what the command line made of argv, before
	// anything is read or written (gh's runF, for every command at once).
	runF func(options any) error

	progress progressFlags

	// rootFlags are the root's persistent flags: below `cpactl horizon`,
	// --url, -W, -y, --ca-file, --insecure-skip-tls-verify and --timeout
	// are the Horizon server's, and the LDAP ones of the same names are
	// not parsed (ldapChanged).
	rootFlags *pflag.FlagSet
	// belowHorizon: the command is a horizon command that also binds the
	// directory (import, sync), whose password flags are --ldap-*.
	belowHorizon bool
	// bindDNFrom says where BindDN came from: -D, CPACTL_BIND_DN, a
	// context or LDAPBINDDN (the hint of a refused bind names it).
	bindDNFrom string

	baseExplicit bool
	// baseOfContext: the base came from the context, which describes a
	// server; a snapshot (--from) finds its own base instead.
	baseOfContext bool
}

func (g *Globals) addFlags(cmd *cobra.Command) {
	f := cmd.PersistentFlags()
	g.rootFlags = f
	f.StringSliceVarP(&g.URLs, "url", "H", nil,
		"LDAP URI(s), tried in order: ldap://host[:port], ldaps://host[:port], ldapi://%2Fpath%2Fto%2Fsocket (env CPACTL_URL, then the context, then LDAPURI)")
	f.StringVarP(&g.Base, "base", "b", "", "base DN of the federation (env CPACTL_BASE, then the context, then LDAPBASE; default "+ldapschema.DefaultBase+")")
	f.StringVarP(&g.BindDN, "bind-dn", "D", "", "DN to bind as (env CPACTL_BIND_DN, then the context, then LDAPBINDDN); without it: anonymous, or SASL EXTERNAL over ldapi")
	f.BoolVarP(&g.PromptPassword, "prompt-password", "W", false, "prompt for the bind password on the terminal")
	f.StringVarP(&g.PasswordFile, "password-file", "y", "", "read the bind password from this file (or set CPACTL_BIND_PASSWORD)")
	f.BoolVarP(&g.StartTLS, "starttls", "Z", false, "upgrade ldap:// with StartTLS; fail rather than continue in clear text")
	f.StringVar(&g.CAFile, "ca-file", "", "PEM file of the CA(s) that signed the server certificate")
	f.BoolVar(&g.InsecureSkipVerify, "insecure-skip-tls-verify", false, "DANGEROUS: do not check the server certificate")
	f.DurationVar(&g.Timeout, "timeout", 10*time.Second, "time limit for connecting and for each request")
	f.StringVar(&g.Context, "context", "", "the context of the config file to connect with (env CPACTL_CONTEXT; default: its current context; see cpactl config --help)")
	f.StringVar(&g.WriteURL, "write-url", "", "the provider's URI when -H names read-only replicas: writes they refuse go there (docs/replication.md)")
	f.BoolVar(&g.NoPager, "no-pager", false, "do not page the output of a read command on a terminal (the pager: CPACTL_PAGER, then PAGER, then less)")
	f.BoolVar(&g.Strict, "strict", false, "refuse, instead of a warning, a config file other users can write or another user owns (the default when CI is set; --strict=false to only warn)")
	g.strictFlag = f.Lookup("strict")
}

// strict reports whether a config file others could change is refused:
// --strict when given (true or false), else whether cpactl runs in CI: the
// CI variable set, as GitHub Actions, GitLab CI and most others set it
// (CI=true), to anything but "false" or "0".
func (g *Globals) strict() bool {
	if g.Strict || (g.strictFlag != nil && g.strictFlag.Changed) {
		return g.Strict
	}
	ci := strings.ToLower(strings.TrimSpace(g.Getenv("CI")))
	return ci != "" && ci != "false" && ci != "0"
}

// configPath is where the configuration file is (docs/config.md).
func (g *Globals) configPath() string { return config.Path(g.Getenv) }

// loadConfig reads the configuration file; a file that cannot be used is
// an exit-1 error naming it (and its line when known).
func (g *Globals) loadConfig() (*config.File, string, error) {
	path := g.configPath()
	if path == "" {
		return &config.File{}, path, nil
	}
	f, err := config.Load(path)
	if err != nil {
		return nil, path, errorf("fix the file, or point CPACTL_CONFIG at another one", "%v", err)
	}
	if u := f.Unsafe; u != nil {
		fix := "chmod go-w " + quote.Shell(path)
		if u.Owner >= 0 {
			fix = "use a file of your own: copy it, chmod 600 the copy and point CPACTL_CONFIG at it"
		}
		if g.strict() {
			return nil, path, &Failure{Code: ExitError, Err: u,
				Hint: fix + " (cpactl refuses such a file with --strict and when CI is set)"}
		}
		g.warn("%v; %s (--strict and CI refuse it)", u, fix)
	}
	return f, path, nil
}

// context returns the context in force: --context, else CPACTL_CONTEXT,
// else the file's current context; none is the zero Context. Naming one
// the file does not hold is an error.
func (g *Globals) context(cmd *cobra.Command) (config.Context, error) {
	f, path, err := g.loadConfig()
	if err != nil {
		return config.Context{}, err
	}
	name, from := g.Context, "--context"
	if !cmd.Flags().Changed("context") {
		name, from = strings.TrimSpace(g.Getenv("CPACTL_CONTEXT")), "CPACTL_CONTEXT"
	}
	if name == "" {
		name, from = f.CurrentContext, "current-context"
	}
	if name == "" {
		return config.Context{}, nil
	}
	c, ok := f.Lookup(name)
	if !ok {
		return c, errorf("see `cpactl config get-contexts`, or create it with `cpactl config set-context "+quote.Shell(name)+" -H URI`",
			"context %q (%s) is not in %s", name, from, path)
	}
	return c, nil
}

// resolveSettings fills the connection settings the flags left unset, in
// this order of precedence (docs/config.md): the flag, then CPACTL_*, then
// the context of the configuration file, then OpenLDAP's LDAP* variables,
// then the default. It is the one place that order lives.
func (g *Globals) resolveSettings(cmd *cobra.Command) error {
	ctx, err := g.context(cmd)
	if err != nil {
		return err
	}
	env := func(name string) string { return strings.TrimSpace(g.Getenv(name)) }
	changed := func(name string) bool { return g.ldapChanged(cmd, name) }
	from := "-H"
	if !changed("url") {
		switch {
		case env("CPACTL_URL") != "":
			g.URLs, from = []string{env("CPACTL_URL")}, "CPACTL_URL"
		case len(ctx.URL) > 0:
			g.URLs, from = ctx.URL, fmt.Sprintf("context %q", ctx.Name)
		case env("LDAPURI") != "":
			g.URLs, from = []string{env("LDAPURI")}, "LDAPURI"
		}
	}
	g.URLs = splitURLs(g.URLs)
	if err := checkURLs(from, g.URLs); err != nil {
		return err
	}
	if err := ldapuri.Check("--write-url", g.WriteURL); err != nil {
		return err
	}
	g.baseExplicit = changed("base")
	if !g.baseExplicit {
		g.Base = firstOf(env("CPACTL_BASE"), ctx.Base, env("LDAPBASE"))
		g.baseExplicit = g.Base != ""
		g.baseOfContext = env("CPACTL_BASE") == "" && ctx.Base != ""
		if !g.baseExplicit {
			g.Base = ldapschema.DefaultBase
		}
	}
	g.bindDNFrom = "-D"
	if !changed("bind-dn") {
		switch {
		case env("CPACTL_BIND_DN") != "":
			g.BindDN, g.bindDNFrom = env("CPACTL_BIND_DN"), "CPACTL_BIND_DN"
		case ctx.BindDN != "":
			g.BindDN, g.bindDNFrom = ctx.BindDN, fmt.Sprintf("context %q", ctx.Name)
		default:
			g.BindDN, g.bindDNFrom = env("LDAPBINDDN"), "LDAPBINDDN"
		}
	}
	if !changed("starttls") && ctx.StartTLS {
		g.StartTLS = true
	}
	if !changed("ca-file") && ctx.CAFile != "" {
		g.CAFile = ctx.CAFile
	}
	if !changed("timeout") && ctx.TimeoutDuration() > 0 {
		g.Timeout = ctx.TimeoutDuration()
	}
	return nil
}

// ldapChanged reports whether the LDAP connection flag name was given: the
// root's flag of that name, or, below `cpactl horizon` (where --url, -W,
// -y and --ca-file are the Horizon server's), its ldap- form (--ldap-url,
// -H). A Horizon flag of the same name never counts.
func (g *Globals) ldapChanged(cmd *cobra.Command, name string) bool {
	if g.rootFlags == nil {
		return cmd.Flags().Changed(name)
	}
	if f := g.rootFlags.Lookup(name); f != nil && f.Changed {
		return true
	}
	f := cmd.Flags().Lookup("ldap-" + name)
	return f != nil && f.Changed
}

// splitURLs splits each value of -H (or a variable) at commas and spaces:
// "ldap://a,ldap://b" is two URIs.
func splitURLs(values []string) []string {
	var urls []string
	for _, u := range values {
		urls = append(urls, strings.FieldsFunc(u, func(r rune) bool { return r == ' ' || r == ',' })...)
	}
	return urls
}

// checkURLs refuses a URI with a user name or password before "@" (LDAP
// URIs have none), naming where it came from and never echoing it.
func checkURLs(from string, urls []string) error {
	for _, u := range urls {
		if err := ldapuri.Check(from, u); err != nil {
			return err
		}
	}
	return nil
}

// firstOf returns the first value that is not empty.
func firstOf(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// passwordSource is what -y may be: a regular file or a pipe (-y /dev/stdin
// fed by a pipe, -y <(pass show ldap)), of a password alone.
var passwordSource = osfile.Source{Max: 4 * osfile.KiB, Pipes: true}

// fileError says why a file read whole cannot be used: "password file
// /dev/zero is a character device, ...", or "cannot read password file:
// open ...: no such file or directory".
func fileError(what string, err error) string {
	var kind *osfile.KindError
	var large *osfile.TooLargeError
	if errors.As(err, &kind) || errors.As(err, &large) {
		return what + " " + err.Error()
	}
	return fmt.Sprintf("cannot read %s: %v", what, err)
}

// password finds the bind password: -y FILE, -W (terminal prompt), or
// CPACTL_BIND_PASSWORD. There is no password flag: it would land in argv.
func (g *Globals) password() (string, error) {
	return g.secret(g.PromptPassword, g.PasswordFile, "CPACTL_BIND_PASSWORD",
		fmt.Sprintf("Enter LDAP password for %s:", g.BindDN))
}

// secret reads a password from one source: the file (-y; a trailing
// newline is not part of it), the terminal (-W, asking message), else the
// environment variable env (empty when unset). The LDAP bind and the
// Horizon login share it; neither has a password flag, which would land in
// argv.
func (g *Globals) secret(promptFor bool, file, env, message string) (string, error) {
	if promptFor && file != "" {
		return "", errorf("pass the password one way", "-W and -y both given")
	}
	switch {
	case file != "":
		b, _, err := passwordSource.Read(file)
		if err != nil {
			return "", errorf("write the password alone in a file of mode 0600, or use -W or "+env,
				"%s", fileError("password file", err))
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	case promptFor:
		pw, err := g.ReadPassword(message)
		if err != nil {
			return "", errorf("", "%v", err)
		}
		return pw, nil
	}
	return g.Getenv(env), nil
}

// credentials says where the bind password and DN came from, for the hint
// of a refused bind: "the password came from CPACTL_BIND_PASSWORD, the
// bind DN from context "lab"". It names sources, never the password.
func (g *Globals) credentials() string {
	from := "CPACTL_BIND_PASSWORD"
	switch {
	case g.PasswordFile != "":
		from = "-y " + quote.Shell(g.PasswordFile)
	case g.PromptPassword:
		from = "-W (typed at the prompt)"
	}
	return fmt.Sprintf("the password came from %s, the bind DN from %s", from, g.bindDNFrom)
}

func (g *Globals) dialOptions() (ldapconn.Options, error) {
	opts := ldapconn.Options{URLs: g.URLs, BindDN: g.BindDN, StartTLS: g.StartTLS, CAFile: g.CAFile,
		InsecureSkipVerify: g.InsecureSkipVerify, Timeout: g.Timeout, WriteURL: g.WriteURL, Run: g.Run,
		Note: func(msg string) { g.note("%s", msg) }}
	if g.BindDN != "" {
		pw, err := g.password()
		if err != nil {
			return opts, err
		}
		if pw == "" && g.belowHorizon {
			// -W and -y are the REST account's there: name the flags
			// that are the bind's.
			return opts, errorf("use --ldap-prompt-password, --ldap-password-file FILE or CPACTL_BIND_PASSWORD (-W and -y are the REST account's below `cpactl horizon`)",
				"bind as %q needs a password", g.BindDN)
		}
		opts.Password = pw
		opts.Credentials = g.credentials()
	}
	if g.InsecureSkipVerify {
		fmt.Fprintln(g.IO.Err, "warning: --insecure-skip-tls-verify: the server certificate is NOT checked; anyone on the path can read and change this session")
	}
	return opts, nil
}

// Dial connects to the server the flags name.
func (g *Globals) Dial() (*ldapconn.Conn, error) {
	opts, err := g.dialOptions()
	if err != nil {
		return nil, err
	}
	if len(opts.URLs) == 0 {
		return nil, errorf("pass -H ldap://host:port or set CPACTL_URL; read commands also take --from FILE.ldif",
			"no server given")
	}
	return ldapconn.Dial(opts)
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
	st.Note = func(msg string) { g.note("%s", msg) }
	return st, func() { c.Close() }, nil
}

// storeAt returns a store on the federation as it was at --at: the
// server's state with the changes its history holds since taken back.
func (g *Globals) storeAt(from string) (*directory.Store, func(), error) {
	if from != "" {
		return nil, nil, errorf("drop --from: --at rebuilds the past from the server's history, which a snapshot does not have",
			"--at and --from do not go together")
	}
	at, err := parseMoment("--at", g.At, time.Now())
	if err != nil {
		return nil, nil, err
	}
	st, closeFn, err := g.Store()
	if err != nil {
		return nil, nil, err
	}
	past, err := st.AsOf(at)
	if err != nil {
		closeFn()
		return nil, nil, err
	}
	return past, closeFn, nil
}

// ReadStore returns a store on the snapshot file from (an LDIF file, or a
// Horizon pull directory, imported in memory), or on the live directory
// when from is empty. Without an explicit base, a snapshot's base is found
// from its containers. It is the one place --from is opened.
func (g *Globals) ReadStore(from string) (*directory.Store, func(), error) {
	if g.At != "" {
		return g.storeAt(from)
	}
	if from == "" {
		return g.Store()
	}
	var snap *snapshot.Snapshot
	var err error
	if horizonimport.IsPull(from) {
		// A Horizon pull: imported in memory, what the API does not
		// carry at cpactl's defaults (docs/horizon.md).
		snap, err = g.importPull(from)
		if err != nil {
			return nil, nil, err
		}
	} else if snap, err = g.loadSnapshot(from); err != nil {
		return nil, nil, errorf("pass an LDIF file written by `cpactl export` or `ldapsearch -LLL`", "%v", err)
	}
	if snap.Len() == 0 {
		return nil, nil, &Failure{Code: ExitNotFound, Err: fmt.Errorf("snapshot %s is empty: it holds no entries", from),
			Hint: "pass an LDIF file written by `cpactl export` or `ldapsearch -LLL`"}
	}
	return directory.NewStore(snap, g.snapshotBase(snap)), func() {}, nil
}

// runner is a command's options, which run it.
type runner interface{ run() error }

// execute runs a command's options, or hands them to runF in a test.
func (g *Globals) execute(o runner) error {
	if g.runF != nil {
		return g.runF(o)
	}
	return o.run()
}
