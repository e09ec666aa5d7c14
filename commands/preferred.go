package commands

import (
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/output"
	"github.com/cpactl/cpactl/prompt"
	"github.com/cpactl/cpactl/rules"
)

type sitePreferredOptions struct {
	g *Globals
	readFlags
	writeFlags
	Name  string
	Set   []string
	Clear bool
	Show  bool

	setGiven    bool
	outputGiven bool
	// open connects for writes (g.Store); a test may wrap the client.
	open func() (*directory.Store, func(), error)
}

// PreferredView is a site's ranked list as `site preferred --show` prints
// it (JSON contract): the array order is the rank order.
type PreferredView struct {
	Site           string   `json:"site"`
	PreferredSites []string `json:"preferred_sites"`
}

func newSitePreferredCommand(g *Globals) *cobra.Command {
	o := &sitePreferredOptions{g: g, open: g.Store}
	cmd := &cobra.Command{
		Use:   "preferred NAME [--set A,B,C | --clear | --show]",
		Short: "Show or rank a site's preferred sites (interactive on a terminal)",
		Long: `A site's preferred sites are the other sites the broker searches, in rank
order, after the connecting site (and the home site) when a global
entitlement has Use Preferred Sites and scope ANY.

  --set A,B,C   replace the list: A ranks first. Every site must exist, the
                site itself and duplicates are refused. Quote names holding
                commas as CSV does: --set '"R&D, West",UK'.
  --clear       remove every preferred site.
  --show        print the list in rank order (-o json|yaml, --from FILE).

With no flag on a terminal, cpactl shows the current order and lets you
build the new one: pick the first site, then the next, until "(done)", or
keep the current order; then it asks before writing. Without a terminal,
pass --set.

The list is written in one modify that asserts the list read: if another
administrator changed it in between, nothing is written and cpactl exits
5; re-read and apply your change again.`,
		Example: `  cpactl site preferred India --set UK,US
  cpactl site preferred India --show -o json
  cpactl site preferred India          # interactive ordering
  cpactl site preferred India --clear --dry-run`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			o.setGiven = cmd.Flags().Changed("set")
			o.outputGiven = cmd.Flags().Changed("output")
			return o.g.execute(o)
		},
	}
	csvListVar(cmd.Flags(), &o.Set, "set", "the new list, first rank first: A,B,C")
	cmd.Flags().BoolVar(&o.Clear, "clear", false, "remove every preferred site")
	cmd.Flags().BoolVar(&o.Show, "show", false, "print the list in rank order")
	o.readFlags.add(cmd)
	o.writeFlags.add(cmd)
	return cmd
}

func (o *sitePreferredOptions) validate() error {
	modes := 0
	for _, on := range []bool{o.setGiven, o.Clear, o.Show} {
		if on {
			modes++
		}
	}
	if modes > 1 {
		return errorf("pass one of them", "--set, --clear and --show exclude each other")
	}
	if !o.Show && (o.outputGiven || o.From != "") {
		return errorf("add --show to read the list", "-o and --from apply to --show only")
	}
	if o.Show && o.DryRun {
		return errorf("", "--dry-run applies to --set, --clear and the interactive ordering, not to --show")
	}
	if o.setGiven {
		o.Set = cleanList(o.Set)
		if len(o.Set) == 0 {
			return errorf("to remove every preferred site, use --clear", "--set names no site")
		}
		if err := rules.PreferredSites(o.Name, o.Set); err != nil {
			return refused(err)
		}
	}
	return nil
}

func (o *sitePreferredOptions) run() error {
	if err := o.validate(); err != nil {
		return err
	}
	if o.Show {
		return o.show()
	}
	if !o.setGiven && !o.Clear && !o.g.Interactive() {
		return errorf(fmt.Sprintf("pass the new order, e.g. `cpactl site preferred %s --set A,B` (or --clear, or --show)", o.Name),
			"ordering preferred sites interactively needs a terminal on stdin and stdout: use --set")
	}
	st, closeFn, err := o.open()
	if err != nil {
		return err
	}
	defer closeFn()
	site, err := st.Site(o.Name)
	if err != nil {
		return err
	}
	var next []string
	switch {
	case o.Clear:
	case o.setGiven:
		for _, n := range o.Set {
			s, err := st.Site(n)
			if err != nil {
				return err // a missing site: exit 3
			}
			if err := rules.PreferredSite(site, s, n); err != nil {
				return refused(err)
			}
			next = append(next, s.Name)
		}
	default:
		all, err := st.Sites()
		if err != nil {
			return err
		}
		var others []string
		for _, s := range all {
			if !ldapschema.EqualDN(s.DN, site.DN) {
				others = append(others, s.Name)
			}
		}
		chosen, keep, err := askPreferredOrder(o.g.Prompter, o.g.IO.Err, site.Name, site.PreferredSites, others)
		if err != nil {
			return err
		}
		if keep {
			next = site.PreferredSites
		} else {
			next = chosen
		}
		if !slices.Equal(next, site.PreferredSites) && !o.DryRun {
			q := fmt.Sprintf("Set the preferred sites of %s to %s?", site.Name, ranked(next))
			if len(next) == 0 {
				q = fmt.Sprintf("Remove every preferred site of %s?", site.Name)
			}
			if err := ask(o.g, "preferred sites of site "+site.Name, q); err != nil {
				return err
			}
		}
	}
	if slices.Equal(next, site.PreferredSites) {
		o.g.report("preferred sites of site %s: unchanged", site.Name)
		return nil
	}
	verb, done, what := "set", "set", fmt.Sprintf("preferred sites of site %s: %s", site.Name, ranked(next))
	if len(next) == 0 {
		verb, done, what = "clear", "cleared", "preferred sites of site "+site.Name
	}
	if o.DryRun {
		o.g.report("would %s %s", verb, what)
		return nil
	}
	if err := st.SetPreferredSites(site, next); err != nil {
		return err
	}
	o.g.report("%s %s", done, what)
	return nil
}

func (o *sitePreferredOptions) show() error {
	p, st, closeFn, err := o.readFlags.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	site, err := st.Site(o.Name)
	if err != nil {
		return err
	}
	v := PreferredView{Site: site.Name, PreferredSites: orEmpty(site.PreferredSites)}
	return p.Print(v, func(w io.Writer) error {
		if len(v.PreferredSites) == 0 {
			_, err := output.Fprintf(w, "site %s has no preferred sites\n", v.Site)
			return err
		}
		rows := make([][]string, len(v.PreferredSites))
		for i, n := range v.PreferredSites {
			rows[i] = []string{strconv.Itoa(i + 1), n}
		}
		return output.Rows(w, []string{"rank", "site"}, rows)
	})
}

// askPreferredOrder builds a new ranked list with the administrator: it
// shows the current order, then asks for the site at rank 1, 2, ... among
// the sites not chosen yet, until "(done)" (or until none is left). The
// first question also offers to keep the current order (keep is then
// true). Each question's default is the next site of the current order,
// so pressing Enter throughout keeps it.
func askPreferredOrder(p prompt.Prompter, errOut io.Writer, site string, current, others []string) (chosen []string, keep bool, err error) {
	if len(others) == 0 {
		return nil, false, errorf("create another site first", "site %s is the only site: there is no other site to rank", site)
	}
	if len(current) == 0 {
		output.Fprintf(errOut, "Site %s has no preferred sites.\n", site)
	} else {
		output.Fprintf(errOut, "Current preferred sites of %s: %s\n", site, ranked(current))
	}
	// Candidates: the current list in rank order, then the others by name.
	var candidates []string
	for _, n := range current {
		if firstFold(others, n) != "" {
			candidates = append(candidates, firstFold(others, n))
		}
	}
	for _, n := range others {
		if firstFold(candidates, n) == "" {
			candidates = append(candidates, n)
		}
	}
	done, keepLabel := uniqueLabel("(done)", candidates), uniqueLabel("(keep current order)", candidates)
	for rank := 1; ; rank++ {
		var remaining []string
		for _, c := range candidates {
			if firstFold(chosen, c) == "" {
				remaining = append(remaining, c)
			}
		}
		if len(remaining) == 0 {
			return chosen, false, nil
		}
		def := done
		for _, c := range current {
			if n := firstFold(remaining, c); n != "" {
				def = n
				break
			}
		}
		options := append(remaining, done)
		if rank == 1 {
			options = append(options, keepLabel)
		}
		msg := fmt.Sprintf("Preferred site %d of %s (chosen: %s):", rank, site, ranked(chosen))
		if rank == 1 {
			msg = fmt.Sprintf("Preferred site 1 of %s:", site)
		}
		choice, err := p.Select(msg, options, def)
		if err != nil {
			return nil, false, err
		}
		switch choice {
		case keepLabel:
			return current, true, nil
		case done:
			return chosen, false, nil
		}
		chosen = append(chosen, choice)
	}
}

// uniqueLabel returns label, wrapped in more parentheses while a site
// carries that name.
func uniqueLabel(label string, names []string) string {
	for firstFold(names, label) != "" {
		label = "(" + label + ")"
	}
	return label
}
