package commands

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/impact"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/output"
)

type impactOptions struct {
	g *Globals
	readFlags
	ConnectionServers []string
	Site              string
	Entitlements      []string
	Users             []string
	Groups            []string
	Limit             int
	Seed              int64
	whatIf            whatIfFlags
}

func newImpactCommand(g *Globals) *cobra.Command {
	o := &impactOptions{g: g}
	cmd := &cobra.Command{
		Use:   "impact",
		Short: "Whose sessions would land somewhere else after a change, and where?",
		Long: `Resolves every request the directory entitles (each user and each global
entitlement it is given, directly or through nested groups) from each
connecting point, before and after the what-ifs, as ` + "`cpactl resolve`" + ` does, and
reports what moves: a summary (requests that keep their placement, change
outcome, change site, change pod or pool only), the outcome changes, a
from -> to matrix of the sites of the requests that move, and the moves:
in the table one row per user, entitlement and change, the connecting pods
folded into one cell, with a short why ("India's rank 1 changed from UK to
US"); in -o json one per request, with the first trace step that differs.
Nothing is written.

Connecting points: --connection-server (repeatable), or --site (one untagged
Connection Server of each pod of the site online before and after, the pod
itself when it has none), by default one for every pod online before and
after. Filters: --entitlement, --user and --group (members through nested
groups), each repeatable; --limit cuts the list of moves, never the summary.

Users whose decision reads the same inputs are resolved once and counted
(docs/impact.md says how the classes are formed). -o json and -o yaml are a
stable contract. Exit codes: 0 when nothing moves, 2 when a request moves
(as diff), 3 when a named object does not exist, 1 on other errors.`,
		Example: `  # who moves if pod London-1 goes down? (no server: the demo fixture)
  cpactl impact --from fixtures/demo.ldif --offline-pod London-1

  # in a change window's pipeline: exit 2 when anything moves
  cpactl impact --site India --offline-pod London-1 -o json --limit 100 > impact.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.g.execute(o)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.ConnectionServers, "connection-server", nil, "connect through this Connection Server (repeatable)")
	f.StringVar(&o.Site, "site", "", "connect through one untagged Connection Server of each online pod of this site")
	f.StringArrayVar(&o.Entitlements, "entitlement", nil, "only this global entitlement (repeatable)")
	f.StringArrayVar(&o.Users, "user", nil, "only this user: uid, DOMAIN\\uid or uid@domain (repeatable)")
	f.StringArrayVar(&o.Groups, "group", nil, "only the members of this group, through nested groups (repeatable)")
	f.IntVar(&o.Limit, "limit", 0, "list at most N moves (0: all); the summary counts every request")
	f.Int64Var(&o.Seed, "seed", 0, "seed of every random order")
	o.whatIf.add(cmd)
	o.readFlags.add(cmd)
	return cmd
}

func (o *impactOptions) validate() error {
	if o.Site != "" && len(o.ConnectionServers) > 0 {
		return errorf("give one of them", "both --site and --connection-server given")
	}
	if o.Limit < 0 {
		return errorf("", "--limit %d: give 0 (all) or more", o.Limit)
	}
	for i, u := range o.Users {
		n, err := directory.ParseUserName(u)
		if err != nil {
			return errorf("", "%v", err)
		}
		o.Users[i] = n.UID
	}
	return o.whatIf.validate()
}

// impactReport is what impact prints: the engine's report with the
// what-ifs in force and how many moves --limit left out.
type impactReport struct {
	WhatIf           []broker.WhatIf          `json:"what_if"`
	ConnectingPoints []impact.ConnectingPoint `json:"connecting_points"`
	Summary          impact.Summary           `json:"summary"`
	Moves            []impact.Move            `json:"moves"`
	MovesLeftOut     int                      `json:"moves_left_out"`
}

func (o *impactOptions) run() error {
	p, base, closeFn, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	st, list, offline, err := o.whatIf.overlay(base)
	if err != nil {
		return err
	}
	done := o.g.track(base, "reading the directory", "entries", 0)
	before, err := base.Federation()
	done()
	if err != nil {
		return err
	}
	after := before
	if st != base {
		done = o.g.track(st, "reading it with the what-ifs", "entries", 0)
		after, err = st.Federation()
		done()
		if err != nil {
			return err
		}
	}
	for _, w := range append(append([]string(nil), before.Warnings...), after.Warnings...) {
		o.g.warn("%s", w)
	}
	if err := checkOffline(before.Federation, offline); err != nil {
		return err
	}
	var points []impact.ConnectingPoint
	if len(o.ConnectionServers) > 0 {
		for _, cs := range o.ConnectionServers {
			cp, err := impact.Point(before.Federation, cs)
			if err != nil {
				return err
			}
			points = append(points, cp)
		}
	} else if points, err = impact.DefaultPoints(before.Federation, after.Federation, offline, o.Site); err != nil {
		return err
	}
	if len(points) == 0 {
		return errorf("check `cpactl pod list`", "no pod online before and after the change to connect through")
	}
	rep, err := impact.Run(before.Federation, after.Federation, impact.Options{Points: points, Offline: offline,
		Entitlements: o.Entitlements, Users: o.Users, Groups: o.Groups, Seed: o.Seed, Progress: o.g.stage})
	o.g.endProgress()
	if err != nil {
		return err
	}
	out := impactReport{WhatIf: list, ConnectingPoints: rep.Points, Summary: rep.Summary, Moves: rep.Moves}
	if out.WhatIf == nil {
		out.WhatIf = []broker.WhatIf{}
	}
	if o.Limit > 0 && len(out.Moves) > o.Limit {
		out.MovesLeftOut = len(out.Moves) - o.Limit
		out.Moves = out.Moves[:o.Limit]
	}
	if err := p.Print(out, func(w io.Writer) error { return impactTable(w, &out) }); err != nil {
		return err
	}
	s := rep.Summary
	if moved := s.ChangedOutcome + s.ChangedSite + s.ChangedPodOrPool; moved > 0 {
		fmt.Fprintf(o.g.IO.Err, "impact: %d of %d requests move\n", moved, s.Requests)
		return silentExit(ExitDiff)
	}
	return nil
}

// checkOffline refuses a what-if offline pod that does not exist (exit 3),
// as resolve does.
func checkOffline(f *broker.Federation, offline []string) error {
	for _, name := range offline {
		found := false
		for _, p := range f.Pods {
			if strings.EqualFold(p.Name, name) {
				found = true
			}
		}
		if !found {
			return &broker.NotFoundError{Kind: objkind.Pod, Name: name}
		}
	}
	return nil
}

func impactTable(w io.Writer, r *impactReport) error {
	s := r.Summary
	moved := s.ChangedOutcome + s.ChangedSite + s.ChangedPodOrPool
	var whatIf []string
	for _, x := range r.WhatIf {
		whatIf = append(whatIf, strings.TrimSpace(x.Kind+" "+x.Target+" "+x.Value))
	}
	if len(whatIf) == 0 {
		whatIf = []string{"none"}
	}
	var points []string
	for _, cp := range r.ConnectingPoints {
		if cp.ConnectionServer != "" {
			points = append(points, cp.ConnectionServer)
		} else {
			points = append(points, "pod "+cp.Pod)
		}
	}
	output.Fprintf(w, "impact: %d of %d requests move (what-if: %s)\n", moved, s.Requests, strings.Join(whatIf, "; "))
	fmt.Fprintf(w, "unchanged %d, outcome changed %d, site changed %d, pod or pool changed %d\n",
		s.Unchanged, s.ChangedOutcome, s.ChangedSite, s.ChangedPodOrPool)
	output.Fprintf(w, "connecting through: %s\n", strings.Join(points, ", "))
	if moved == 0 {
		return nil
	}
	tally := func(title string, cells []impact.Count) error {
		if len(cells) == 0 {
			return nil
		}
		fmt.Fprintf(w, "\n%s\n", title)
		var rows [][]string
		for _, c := range cells {
			rows = append(rows, []string{dash(c.From), dash(c.To), fmt.Sprint(c.Requests)})
		}
		return output.Rows(w, []string{"from", "to", "requests"}, rows)
	}
	if err := tally("OUTCOME CHANGES", s.Outcomes); err != nil {
		return err
	}
	if err := tally("SITES (of the requests that move)", s.Sites); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nMOVES\n")
	if err := output.Rows(w, []string{"user", "entitlement", "connecting pods", "before", "after", "why"}, moveRows(r)); err != nil {
		return err
	}
	if r.MovesLeftOut > 0 {
		fmt.Fprintf(w, "(%d more moves left out by --limit)\n", r.MovesLeftOut)
	}
	return nil
}

// moveRows are the table's rows of the moves: one per user, entitlement,
// before, after and why, the connecting pods folded into one cell (the
// moves come sorted by entitlement, user and pod, so a user's moves for
// one entitlement are next to each other; JSON keeps one per request).
func moveRows(r *impactReport) [][]string {
	type group struct {
		key  [5]string
		pods []string
	}
	var rows [][]string
	var run []*group // the groups of the current user and entitlement
	flush := func() {
		for _, g := range run {
			rows = append(rows, []string{g.key[0], g.key[1], podsCell(g.pods, len(r.ConnectingPoints)), g.key[2], g.key[3], g.key[4]})
		}
		run = run[:0]
	}
	for i, m := range r.Moves {
		if i > 0 && (m.User != r.Moves[i-1].User || m.Entitlement != r.Moves[i-1].Entitlement) {
			flush()
		}
		key := [5]string{m.User, m.Entitlement, where(m.Before), where(m.After), m.Why}
		var g *group
		for _, x := range run {
			if x.key == key {
				g = x
			}
		}
		if g == nil {
			g = &group{key: key}
			run = append(run, g)
		}
		g.pods = append(g.pods, m.Pod)
	}
	flush()
	return rows
}

// podsCell folds connecting pods into one cell: all of them named up to
// three, else a count with the first two.
func podsCell(pods []string, points int) string {
	switch {
	case len(pods) == points && points > 3:
		return fmt.Sprintf("all %d connecting pods", points)
	case len(pods) > 3:
		return fmt.Sprintf("%d pods: %s, %s, ...", len(pods), pods[0], pods[1])
	}
	return strings.Join(pods, ", ")
}

// where renders one side of a move: the outcome and the placement.
func where(r impact.Result) string {
	var parts []string
	for _, v := range []string{r.Site, r.Pod, r.Pool, r.Host, r.Machine, r.Session} {
		if v != "" {
			parts = append(parts, v)
		}
	}
	if len(parts) == 0 {
		return string(r.Outcome)
	}
	return string(r.Outcome) + " " + strings.Join(parts, "/")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
