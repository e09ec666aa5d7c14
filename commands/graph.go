package commands

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/internal/fold"
	"github.com/cpactl/cpactl/output"
)

type siteGraphOptions struct {
	g           *Globals
	Output      string
	From        string
	Entitlement string
	whatIf      whatIfFlags
}

func newSiteGraphCommand(g *Globals) *cobra.Command {
	o := &siteGraphOptions{g: g}
	cmd := &cobra.Command{
		Use:   "graph",
		Short: "Draw the sites, their ranked preferred sites and their pods (Graphviz DOT or Mermaid)",
		Long: `Draws the federation's topology: one box per site holding its pods
(offline pods dashed), and an arrow from each site to each of its
preferred sites, labelled with the rank (1 is searched first).

With --entitlement GE, each site also shows its load for that global
entitlement under the entitlement's Session Load Distribution policy
(the load resolve compares with pae-LoadThresholdForSite) and, when the
entitlement ignores preferred sites with high load, which sites a
preferred-site search would skip: they and the arrows into them are drawn
in red. --offline-pod takes pods out of the loads, as for resolve.

-o dot (the default) writes Graphviz's DOT, to render with dot; -o mermaid
writes a Mermaid flowchart, which GitHub and GitLab render in Markdown.
The output is sorted: the same federation always draws the same bytes.`,
		Example: `  cpactl site graph --from fixtures/demo.ldif | dot -Tsvg -o sites.svg
  cpactl site graph --entitlement "Analyst RDS" -o mermaid`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", string(output.DOT), "picture format: dot or mermaid")
	f.StringVar(&o.From, "from", "", "read an LDIF snapshot (cpactl export, ldapsearch -LLL) or a Horizon pull directory instead of a server")
	f.StringVar(&o.Entitlement, "entitlement", "", "show each site's load for this global entitlement, and the preferred sites it would skip")
	o.whatIf.add(cmd)
	return cmd
}

func (o *siteGraphOptions) run() error {
	format := output.Format(strings.ToLower(o.Output))
	if format != output.DOT && format != output.Mermaid {
		return errorf("", "-o %q: site graph draws dot or mermaid", o.Output)
	}
	if err := o.whatIf.validate(); err != nil {
		return err
	}
	base, closeFn, err := o.g.ReadStore(o.From)
	if err != nil {
		return err
	}
	defer closeFn()
	st, _, offline, err := o.whatIf.overlay(base)
	if err != nil {
		return err
	}
	data, err := st.TopologyFederation(o.Entitlement)
	if err != nil {
		return err
	}
	var loads *broker.EntitlementSiteLoads
	if o.Entitlement != "" {
		if loads, err = broker.SiteLoadsFor(data.Federation, o.Entitlement, offline); err != nil {
			return st.WithSuggestion(err)
		}
	} else if len(offline) > 0 {
		return errorf("pass --entitlement GE to see the loads without those pods", "--offline-pod needs --entitlement")
	}
	for _, w := range data.Warnings {
		o.g.warn("%s", w)
	}
	if loads != nil {
		for _, w := range loads.Warnings {
			o.g.warn("%s", w)
		}
	}
	g := siteGraph(data.Federation, loads, offline)
	if format == output.Mermaid {
		return output.WriteMermaid(o.g.IO.Out, g)
	}
	return output.WriteDOT(o.g.IO.Out, g)
}

// siteGraph lays out the topology: a cluster per site (name order) with
// the site's node and its pods (name order), and the ranked
// preferred-site edges in each site's rank order. loads, when set, adds
// each site's load and marks the sites a preferred search would skip.
func siteGraph(f *broker.Federation, loads *broker.EntitlementSiteLoads, whatIfOffline []string) output.Graph {
	sites := append([]broker.Site(nil), f.Sites...)
	sort.SliceStable(sites, func(i, j int) bool { return nameOrder(sites[i].Name, sites[j].Name) })
	pods := append([]broker.Pod(nil), f.Pods...)
	sort.SliceStable(pods, func(i, j int) bool { return nameOrder(pods[i].Name, pods[j].Name) })
	stored := map[string]string{} // folded site name -> stored name
	for _, s := range sites {
		if _, dup := stored[fold.Key(s.Name)]; !dup {
			stored[fold.Key(s.Name)] = s.Name
		}
	}
	offline := map[string]bool{}
	for _, p := range whatIfOffline {
		offline[fold.Key(p)] = true
	}
	bySite := map[string]broker.SiteLoadEntry{}
	g := output.Graph{Title: "Sites and preferred sites (the number at the start of an arrow: its rank)", LeftToRight: true}
	if loads != nil {
		for _, s := range loads.Sites {
			bySite[fold.Key(s.Site)] = s
		}
		g.Title = loadsTitle(loads)
	}
	// A site is drawn as skipped only where a search would skip it: as
	// some site's preferred site.
	preferred := map[string]bool{}
	for _, s := range sites {
		for _, name := range s.PreferredSites {
			preferred[fold.Key(name)] = true
		}
	}
	skipped := map[string]bool{}
	drawn := map[string]bool{}
	for _, s := range sites {
		k := fold.Key(s.Name)
		if drawn[k] {
			continue // a second site whose name folds alike: lint reports it
		}
		drawn[k] = true
		c := output.Cluster{ID: "site " + s.Name, Label: s.Name}
		node := output.Node{ID: siteNodeID(s.Name), Lines: []string{s.Name}, Box: true}
		if loads != nil {
			l := bySite[k]
			l.Skipped = l.Skipped && preferred[k]
			node.Lines = append(node.Lines, siteLoadLine(loads, l))
			if l.Skipped {
				node.Emphasis, c.Emphasis = output.Alert, output.Alert
				skipped[k] = true
			}
		}
		c.Nodes = append(c.Nodes, node)
		for _, p := range pods {
			if fold.Key(p.Site) != k {
				continue
			}
			n := output.Node{ID: "pod/" + p.Name, Lines: []string{p.Name}}
			switch {
			case !p.Online:
				n.Lines, n.Emphasis = append(n.Lines, "offline"), output.Muted
			case offline[fold.Key(p.Name)]:
				n.Lines, n.Emphasis = append(n.Lines, "offline (what-if)"), output.Muted
			}
			c.Nodes = append(c.Nodes, n)
		}
		g.Clusters = append(g.Clusters, c)
	}
	missing := map[string]bool{}
	for _, s := range sites {
		for rank, name := range s.PreferredSites {
			to, ok := stored[fold.Key(name)]
			if !ok {
				to = name
				if !missing[fold.Key(name)] {
					missing[fold.Key(name)] = true
					g.Nodes = append(g.Nodes, output.Node{ID: siteNodeID(name), Lines: []string{name, "does not exist"},
						Box: true, Emphasis: output.Alert})
				}
			}
			e := output.Edge{From: siteNodeID(s.Name), To: siteNodeID(to), Label: strconv.Itoa(rank + 1), AtTail: true}
			if skipped[fold.Key(to)] || !ok {
				e.Emphasis = output.Alert
			}
			if skipped[fold.Key(to)] {
				e.Label += ": skipped"
			}
			g.Edges = append(g.Edges, e)
		}
	}
	return g
}

func siteNodeID(name string) string { return "site/" + name }

// nameOrder is the order of every listing: case-insensitive, then exact.
func nameOrder(a, b string) bool {
	if la, lb := strings.ToLower(a), strings.ToLower(b); la != lb {
		return la < lb
	}
	return a < b
}

// loadsTitle says what the loads of the picture are.
func loadsTitle(l *broker.EntitlementSiteLoads) string {
	t := fmt.Sprintf("Sites and preferred sites (the number at the start of an arrow: its rank); loads of %s, policy %s", l.Entitlement, l.Policy)
	switch {
	case l.Policy == broker.PolicyNone:
		t += ": no load is measured"
	case l.Scope != broker.ScopeAny:
		t += fmt.Sprintf(", scope %s: no preferred-site search", l.Scope)
	case !l.UsesPreferredSites:
		t += ": it does not use preferred sites"
	case l.IgnoreHighLoad:
		t += fmt.Sprintf("; a preferred site above pae-LoadThresholdForSite %d is skipped", l.Threshold)
	default:
		t += "; overloaded preferred sites are not skipped"
	}
	return t
}

// siteLoadLine is a site's load line: "load 40.00 <= 98".
func siteLoadLine(l *broker.EntitlementSiteLoads, s broker.SiteLoadEntry) string {
	switch {
	case s.Pools == 0:
		return "no available pool"
	case s.Load == nil:
		return plural(s.Pools, "1 available pool", strconv.Itoa(s.Pools)+" available pools")
	case s.Skipped:
		return fmt.Sprintf("load %s > %d: skipped as a preferred site", broker.FormatLoad(s.Load), l.Threshold)
	case l.UsesPreferredSites && l.IgnoreHighLoad:
		cmp := "<="
		if s.AboveThreshold {
			cmp = ">" // above, but no site prefers it: never skipped
		}
		return fmt.Sprintf("load %s %s %d", broker.FormatLoad(s.Load), cmp, l.Threshold)
	}
	return "load " + broker.FormatLoad(s.Load)
}
