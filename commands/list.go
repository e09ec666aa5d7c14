package commands

import (
	"strconv"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/internal/glob"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/membership"
	"github.com/cpactl/cpactl/output"
	"github.com/cpactl/cpactl/quote"
)

// listFlags are what every list takes beside readFlags: --limit, and
// --name for the lists of named objects (docs/conventions.md, "Lists").
type listFlags struct {
	readFlags
	Limit int
	Name  string
	// plural names what the list lists in the count of a cut table:
	// "showing 50 of 12,345 users".
	plural string
}

// add adds the read flags, --limit and (named: the objects have names)
// --name.
func (l *listFlags) add(cmd *cobra.Command, plural string, named bool) {
	l.plural = plural
	l.readFlags.add(cmd)
	cmd.Flags().IntVar(&l.Limit, "limit", 0,
		"list at most N, the first in the list's order (0: all); a table then says on stderr how many there are")
	if named {
		cmd.Flags().StringVar(&l.Name, "name", "",
			"only the names matching this shell pattern, without regard to case: 'lon-*', '*-pod?', '[a-c]*' (quote it)")
	}
}

// selection validates --limit and --name (no I/O) and returns the
// selection they make, before any relationship flag narrows it.
func (l *listFlags) selection() (directory.Selection, error) {
	if l.Limit < 0 {
		return directory.Selection{}, errorf("pass a number of objects, or 0 for all", "--limit %d: it takes 0 or more", l.Limit)
	}
	sel := directory.Selection{Limit: l.Limit}
	if l.Name != "" {
		p, err := glob.Parse(l.Name)
		if err != nil {
			return sel, errorf(`a pattern matches whole names: * any run of characters, ? one, [a-z] one of a set, [!a-z] one not of it, \ before a character to take it as it is`,
				"--name: %v", err)
		}
		sel.Name = p
	}
	return sel, nil
}

// open is readFlags.open for a list: it validates the list's flags
// first, and returns the selection they make.
func (l *listFlags) open(g *Globals) (output.Printer, *directory.Store, func(), directory.Selection, error) {
	sel, err := l.selection()
	if err != nil {
		return output.Printer{}, nil, nil, sel, err
	}
	p, st, closeFn, err := l.readFlags.open(g)
	return p, st, closeFn, sel, err
}

// counted says on stderr, under a table only, that --limit left objects
// out: "showing 50 of 12,345 users: --limit 0 for all". JSON and YAML are
// cut the same way and say nothing: their stderr stays for errors, as
// with --progress. A pattern with no wildcard that matches nothing gets a
// note that patterns match whole names.
func (l *listFlags) counted(g *Globals, p output.Printer, shown, total int) {
	if p.Format == output.JSON || p.Format == output.YAML {
		return
	}
	if total > shown {
		g.note("showing %s of %s %s: --limit 0 for all", thousands(shown), thousands(total), l.plural)
	}
	if total == 0 && l.Name != "" {
		if p, err := glob.Parse(l.Name); err == nil {
			if _, literal := p.Literal(); literal {
				g.note("no %s is named %q: a pattern matches whole names (%q for the names starting with it)",
					l.singular(), l.Name, l.Name+"*")
			}
		}
	}
}

// singular is the plural's word for one object, for notes.
func (l *listFlags) singular() string {
	s := l.plural
	if n := len(s); n > 1 && s[n-1] == 's' {
		return s[:n-1]
	}
	return s
}

// cut applies --limit to a list built whole (the lists whose order is
// not by name: assignments, home-site rows), returning it and how many
// there were.
func cut[T any](items []T, limit int) ([]T, int) {
	if limit > 0 && len(items) > limit {
		return items[:limit], len(items)
	}
	return items, len(items)
}

// thousands writes n with commas between groups of three digits, as the
// count of a cut list reads: 12,345.
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// reachedBy returns the DN test of the objects within group (a user or
// computer list's --group): its members and, through nested groups, theirs,
// as Horizon entitles a group's members (membership.Graph.Reach). A group
// that does not exist is exit 3 with the nearest name.
func reachedBy(st *directory.Store, group string, groups []ldapschema.Group) (func(string) bool, error) {
	gr, err := st.Group(group)
	if err != nil {
		return nil, err
	}
	within := map[string]bool{}
	for _, r := range membership.New(groups).Reach(gr.Members) {
		within[ldapschema.NormalizeDN(r.DN)] = true
	}
	return func(dn string) bool { return within[dn] }, nil
}

// withFilter adds an LDAP filter to the selection's.
func withFilter(sel *directory.Selection, filter string) {
	if sel.Filter == "" {
		sel.Filter = filter
	} else {
		sel.Filter = ldapclient.And(sel.Filter, filter)
	}
}

// podsOfSite returns the DN test of the objects below the pods of site (a
// pool, Connection Server or farm list's --site): the site must exist.
func podsOfSite(st *directory.Store, site string) (func(string) bool, error) {
	s, err := st.Site(site)
	if err != nil {
		return nil, err
	}
	pods, err := st.SelectPods(directory.Selection{Filter: ldapclient.Filter(ldapschema.AttrSiteDN, s.DN)})
	if err != nil {
		return nil, err
	}
	under := map[string]bool{}
	for _, p := range pods.Items {
		under[ldapschema.NormalizeDN(p.DN)] = true
	}
	return func(dn string) bool {
		for p := ldapschema.ParentOf(dn); p != ""; p = ldapschema.ParentOf(p) {
			if under[p] {
				return true
			}
		}
		return false
	}, nil
}

// inPodOrSite narrows a list of what pods hold (Connection Servers,
// pools, farms, RDS hosts) to one pod (--pod: the search starts there) or
// to a site's pods (--site). Each must exist; given both, the pod must be
// one of the site's.
func inPodOrSite(st *directory.Store, sel *directory.Selection, pod, site string) error {
	if pod != "" {
		p, err := st.Pod(pod)
		if err != nil {
			return err
		}
		sel.Under = p.DN
		if site != "" {
			s, err := st.Site(site)
			if err != nil {
				return err
			}
			if !ldapschema.EqualDN(p.SiteDN, s.DN) {
				return errorf("pass one of them, or a pod of that site (`cpactl pod list --site "+quote.Shell(s.Name)+"`)",
					"pod %s is not in site %s (it is in %s)", p.Name, s.Name, p.Site)
			}
		}
		return nil
	}
	if site != "" {
		keep, err := podsOfSite(st, site)
		if err != nil {
			return err
		}
		sel.Keep = keep
	}
	return nil
}
