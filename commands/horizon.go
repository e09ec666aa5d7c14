package commands

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/horizon"
)

// horizonFlags are the connection flags of every horizon command: the
// Connection Server, the REST account and TLS. They shadow the LDAP
// flags of the same names (--url, -W, -y, --ca-file,
// --insecure-skip-tls-verify, --timeout): below `cpactl horizon` they
// speak of the Horizon server, and the LDAP context's values do not apply.
type horizonFlags struct {
	URL                string
	Domain             string
	User               string
	PromptPassword     bool
	PasswordFile       string
	CAFile             string
	InsecureSkipVerify bool
	Timeout            time.Duration
}

// horizonPasswordEnv holds the REST account's password when neither -W
// nor -y is given.
const horizonPasswordEnv = "CPACTL_HORIZON_PASSWORD"

func (h *horizonFlags) add(cmd *cobra.Command) {
	f := cmd.PersistentFlags()
	f.StringVar(&h.URL, "url", "", "the Connection Server, https://HOST[:PORT] (the REST API is under /rest)")
	f.StringVar(&h.Domain, "domain", "", "the REST account's domain (NetBIOS or DNS name; not a UPN)")
	f.StringVar(&h.User, "user", "", "the REST account's user name (or DOMAIN\\NAME)")
	f.BoolVarP(&h.PromptPassword, "prompt-password", "W", false, "prompt for the REST account's password on the terminal")
	f.StringVarP(&h.PasswordFile, "password-file", "y", "", "read the REST account's password from this file (or set "+horizonPasswordEnv+")")
	f.StringVar(&h.CAFile, "ca-file", "", "PEM file of the CA(s) that signed the Connection Servers' certificates (a private CA)")
	f.BoolVar(&h.InsecureSkipVerify, "insecure-skip-tls-verify", false, "DANGEROUS: do not check the Connection Servers' certificates (warned on every run)")
	f.DurationVar(&h.Timeout, "timeout", 60*time.Second, "time limit for connecting, for each answer to start and for each pause while it arrives")
}

// client checks the connection flags and reads the password: no request
// is sent before all of them are right.
func (h *horizonFlags) client(g *Globals, pageSize int) (*horizon.Client, string, error) {
	if h.URL == "" {
		return nil, "", errorf("pass --url https://CONNECTION-SERVER", "no Connection Server given")
	}
	base, err := horizon.BaseURL(h.URL)
	if err != nil {
		return nil, "", errorf("pass --url https://CONNECTION-SERVER", "--url: %v", err)
	}
	domain, user := h.Domain, h.User
	if d, u, ok := strings.Cut(user, `\`); ok && domain == "" {
		domain, user = d, u
	}
	if user == "" || domain == "" || strings.Contains(user, "@") {
		return nil, "", errorf("pass --domain DOMAIN --user NAME (or --user 'DOMAIN\\NAME'): Horizon takes no UPN",
			"the REST account needs --domain and --user")
	}
	pw, err := g.secret(h.PromptPassword, h.PasswordFile, horizonPasswordEnv,
		fmt.Sprintf(`Enter Horizon password for %s\%s:`, domain, user))
	if err != nil {
		return nil, "", err
	}
	if pw == "" {
		return nil, "", errorf("pass -W (prompt), -y FILE, or set "+horizonPasswordEnv, "no password for the REST account")
	}
	if h.InsecureSkipVerify {
		g.warn("--insecure-skip-tls-verify: the Connection Servers' certificates are NOT checked; anyone on the path can read this session, password included")
	}
	c, err := horizon.NewClient(horizon.Config{CAFile: h.CAFile, InsecureSkipVerify: h.InsecureSkipVerify,
		Timeout: h.Timeout, PageSize: pageSize}, horizon.Credentials{Domain: domain, User: user, Password: pw})
	if err != nil {
		return nil, "", errorf("", "%v", err)
	}
	return c, base, nil
}

func newHorizonCommand(g *Globals) *cobra.Command {
	h := &horizonFlags{}
	cmd := &cobra.Command{
		Use:   "horizon",
		Short: "Bring a live federation in through the Horizon Server REST API, and push CPA settings back",
		Long: `Talks to a live Horizon 8 federation through its documented REST API
(the 2512 revision): pull reads it, read-only, into a directory; import
turns that directory into cpactl's LDIF (for apply, diff, and --from,
which also reads a pull directory as it is); sync pulls, imports and
compares with the directory (--apply makes the directory match); push
makes Horizon match cpactl for what the API can write (preferred sites,
entitlement flags, home sites).

The REST account logs in with --domain, --user and a password from -W
(prompt), -y FILE or ` + horizonPasswordEnv + ` (never a flag). Reading needs
Administrators (Read only) on the root federated access group: with less,
Horizon silently leaves objects out; push needs Administrators. Certificates are always checked
(--ca-file for a private CA). See docs/horizon.md.`,
	}
	h.add(cmd)
	// --user is the REST account, not a user of the directory.
	_ = cmd.RegisterFlagCompletionFunc("user", cobra.NoFileCompletions)
	cmd.AddCommand(newHorizonPullCommand(g, h), newHorizonImportCommand(g, h), newHorizonSyncCommand(g, h), newHorizonPushCommand(g, h))
	return cmd
}

type horizonPullOptions struct {
	g        *Globals
	h        *horizonFlags
	Dir      string
	PodURLs  []string
	Missing  []string
	Replace  bool
	PageSize int
}

func newHorizonPullCommand(g *Globals, h *horizonFlags) *cobra.Command {
	o := &horizonPullOptions{g: g, h: h}
	cmd := &cobra.Command{
		Use:   "pull --url https://CS -o DIR",
		Short: "Read the whole federation, read-only, into a pull directory",
		Long: `Logs in to the Connection Server --url names, reads every federation-wide
endpoint from it (CPA, sites, pods, global entitlements and their members,
home sites, pod assignments, AD users and groups) and every pod-local one
(Connection Servers, pools and their metrics, farms, RDS hosts, machines,
the pod's sessions) from a Connection Server of each pod: the address of
the pod's endpoints, or --pod-url POD=URL when this machine reaches the pod
by another name. Lists are read in pages of --page-size; a 429 is waited
out; an expired token is renewed; every session is logged out at the end,
on error and on Ctrl-C.

DIR receives what the servers answered, unchanged, one file per answer, and
manifest.json (server version, time, which server answered each request,
counts, what a server did not have). It is written beside DIR and renamed
at the end: DIR holds a whole pull or is left as it was. An existing DIR
that is not empty is refused; --replace replaces an earlier pull (and
nothing else).

A pod none of whose servers answers fails the pull (exit 1) unless
--allow-missing-pod names it. A server older than 2512 has no preferred
sites: the pull says so and reads what it has.`,
		Example: `  CPACTL_HORIZON_PASSWORD=... cpactl horizon pull --url https://cs1.corp.example.com \
      --domain CORP --user svc-cpactl -o ./pull
  cpactl horizon pull --url https://cs1.corp.example.com --domain CORP --user svc-cpactl -W \
      --pod-url London-1=https://lon-cs1.vpn.example.com --allow-missing-pod Tokyo-1 -o ./pull --replace`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	cmd.Flags().StringVarP(&o.Dir, "output-dir", "o", "", "the pull directory to write (created; see --replace)")
	cmd.Flags().StringArrayVar(&o.PodURLs, "pod-url", nil, "POD=https://HOST: reach this pod's Connection Server here (repeatable)")
	cmd.Flags().StringArrayVar(&o.Missing, "allow-missing-pod", nil, "pull without this pod when none of its Connection Servers answers (repeatable)")
	cmd.Flags().BoolVar(&o.Replace, "replace", false, "replace DIR when it holds an earlier pull")
	cmd.Flags().IntVar(&o.PageSize, "page-size", horizon.MaxPageSize, "records per page of a paged list (1..1000)")
	return cmd
}

func (o *horizonPullOptions) run() error {
	if o.Dir == "" {
		return errorf("pass -o DIR", "no pull directory given")
	}
	podURLs, err := parsePodURLs(o.PageSize, o.PodURLs)
	if err != nil {
		return err
	}
	if err := horizon.CheckTarget(o.Dir, o.Replace); err != nil {
		return err
	}
	c, base, err := o.h.client(o.g, o.PageSize)
	if err != nil {
		return err
	}
	man, err := o.g.pull(c, o.Dir, horizon.PullOptions{URL: base, PodURLs: podURLs, AllowMissing: o.Missing, Replace: o.Replace})
	if err != nil {
		return err
	}
	var missing []string
	for _, p := range man.Pods {
		if p.Missing {
			missing = append(missing, p.Name)
		}
	}
	pods := fmt.Sprintf("%d %s", len(man.Pods), plural(len(man.Pods), "pod", "pods"))
	if len(missing) > 0 {
		pods += fmt.Sprintf(" (%d missing: %s)", len(missing), strings.Join(missing, ", "))
	}
	ges := man.Counts["global-desktop-entitlements"] + man.Counts["global-application-entitlements"]
	o.g.report("pulled %s, %d %s, %d global %s and %d %s into %s (%d requests, %d files)",
		pods, man.Counts["sites"], plural(man.Counts["sites"], "site", "sites"),
		ges, plural(ges, "entitlement", "entitlements"),
		man.Counts["global-sessions"], plural(man.Counts["global-sessions"], "session", "sessions"),
		o.Dir, man.Requests, len(man.Files))
	return nil
}

// parsePodURLs checks --page-size and turns --pod-url POD=URL values into
// REST bases by pod: no request is sent before they are right.
func parsePodURLs(pageSize int, values []string) (map[string]string, error) {
	if pageSize < 1 || pageSize > horizon.MaxPageSize {
		return nil, errorf("pass --page-size from 1 to 1000", "--page-size %d is out of range", pageSize)
	}
	podURLs := map[string]string{}
	for _, v := range values {
		pod, u, ok := strings.Cut(v, "=")
		if !ok || strings.TrimSpace(pod) == "" {
			return nil, errorf("pass --pod-url POD=https://HOST", "--pod-url %q is not POD=URL", v)
		}
		base, err := horizon.BaseURL(u)
		if err != nil {
			return nil, errorf("pass --pod-url POD=https://HOST", "--pod-url %s: %v", pod, err)
		}
		podURLs[strings.TrimSpace(pod)] = base
	}
	return podURLs, nil
}

// pull runs a pull into dir with progress and notes on stderr; Ctrl-C
// cancels it (exit 130) after every session is logged out.
func (g *Globals) pull(c *horizon.Client, dir string, opts horizon.PullOptions) (*horizon.Manifest, error) {
	// A note lands on a line of its own, above the bar.
	opts.Note = func(msg string) { fmt.Fprintln(g.progress.meter.Lines(g.IO.Err), "note: "+msg) }
	if m := g.progress.meter; m != nil {
		opts.Records = m.Stage("reading", "records", 0)
	}
	var man *horizon.Manifest
	err := g.interruptible(func(ctx context.Context) error {
		var err error
		man, err = c.Pull(ctx, dir, opts)
		return err
	})
	if m := g.progress.meter; m != nil {
		m.End()
	}
	return man, err
}
