package commands

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/output"
)

type statusOptions struct {
	g       *Globals
	Output  string
	MaxLag  time.Duration
	Content bool
}

func newStatusCommand(g *Globals) *cobra.Command {
	o := &statusOptions{g: g}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Replication health of every -H URI: reachable, bound, role, contextCSN, lag; exit 2 when unhealthy",
		Long: `Asks every URI given with -H, at the same time, and prints one row each:
whether it answers (within --timeout), whether the bind succeeds, its role,
the base's contextCSN (the newest change it holds, per server ID) and how
far it lags behind the provider, in seconds.

The role comes from what a normal bind sees, without cn=config: a write
probe that cannot change anything (a modify of the base guarded by an
assertion no entry matches). A read-only replica refuses it as a write
(a referral to its provider, or "shadow context", 53): consumer. A server
that takes writes is the provider, or a mirror when another URI takes
writes too or its contextCSN holds changes of more than one server ID.
A base outside every naming context of the servers is a wrong -b, not a
replica: exit 3, naming the naming contexts they hold.
Lag is the provider's newest change of each server ID minus the replica's
(docs/replication.md).

A contextCSN says which changes a server was told about, not that it holds
them: slapd 2.5 can leave a replica short of a transaction's writes, or
holding the writes of a transaction the provider refused, with the
provider's contextCSN. So status also reads every server's content (the
entryUUID and entryCSN of each entry, streamed; --content=false skips it)
and compares, container by container, the entry count and a digest of
those pairs with the provider's, for each replica that holds the
provider's contextCSN (one that lags differs until it catches up).

Exit 0 when every URI answers and binds, a provider answers, no replica
lags more than --max-lag (or lacks the provider's changes) and none holds
other entries than the provider with the same contextCSN; exit 2
otherwise, with the reasons on stderr (the containers that differ): for
monitoring. A bind that may not read the base (no role, anonymous) sees
no contextCSN and cannot tell: that is not healthy either, exit 4 naming
the identity and the role it needs (helpdesk).`,
		Example: `  cpactl -H ldap://127.0.0.1:3390,ldap://127.0.0.1:3389 status
  cpactl -H ldap://replica1,ldap://replica2,ldap://provider status --max-lag 30s -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "table", "output format: table, json or yaml")
	cmd.Flags().DurationVar(&o.MaxLag, "max-lag", 60*time.Second, "exit 2 when a replica lags more than this behind the provider")
	cmd.Flags().BoolVar(&o.Content, "content", true, "read every server's entries (entryUUID and entryCSN only) and compare them with the provider's, container by container; --content=false compares contextCSNs only")
	return cmd
}

// statusReport is status's JSON and YAML (snake_case, pinned by tests).
type statusReport struct {
	Servers       []serverStatusJSON `json:"servers"`
	MaxLagSeconds float64            `json:"max_lag_seconds"`
	Healthy       bool               `json:"healthy"`
	Problems      []string           `json:"problems"`
}

type serverStatusJSON struct {
	URL        string    `json:"url"`
	Reachable  bool      `json:"reachable"`
	Bound      bool      `json:"bound"`
	Role       string    `json:"role"`
	Referral   string    `json:"refers_writes_to,omitempty"`
	ContextCSN []csnJSON `json:"context_csn"`
	LagSeconds *float64  `json:"lag_seconds"`
	CaughtUp   bool      `json:"caught_up"`
	// Content (with --content): the entries read, by container; whether
	// they match the provider's (null when not compared: not read, read
	// while changes came in, or a contextCSN other than the provider's);
	// the containers that differ.
	Entries        *int                `json:"entries"`
	Containers     []containerJSON     `json:"containers,omitempty"`
	ContentMatches *bool               `json:"content_matches"`
	Differs        []containerDiffJSON `json:"differs,omitempty"`
	Error          string              `json:"error,omitempty"`
}

type containerJSON struct {
	DN      string `json:"dn"`
	Entries int    `json:"entries"`
	Digest  string `json:"digest"`
}

type containerDiffJSON struct {
	DN              string `json:"dn"`
	Entries         int    `json:"entries"`
	ProviderEntries int    `json:"provider_entries"`
}

type csnJSON struct {
	ServerID int    `json:"server_id"`
	CSN      string `json:"csn"`
	Time     string `json:"time"`
}

func (o *statusOptions) run() error {
	f, err := output.ParseFormat(o.Output)
	if err != nil {
		return errorf("", "%v", err)
	}
	if o.MaxLag <= 0 {
		return errorf("pass a positive duration, e.g. --max-lag 60s", "--max-lag %s is not positive", o.MaxLag)
	}
	opts, err := o.g.dialOptions()
	if err != nil {
		return err
	}
	if len(opts.URLs) == 0 {
		return errorf("pass every replica and the provider: -H ldap://replica,ldap://provider", "no server given")
	}
	servers := directory.ReplicationStatus(opts, o.g.Base, o.Content)
	if err := baseOutsideAll(servers); err != nil {
		return err
	}
	report := statusReport{Servers: []serverStatusJSON{}, MaxLagSeconds: o.MaxLag.Seconds(), Problems: []string{}}
	providers := 0
	for _, s := range servers {
		j := serverStatusJSON{URL: s.URL, Reachable: s.Reachable, Bound: s.Bound, Role: s.Role,
			Referral: s.Referral, ContextCSN: []csnJSON{}, CaughtUp: s.CaughtUp}
		for _, c := range s.ContextCSN {
			j.ContextCSN = append(j.ContextCSN, csnJSON{ServerID: c.ServerID, CSN: c.Raw, Time: c.Time.Format(time.RFC3339Nano)})
		}
		if s.LagKnown {
			lag := s.Lag.Seconds()
			j.LagSeconds = &lag
		}
		if s.Err != nil {
			j.Error = oneLine(s.Err)
		}
		if s.Content != nil {
			n := directory.ContentTotal(s.Content)
			j.Entries = &n
			for _, c := range s.Content {
				j.Containers = append(j.Containers, containerJSON{DN: c.DN, Entries: c.Entries, Digest: c.Digest})
			}
		}
		if s.ContentCompared {
			same := len(s.Differs) == 0
			j.ContentMatches = &same
			for _, d := range s.Differs {
				j.Differs = append(j.Differs, containerDiffJSON{DN: d.DN, Entries: d.Entries, ProviderEntries: d.ReferenceHas})
			}
			if !same {
				report.Problems = append(report.Problems, contentProblem(s, o.g.Base))
			}
		}
		switch {
		case !s.Reachable:
			report.Problems = append(report.Problems, fmt.Sprintf("%s is unreachable: %s", s.URL, j.Error))
		case !s.Bound:
			report.Problems = append(report.Problems, fmt.Sprintf("%s: %s", s.URL, j.Error))
		case s.Err != nil:
			report.Problems = append(report.Problems, fmt.Sprintf("%s: %s", s.URL, j.Error))
		case s.Role == directory.RoleProvider || s.Role == directory.RoleMirror:
			providers++
			if s.Role == directory.RoleMirror && s.LagKnown && s.Lag > o.MaxLag {
				report.Problems = append(report.Problems, fmt.Sprintf("%s lags %s behind the other mirror (--max-lag %s)", s.URL, s.Lag.Round(time.Millisecond), o.MaxLag))
			}
		case !s.LagKnown:
			// Counted below once the providers are known.
		case s.Lag > o.MaxLag:
			report.Problems = append(report.Problems, fmt.Sprintf("%s lags %s behind the provider (--max-lag %s)", s.URL, s.Lag.Round(time.Millisecond), o.MaxLag))
		}
		report.Servers = append(report.Servers, j)
	}
	refused := false
	for _, s := range servers {
		var r *directory.RefusedError
		refused = refused || errors.As(s.Err, &r)
	}
	if providers == 0 && !refused {
		report.Problems = append(report.Problems, "no provider answered: lag cannot be measured (list the provider in -H)")
	} else {
		for _, s := range servers {
			if s.Bound && s.Err == nil && s.Role == directory.RoleConsumer && !s.LagKnown {
				report.Problems = append(report.Problems, fmt.Sprintf("%s holds none of the provider's changes under %s", s.URL, o.g.Base))
			}
		}
	}
	report.Healthy = len(report.Problems) == 0
	p := output.Printer{Format: f, Out: o.g.IO.Out}
	if err := p.Print(report, func(w io.Writer) error { return statusTable(w, report) }); err != nil {
		return err
	}
	if !report.Healthy {
		for _, problem := range report.Problems {
			output.Fprintf(o.g.IO.Err, "cpactl: %s\n", problem)
		}
		if refused {
			// The bind may not read the base: status cannot tell
			// anything of the server, and the fix is the bind's.
			return silentExit(ExitAuth)
		}
		return silentExit(ExitDiff)
	}
	return nil
}

// contentProblem says which containers of a replica hold other entries
// than the provider's, with the same contextCSN.
func contentProblem(s directory.ServerStatus, base string) string {
	var parts []string
	for _, d := range s.Differs {
		name := d.DN
		if rel, ok := strings.CutSuffix(strings.ToLower(d.DN), ","+strings.ToLower(base)); ok && rel != "" {
			name = d.DN[:len(rel)] // the container's RDN: the base is the same for all
		}
		parts = append(parts, fmt.Sprintf("%s (%d entries, the provider %d)", name, d.Entries, d.ReferenceHas))
	}
	return fmt.Sprintf("%s holds other entries than the provider %s, with the same contextCSN, in %s: re-initialise it (docs/replication.md)",
		s.URL, s.Reference, strings.Join(parts, ", "))
}

func statusTable(w io.Writer, r statusReport) error {
	var rows [][]string
	yes := map[bool]string{true: "yes", false: "no"}
	for _, s := range r.Servers {
		var csns []string
		for _, c := range s.ContextCSN {
			csns = append(csns, c.CSN)
		}
		lag := "-"
		if s.LagSeconds != nil {
			lag = fmt.Sprintf("%.1fs", *s.LagSeconds)
		}
		role := s.Role
		if role == "" {
			role = "-"
		}
		entries, content := "-", "-"
		if s.Entries != nil {
			entries = fmt.Sprint(*s.Entries)
		}
		if s.ContentMatches != nil {
			content = map[bool]string{true: "same", false: "DIFFERS"}[*s.ContentMatches]
		}
		rows = append(rows, []string{s.URL, yes[s.Reachable], yes[s.Bound], role, strings.Join(csns, " "), lag, entries, content, s.Error})
	}
	return output.Rows(w, []string{"URL", "REACHABLE", "BOUND", "ROLE", "CONTEXT CSN", "LAG", "ENTRIES", "CONTENT", "ERROR"}, rows)
}

// baseOutsideAll returns the error of a base that lies outside the naming
// contexts of every server that answered (a wrong -b, exit 3, not a
// replication problem); nil when a server holds it, or none answered.
func baseOutsideAll(servers []directory.ServerStatus) error {
	var outside error
	for _, s := range servers {
		var layout *ldapconn.LayoutError
		switch {
		case !s.Bound:
		case errors.As(s.Err, &layout) && len(layout.Contexts) > 0:
			outside = s.Err
		default:
			return nil
		}
	}
	return outside
}
