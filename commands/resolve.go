package commands

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/output"
)

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
	whatIf           whatIfFlags
	Seed             int64
}

func newResolveCommand(g *Globals) *cobra.Command {
	o := &resolveOptions{g: g}
	cmd := &cobra.Command{
		Use:   "resolve",
		Short: "Dry-run the broker's search: where would this user's session land, and why?",
		Long: `Runs the Connection Server's whole search for one connection request, as
the broker does it, and explains every step: the entitlement checks
(membership through nested groups, Connection Server tags, client
restrictions), existing sessions, a dedicated assignment, the home site, the
order in which sites are searched (starting, connecting, preferred with the
load threshold, remaining), the pods and pools tried in each site and, for
RDS farms, the host buckets. docs/resolve.md explains every decision.

The table reads top down: the outcome and placement, the request and its
checks, existing sessions, the home site (every row, and why the others
lost), the site order (each site's tier, its load against
pae-LoadThresholdForSite, and what happened there), the pods, pools and RDS
hosts considered, warnings, and the numbered trace. -o json and -o yaml are a
stable contract. -o dot draws the search path as a Graphviz picture: the
sites in the order visited with their tier, the pods and pools tried, and
the placement highlighted.

Nothing is written. What-if options lay changes over the directory (or the
snapshot) in memory, for this answer only: --with FILE.ldif (a federation as
` + "`cpactl export`" + ` writes it, edited, checked as ` + "`cpactl apply`" + ` checks it; or an
ldapmodify change set), --setting KEY=VALUE (as ` + "`settings set`" + ` takes it),
--pool-sessions POOL=N, --host-load HOST=LOADINDEX[,connecting=N][,sessions=N],
--preferred SITE=A,B and --offline-pod POD, each repeatable; the answer
lists them (what_if in JSON). --seed changes every random order (the seed is
always printed). --from reads an LDIF snapshot instead of a server, with the
same answer.

Exit codes: 0 when the user would get a session (PLACED, RECONNECT,
CHOOSE_SESSION, ASSIGNED), 6 when not (DENIED, UNAVAILABLE, NO_CAPACITY),
3 when a named user, entitlement, Connection Server, pod or computer, or an
object a what-if names, does not exist (DOMAIN\uid with another domain than
the user's is such a user), 1 on other errors (a --with file apply would
refuse is refused with apply's message).`,
		Example: `  # seed 000, scenario 1, with no server: India is full, UK takes the session
  cpactl resolve --from fixtures/resolve-seed-000.ldif --user alice --entitlement "Sales Desktops" --connection-server india-cs-1

  # scenario 2: UK is above pae-LoadThresholdForSite, so US takes it
  cpactl resolve --from fixtures/resolve-seed-000-scenario-2.ldif --user alice --entitlement "Sales Desktops" --connection-server india-cs-1

  # scenario 2 again: would raising pae-LoadThresholdForSite to 99 send alice to UK?
  cpactl resolve --from fixtures/resolve-seed-000-scenario-2.ldif --user alice --entitlement "Sales Desktops" --connection-server india-cs-1 --setting pae-LoadThresholdForSite=99

  # against the server: what if the US pod went down? (JSON for scripts)
  cpactl resolve --user 'CORP\alice' --entitlement "Sales Desktops" --connection-server india-cs-1 --offline-pod us-pod-1 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.g.execute(o)
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
	o.whatIf.add(cmd)
	f.Int64Var(&o.Seed, "seed", 0, "seed of every random order")
	o.readFlags.pictures = []output.Format{output.DOT}
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
	if o.Protocol != "" {
		p, ok := ldapschema.Canonical(ldapschema.ProtocolAliases, o.Protocol)
		if !ok {
			return errorf("", "--protocol %q: use blast, pcoip or rdp", o.Protocol)
		}
		o.Protocol = p
	}
	if _, err := directory.ParseUserName(o.User); err != nil {
		return errorf("", "%v", err)
	}
	return o.whatIf.validate()
}

func (o *resolveOptions) run() error {
	p, base, closeFn, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	st, whatIfs, offline, err := o.whatIf.overlay(base)
	if err != nil {
		return err
	}
	data, err := st.ResolveFederation(directory.ResolveQuery{User: o.User, Entitlement: o.Entitlement,
		ConnectionServer: o.ConnectionServer, Client: o.Client})
	if err != nil {
		return err
	}
	d, err := broker.Resolve(data.Federation, broker.Request{User: data.UID, Entitlement: o.Entitlement,
		ConnectionServer: o.ConnectionServer, Pod: o.Pod, Client: o.Client,
		Protocol: broker.Protocol(strings.ToUpper(o.Protocol)), Unauthenticated: o.Unauthenticated,
		OfflinePods: offline, Seed: o.Seed, WhatIf: whatIfs})
	if err != nil {
		return st.WithSuggestion(err)
	}
	// What the directory could not read cleanly comes first: it may explain
	// the rest.
	d.Warnings = append(append([]string{}, data.Warnings...), d.Warnings...)
	if p.Format == output.DOT {
		err = writeDecisionDOT(p.Out, d)
	} else {
		err = p.Print(d, func(w io.Writer) error { return writeDecision(w, d) })
	}
	if err != nil {
		return err
	}
	if !d.Outcome.GetsSession() {
		return silentExit(ExitNoSession)
	}
	return nil
}

// writeDecision renders a decision for a person, in the order a person
// asks: what happens and where; why the search started where it did (home
// site); which sites were looked at and what happened at each; the pods,
// pools and RDS hosts considered; then warnings and the full trace.
func writeDecision(w io.Writer, d *broker.Decision) error {
	ew := &errWriter{w: w}
	writeOutcome(ew, d)
	writeSessions(ew, d)
	writeHomeSite(ew, d)
	writeSiteOrder(ew, d)
	writePodsAndPools(ew, d)
	writeBackup(ew, d)
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

// writeBackup writes the backup part: the backup GE, why it was tried,
// its own checks, and its sessions, site order and pods as for the primary.
func writeBackup(ew *errWriter, d *broker.Decision) {
	b := d.Backup
	if b == nil {
		return
	}
	ew.printf("\nBACKUP %s\n", b.Entitlement)
	ew.printf("  tried because %s\n", b.Reason)
	for _, c := range b.Checks {
		if !c.Passed {
			ew.printf("  check failed: %s: %s\n", c.Check, c.Detail)
		}
	}
	ew.printf("  %s: %s\n", b.Outcome, b.Detail)
	part := &broker.Decision{Sessions: b.Sessions, SiteOrder: b.SiteOrder}
	writeSessions(ew, part)
	writeSiteOrder(ew, part)
	writePodsAndPools(ew, part)
}

// writeOutcome writes the outcome, the placement, the request and the
// entitlement checks.
func writeOutcome(ew *errWriter, d *broker.Decision) {
	r := d.Request
	ew.printf("%s: %s\n", d.Outcome, d.Reason)
	if pl := d.Placement; pl != nil {
		parts := []string{"site " + pl.Site, "pod " + pl.Pod}
		for _, p := range []struct{ what, v string }{{"pool", pl.Pool}, {"farm", pl.Farm}, {"host", pl.Host},
			{"machine", pl.Machine}, {"session", pl.Session}} {
			if p.v != "" {
				parts = append(parts, p.what+" "+p.v)
			}
		}
		ew.printf("placement: %s\n", strings.Join(parts, ", "))
		if len(pl.EligibleHosts) > 1 {
			ew.printf("  any of %s may serve (bucket %d, shared by rotation; %s is first by name)\n",
				strings.Join(pl.EligibleHosts, ", "), pl.HostSelection.Bucket, pl.Host)
		}
		if pl.BecomesAssignment {
			ew.printf("  pod %s becomes %s's pod assignment for %s\n", pl.Pod, r.User, r.Entitlement)
		}
	}
	if sh := d.SharedSession; sh != nil {
		ew.printf("  opens in session %s of %s (an application in an existing RDS session)\n", sh.Session, sh.Entitlement)
	}
	if d.AutoClean != nil {
		if *d.AutoClean {
			ew.printf("  the sessions not chosen are logged off automatically\n")
		} else {
			ew.printf("  the sessions not chosen are left for manual logoff\n")
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
	extra := ""
	if r.Client != "" {
		extra += ", client " + r.Client
	}
	if r.Unauthenticated {
		extra += ", unauthenticated"
	}
	ew.printf("request: %s -> %s (%s, scope %s, policy %s) via %s, site %s, protocol %s%s, seed %d\n",
		r.User, r.Entitlement, kind, r.Scope, r.Policy, via, r.ConnectingSite, r.Protocol, extra, d.Seed)
	if len(d.WhatIf) > 0 {
		ew.printf("what-if (in memory, nothing written): %s\n", broker.DescribeWhatIfs(d.WhatIf))
	}
	if len(r.OfflinePods) > 0 {
		ew.printf("offline pods: %s\n", strings.Join(r.OfflinePods, ", "))
	}
	var passed []string
	for _, c := range d.Checks {
		if c.Passed {
			passed = append(passed, c.Check)
		} else {
			ew.printf("check failed: %s: %s\n", c.Check, c.Detail)
		}
	}
	if len(passed) > 0 {
		ew.printf("checks passed: %s\n", strings.Join(passed, ", "))
	}
	if a := d.Assignment; a != nil {
		ew.printf("pod assignment: pod %s%s\n", a.Pod, map[bool]string{true: ", machine " + a.Machine, false: ""}[a.Machine != ""])
	}
}

// writeSessions lists the user's existing sessions of the GE, when any.
func writeSessions(ew *errWriter, d *broker.Decision) {
	if len(d.Sessions) == 0 {
		return
	}
	ew.printf("\nEXISTING SESSIONS\n")
	rows := make([][]string, 0, len(d.Sessions))
	for _, s := range d.Sessions {
		rows = append(rows, []string{s.ID, s.Site, s.Pod, s.Pool, decisionCell(s.Host), string(s.State), decisionCell(s.Client), s.Detail})
	}
	ew.rows([]string{"session", "site", "pod", "pool", "host", "state", "client", "what resolve made of it"}, rows)
}

// writeHomeSite explains where the search started.
func writeHomeSite(ew *errWriter, d *broker.Decision) {
	hs, r := d.HomeSite, d.Request
	ew.printf("\nHOME SITE\n")
	switch {
	case !hs.UseHomeSite:
		ew.printf("  not used: %s does not use home sites; the search starts at the connecting site %s\n", r.Entitlement, r.ConnectingSite)
	case hs.Site == nil:
		ew.printf("  none: %s has no home site for %s; the search starts at the connecting site %s\n", r.User, r.Entitlement, r.ConnectingSite)
	case hs.OutsideScope:
		ew.printf("  %s (%s), outside the scope %s: reported, not searched\n", *hs.Site, hs.Source, r.Scope)
	default:
		ew.printf("  %s (%s): the search starts there\n", *hs.Site, hs.Source)
	}
	for _, row := range hs.Rows {
		ge := "global"
		if row.Entitlement != nil {
			ge = "override for " + *row.Entitlement
		}
		if row.Won {
			ew.printf("  wins:  %s %s -> %s (%s, %s)\n", row.Kind, row.Name, row.Site, ge, row.Level)
		} else {
			ew.printf("  loses: %s %s -> %s (%s, %s): %s\n", row.Kind, row.Name, row.Site, ge, row.Level, row.LostBecause)
		}
	}
	for _, c := range hs.Conflicts {
		var names []string
		for _, g := range c.Groups {
			names = append(names, g.Group+" -> "+g.Site)
		}
		effect := "outranked by a higher level, no effect"
		if c.Decisive {
			effect = "this decides the home site"
		}
		ew.printf("  conflict at %s: %s; %s wins (first by name): %s\n", c.Level, strings.Join(names, ", "), c.WinningGroup, effect)
	}
	if rd := d.HomeSiteRedirection; rd != nil {
		ew.printf("  redirection: %s\n", rd.Detail)
	}
}

// writeSiteOrder lists the sites in the order considered, with their load
// against pae-LoadThresholdForSite where it was compared, and what happened
// at each.
func writeSiteOrder(ew *errWriter, d *broker.Decision) {
	if len(d.SiteOrder) == 0 {
		return
	}
	title := "SITE ORDER"
	for _, v := range d.SiteOrder {
		if v.Threshold != nil {
			title += fmt.Sprintf(" (preferred sites above pae-LoadThresholdForSite %d are skipped)", *v.Threshold)
			break
		}
	}
	ew.printf("\n%s\n", title)
	rows := make([][]string, 0, len(d.SiteOrder))
	for i, v := range d.SiteOrder {
		load := formatLoad(v.Load)
		if v.Threshold != nil && v.Load != nil {
			cmp := "<="
			if v.Skipped {
				cmp = ">" // the only skip with a load: above the threshold
			}
			load = fmt.Sprintf("%s %s %d", load, cmp, *v.Threshold)
		}
		rows = append(rows, []string{strconv.Itoa(i + 1), string(v.Tier), v.Site, load, siteResult(v)})
	}
	ew.rows([]string{"#", "tier", "site", "load", "result"}, rows)
}

// siteResult says in a few words what happened at one site.
func siteResult(v broker.SiteVisit) string {
	if v.Skipped {
		return "skipped: " + v.SkipReason
	}
	if !v.Searched {
		return "not reached"
	}
	counts := map[string]int{}
	for _, pod := range v.Pods {
		if pod.Status == broker.StatusSkipped {
			counts["pod skipped"]++
		}
		for _, pool := range pod.Pools {
			if pool.Status == broker.StatusPlaced {
				where := "pool " + pool.Pool
				if pool.HostSelection != nil {
					where += ", host " + pool.HostSelection.Chosen
				}
				return "searched: placed in " + where
			}
			switch pool.Status {
			case broker.StatusFull:
				counts["pool full"]++
			case broker.StatusNoHost:
				counts["pool with no host"]++
			case broker.StatusUnavailable:
				counts["pool unavailable"]++
			}
		}
	}
	var parts []string
	for _, what := range []string{"pool full", "pool with no host", "pool unavailable", "pod skipped"} {
		if n := counts[what]; n > 0 {
			parts = append(parts, countOf(n, what))
		}
	}
	return "searched: no room (" + strings.Join(parts, ", ") + ")"
}

// countOf writes "1 pool full" or "2 pools full".
func countOf(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	noun, rest, _ := strings.Cut(what, " ")
	return fmt.Sprintf("%d %ss %s", n, noun, rest)
}

// writePodsAndPools lists the pods and pools considered at every site,
// then the RDS host buckets of every farm tried.
func writePodsAndPools(ew *errWriter, d *broker.Decision) {
	if len(d.SiteOrder) == 0 {
		return
	}
	var rows [][]string
	var selections []*broker.PoolVisit
	for _, v := range d.SiteOrder {
		for _, pod := range v.Pods {
			podName := pod.Pod
			if pod.Connecting {
				podName += " (connecting)"
			}
			if len(pod.Pools) == 0 {
				rows = append(rows, []string{v.Site, podName, "-", "-", formatLoad(pod.Load), pod.Status, pod.SkipReason})
			}
			for i := range pod.Pools {
				pool := &pod.Pools[i]
				// A skipped pod's pools are unavailable, and their detail
				// says why (the pod is offline, the pool disabled, ...).
				rows = append(rows, []string{v.Site, podName, pool.Pool, string(pool.Kind), formatLoad(pool.Load), pool.Status, pool.Detail})
				if pool.HostSelection != nil {
					selections = append(selections, pool)
				}
			}
		}
	}
	if len(rows) > 0 {
		ew.printf("\nPODS AND POOLS CONSIDERED\n")
		ew.rows([]string{"site", "pod", "pool", "kind", "load", "status", "detail"}, rows)
	}
	for _, pool := range selections {
		writeHostSelection(ew, pool.Farm, pool.Pool, pool.HostSelection)
	}
}

func decisionCell(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func writeHostSelection(ew *errWriter, farm, pool string, hs *broker.HostSelection) {
	raised := ""
	if hs.Raised {
		raised = fmt.Sprintf(" (raised from %d to reach %d hosts)", hs.Thresholds.LIT, hs.Thresholds.MIN)
	}
	verdict := fmt.Sprintf("bucket %d serves, chosen %s", hs.Bucket, hs.Chosen)
	if hs.Chosen == "" {
		verdict = "no host can take the session"
	}
	ew.printf("\nRDS HOSTS OF FARM %s (pool %s): %s; effective load index threshold %d%s, connecting session threshold %d\n",
		farm, pool, verdict, hs.EffectiveLIT, raised, hs.Thresholds.CST)
	if s := hs.Thresholds.Sources; s != nil {
		ew.printf("  thresholds: %s\n", s.String(hs.Thresholds))
	}
	for _, h := range hs.Hosts {
		if t := h.HostThresholds; t != nil {
			ew.printf("  host %s: load index threshold %s (%s), connecting session threshold %s (%s)\n", h.Host,
				offOr(t.LoadIndexThreshold, "off"), t.LoadIndexSource, offOr(t.ConnectingSessionThreshold, "off"), t.ConnectingSessionSource)
		}
	}
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
		_, e.err = output.Fprintf(e.w, format, args...)
	}
}

func (e *errWriter) rows(header []string, rows [][]string) {
	if e.err == nil {
		e.err = output.Rows(e.w, header, rows)
	}
}
