package commands

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/output"
)

func init() { register(newResolveCommand) }

type resolveOptions struct {
	g *Globals
	readFlags
	User             string
	Entitlement      string
	ConnectionServer string
	Pod              string
	Client           string
	Protocol         string
	Unauthenticated  bool
	OfflinePods      []string
	Seed             int64
}

func newResolveCommand(g *Globals) *cobra.Command {
	o := &resolveOptions{g: g}
	cmd := &cobra.Command{
		Use:   "resolve",
		Short: "Dry-run the broker's search: where would this user's session land, and why?",
		Long: `Runs the Connection Server's whole search for one connection request, the
way SPEC §3 describes it, and explains every step: the entitlement checks
(membership through nested groups, Connection Server tags, client
restrictions), existing sessions, a dedicated assignment, the home site, the
order in which sites are searched (starting, connecting, preferred with the
load threshold, remaining), the pods and pools tried in each site and, for
RDS farms, the host buckets.

Nothing is written. What-if options: --offline-pod treats pods as offline,
--seed changes every random order (the seed is always printed).

Exit codes: 0 when the user would get a session (PLACED, RECONNECT,
CHOOSE_SESSION, ASSIGNED), 6 when not (DENIED, UNAVAILABLE, NO_CAPACITY),
3 when a named user, entitlement, Connection Server, pod or computer does not
exist, 1 on other errors.`,
		Example: `  # on the bundled seed-000 fixture, no server needed
  cpactl resolve --from fixtures/seed-000.ldif --user alice --entitlement "Sales Desktops" --connection-server india-cs-1

  # what if the UK pod went down?
  cpactl resolve --user CORP\\alice --entitlement "Sales Desktops" --connection-server india-cs-1 --offline-pod uk-pod-1 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run()
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.User, "user", "", "the user: uid, DOMAIN\\uid or uid@domain (required)")
	f.StringVar(&o.Entitlement, "entitlement", "", "the global entitlement (required)")
	f.StringVar(&o.ConnectionServer, "connection-server", "", "the Connection Server the user reached")
	f.StringVar(&o.Pod, "pod", "", "connect as if through an untagged Connection Server of this pod")
	f.StringVar(&o.Client, "client", "", "the client computer (for client restrictions and multiple sessions per user)")
	f.StringVar(&o.Protocol, "protocol", "", "blast, pcoip or rdp (default: the entitlement's default protocol)")
	f.BoolVar(&o.Unauthenticated, "unauthenticated", false, "an unauthenticated user (application entitlements)")
	f.StringArrayVar(&o.OfflinePods, "offline-pod", nil, "treat this pod as offline (repeatable)")
	f.Int64Var(&o.Seed, "seed", 0, "seed of every random order")
	o.readFlags.add(cmd)
	return cmd
}

func (o *resolveOptions) validate() error {
	switch {
	case o.User == "":
		return errorf("", "--user is required")
	case o.Entitlement == "":
		return errorf("", "--entitlement is required")
	case o.ConnectionServer != "" && o.Pod != "":
		return errorf("give one of them", "both --connection-server and --pod given")
	case o.ConnectionServer == "" && o.Pod == "":
		return errorf("name the Connection Server the user reached, or --pod to connect through an untagged server of that pod",
			"--connection-server or --pod is required")
	}
	switch strings.ToLower(o.Protocol) {
	case "", "blast", "pcoip", "rdp":
	default:
		return errorf("", "--protocol %q: use blast, pcoip or rdp", o.Protocol)
	}
	if _, err := directory.ParseUserName(o.User); err != nil {
		return errorf("", "%v", err)
	}
	return nil
}

func (o *resolveOptions) run() error {
	p, err := o.printer(o.g)
	if err != nil {
		return err
	}
	st, closeFn, err := o.g.ReadStore(o.From)
	if err != nil {
		return err
	}
	defer closeFn()
	data, err := st.ResolveFederation(directory.ResolveQuery{User: o.User, Entitlement: o.Entitlement,
		ConnectionServer: o.ConnectionServer, Client: o.Client})
	if err != nil {
		return err
	}
	d, err := broker.Resolve(data.Federation, broker.Request{User: data.UID, Entitlement: o.Entitlement,
		ConnectionServer: o.ConnectionServer, Pod: o.Pod, Client: o.Client,
		Protocol: broker.Protocol(strings.ToUpper(o.Protocol)), Unauthenticated: o.Unauthenticated,
		OfflinePods: o.OfflinePods, Seed: o.Seed})
	if err != nil {
		return err
	}
	// What the directory could not read cleanly comes first: it may explain
	// the rest.
	d.Warnings = append(append([]string{}, data.Warnings...), d.Warnings...)
	if err := p.Print(d, func(w io.Writer) error { return writeDecision(w, d) }); err != nil {
		return err
	}
	if !d.Outcome.GetsSession() {
		return silentExit(ExitNoSession)
	}
	return nil
}

// writeDecision renders a decision for a person: outcome and placement,
// home site, site order, pools and hosts, then the trace.
func writeDecision(w io.Writer, d *broker.Decision) error {
	ew := &errWriter{w: w}
	r := d.Request
	ew.printf("%s: %s\n", d.Outcome, d.Reason)
	if pl := d.Placement; pl != nil {
		parts := []string{"site " + pl.Site, "pod " + pl.Pod}
		if pl.Pool != "" {
			parts = append(parts, "pool "+pl.Pool)
		}
		if pl.Farm != "" {
			parts = append(parts, "farm "+pl.Farm)
		}
		if pl.Host != "" {
			parts = append(parts, "host "+pl.Host)
		}
		if pl.Machine != "" {
			parts = append(parts, "machine "+pl.Machine)
		}
		if pl.Session != "" {
			parts = append(parts, "session "+pl.Session)
		}
		ew.printf("placement: %s\n", strings.Join(parts, ", "))
		if len(pl.EligibleHosts) > 1 {
			ew.printf("  any of %s may serve (bucket-1 rotation)\n", strings.Join(pl.EligibleHosts, ", "))
		}
		if pl.BecomesAssignment {
			ew.printf("  this pod becomes %s's pod assignment for %s\n", r.User, r.Entitlement)
		}
	}
	via := "pod " + r.ConnectingPod
	if r.ConnectionServer != "" {
		via = "connection server " + r.ConnectionServer + " (pod " + r.ConnectingPod + ")"
	}
	kind := strings.ToLower(string(r.EntitlementType))
	if r.EntitlementType == broker.TypeDesktop {
		kind = map[bool]string{true: "dedicated desktop", false: "floating desktop"}[r.Dedicated]
	}
	ew.printf("request: %s -> %s (%s, scope %s, policy %s) via %s, site %s, protocol %s, seed %d\n",
		r.User, r.Entitlement, kind, r.Scope, r.Policy, via, r.ConnectingSite, r.Protocol, d.Seed)
	if len(r.OfflinePods) > 0 {
		ew.printf("offline pods: %s\n", strings.Join(r.OfflinePods, ", "))
	}
	for _, c := range d.Checks {
		if !c.Passed {
			ew.printf("check failed: %s: %s\n", c.Check, c.Detail)
		}
	}

	hs := d.HomeSite
	ew.printf("\nHOME SITE\n")
	switch {
	case !hs.UseHomeSite:
		ew.printf("  not used: the entitlement does not use home sites\n")
	case hs.Site == nil:
		ew.printf("  none: the search starts at the connecting site (%s)\n", hs.Source)
	default:
		extra := ""
		if hs.OutsideScope {
			extra = " (outside the entitlement's scope: not searched)"
		}
		ew.printf("  %s from %s%s\n", *hs.Site, hs.Source, extra)
	}
	for _, row := range hs.Rows {
		if row.Won {
			continue
		}
		ge := "global"
		if row.Entitlement != nil {
			ge = *row.Entitlement
		}
		ew.printf("  lost: %s %s -> %s (%s, %s): %s\n", row.Kind, row.Name, row.Site, ge, row.Level, row.LostBecause)
	}
	for _, c := range hs.Conflicts {
		var names []string
		for _, g := range c.Groups {
			names = append(names, g.Group+"="+g.Site)
		}
		ew.printf("  conflict at %s: %s; %s wins (first by name)\n", c.Level, strings.Join(names, ", "), c.WinningGroup)
	}
	if rd := d.HomeSiteRedirection; rd != nil {
		ew.printf("  redirection: %s\n", rd.Detail)
	}

	if len(d.Sessions) > 0 {
		ew.printf("\nEXISTING SESSIONS\n")
		rows := make([][]string, 0, len(d.Sessions))
		for _, s := range d.Sessions {
			rows = append(rows, []string{s.ID, s.Site, s.Pod, s.Pool, string(s.State), string(s.Status), s.Detail})
		}
		ew.rows([]string{"session", "site", "pod", "pool", "state", "status", "detail"}, rows)
	}

	if len(d.SiteOrder) > 0 {
		ew.printf("\nSITE ORDER\n")
		rows := make([][]string, 0, len(d.SiteOrder))
		for i, v := range d.SiteOrder {
			result := "searched"
			if v.Skipped {
				result = "skipped: " + v.SkipReason
			} else if !v.Searched {
				result = "not reached"
			}
			threshold := "-"
			if v.Threshold != nil {
				threshold = strconv.Itoa(*v.Threshold)
			}
			rows = append(rows, []string{strconv.Itoa(i + 1), string(v.Tier), v.Site, formatLoad(v.Load), threshold, result})
		}
		ew.rows([]string{"#", "tier", "site", "load", "threshold", "result"}, rows)

		ew.printf("\nPODS AND POOLS CONSIDERED\n")
		var prow [][]string
		var selections []*broker.PoolVisit
		for _, v := range d.SiteOrder {
			for _, pod := range v.Pods {
				podName := pod.Pod
				if pod.Connecting {
					podName += " (connecting)"
				}
				if len(pod.Pools) == 0 {
					prow = append(prow, []string{v.Site, podName, "-", "-", pod.Status, formatLoad(pod.Load), pod.SkipReason})
				}
				for i := range pod.Pools {
					pool := &pod.Pools[i]
					prow = append(prow, []string{v.Site, podName, pool.Pool, string(pool.Kind), pool.Status,
						formatLoad(pool.Load), pool.Detail})
					if pool.HostSelection != nil {
						selections = append(selections, pool)
					}
				}
			}
		}
		if len(prow) > 0 {
			ew.rows([]string{"site", "pod", "pool", "kind", "status", "load", "detail"}, prow)
		}
		for _, pool := range selections {
			writeHostSelection(ew, pool.Farm, pool.Pool, pool.HostSelection)
		}
	}

	if len(d.Warnings) > 0 {
		ew.printf("\nWARNINGS\n")
		for _, warning := range d.Warnings {
			ew.printf("  %s\n", warning)
		}
	}
	ew.printf("\nTRACE\n")
	for i, s := range d.Trace {
		ew.printf("  %2d. [%s] %s\n", i+1, s.Step, s.Message)
	}
	return ew.err
}

func writeHostSelection(ew *errWriter, farm, pool string, hs *broker.HostSelection) {
	raised := ""
	if hs.Raised {
		raised = fmt.Sprintf(" (raised from %d to reach %d hosts)", hs.Thresholds.LIT, hs.Thresholds.MIN)
	}
	chosen := hs.Chosen
	if chosen == "" {
		chosen = "none"
	}
	ew.printf("\nRDS HOSTS OF FARM %s (pool %s): bucket %d serves, chosen %s; effective load index threshold %d%s, connecting session threshold %d\n",
		farm, pool, hs.Bucket, chosen, hs.EffectiveLIT, raised, hs.Thresholds.CST)
	rows := make([][]string, 0, len(hs.Hosts))
	for _, h := range hs.Hosts {
		bucket := "-"
		if h.Candidate {
			bucket = strconv.Itoa(h.Bucket)
		}
		why := h.Why
		if h.Refused != "" {
			why = "refused: " + h.Refused
		}
		rows = append(rows, []string{h.Host, bucket, strconv.Itoa(h.LoadIndex), strconv.Itoa(h.Connecting),
			strconv.Itoa(h.Sessions), why})
	}
	ew.rows([]string{"host", "bucket", "load index", "connecting", "sessions", "why"}, rows)
}

func formatLoad(l *float64) string {
	if l == nil {
		return "-"
	}
	return strconv.FormatFloat(*l, 'f', 2, 64)
}

// errWriter keeps the first write error so rendering code stays linear.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

func (e *errWriter) rows(header []string, rows [][]string) {
	if e.err == nil {
		e.err = output.Rows(e.w, header, rows)
	}
}
