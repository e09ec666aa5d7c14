package commands

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/output"
)

func newHomeSiteCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "homesite",
		Short: "Set, unset, list and resolve home sites of users and groups",
		Long: `A home site maps a user or a group to a site, globally or, with
--entitlement, as that global entitlement's override. There is one row per
(user or group, entitlement or none); setting it again replaces it.

When a global entitlement has Use Home Site, the broker starts its search at
the user's home site, resolved in this order (the first that applies wins):

  USER_OVERRIDE   the user's row for the entitlement
  GROUP_OVERRIDE  a row of one of the user's immediate groups for it
  USER_DEFAULT    the user's global row
  GROUP_DEFAULT   a global row of one of the user's immediate groups

Two groups at the same level naming different sites are a conflict: the
group whose name sorts first (case-insensitive) wins. ` + "`cpactl homesite resolve`" + `
shows the winner, its source and why every other row lost.`,
	}
	return cmd
}

// principalFlags name the user or group of a home-site row.
type principalFlags struct {
	User        string
	Group       string
	Entitlement string
}

func (p *principalFlags) add(cmd *cobra.Command, entitlementUsage string) {
	cmd.Flags().StringVar(&p.User, "user", "", `the user (uid, DOMAIN\uid or uid@domain)`)
	cmd.Flags().StringVar(&p.Group, "group", "", "the group")
	cmd.Flags().StringVar(&p.Entitlement, "entitlement", "", entitlementUsage)
}

func (p *principalFlags) validate(required bool) error {
	switch {
	case p.User != "" && p.Group != "":
		return errorf("a home-site row belongs to one user or one group", "--user and --group exclude each other")
	case required && p.User == "" && p.Group == "":
		return errorf("pass --user USER or --group GROUP", "name the user or the group")
	}
	return nil
}

// principal reads the user or group the flags name.
func (p *principalFlags) principal(st *directory.Store) (directory.Member, error) {
	if p.User != "" {
		u, err := st.User(p.User)
		if err != nil {
			return directory.Member{}, userError(err)
		}
		return directory.Member{Kind: objkind.User, Name: u.UID, DN: u.DN}, nil
	}
	g, err := st.Group(p.Group)
	if err != nil {
		return directory.Member{}, err
	}
	return directory.Member{Kind: objkind.Group, Name: g.Name, DN: g.DN}, nil
}

// rowWords names a row for messages: "user alice (global)", "group Sales
// for entitlement Desktops".
func rowWords(m directory.Member, entitlement string) string {
	if entitlement == "" {
		return m.String() + " (global)"
	}
	return m.String() + " for entitlement " + entitlement
}

type homeSiteSetOptions struct {
	g *Globals
	writeFlags
	principalFlags
	Site string
}

func newHomeSiteSetCommand(g *Globals) *cobra.Command {
	o := &homeSiteSetOptions{g: g}
	cmd := &cobra.Command{
		Use:   "set (--user USER | --group GROUP) --site SITE [--entitlement GE]",
		Short: "Set (or replace) the home site of a user or group, globally or for one entitlement",
		Long: `Sets the home site of a user or a group: globally, or with --entitlement as
that global entitlement's override. A row for the same user or group and
entitlement is replaced. An override for a user or group that is not
entitled to the entitlement is stored with a warning (it counts like any
other row).`,
		Example: `  cpactl homesite set --user alice --site UK
  cpactl homesite set --group Engineering --site US --entitlement Desktops`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	o.principalFlags.add(cmd, "the global entitlement this row overrides (default: the global home site)")
	cmd.Flags().StringVar(&o.Site, "site", "", "the home site (required)")
	o.writeFlags.add(cmd)
	return cmd
}

func (o *homeSiteSetOptions) run() error {
	if err := o.validate(true); err != nil {
		return err
	}
	if o.Site == "" {
		return errorf("pass --site SITE", "a home site needs a site")
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	who, err := o.principal(st)
	if err != nil {
		return err
	}
	site, err := st.Site(o.Site)
	if err != nil {
		return err
	}
	var geDN, geName string
	if o.Entitlement != "" {
		ge, err := st.Entitlement(o.Entitlement)
		if err != nil {
			return err
		}
		geDN, geName = ge.DN, ge.Name
		entitled, err := st.Entitled(who.DN, ge)
		if err != nil {
			return err
		}
		if !entitled {
			o.g.warn("%s is not entitled to %s: the override is stored and counts, but only matters once it is", who, ge.Name)
		}
	}
	dn := st.DIT.HomeSite(who.DN, geDN)
	row := ldapschema.HomeSite{DN: dn, SiteDN: site.DN, EntitlementDN: geDN}
	if who.Kind == objkind.User {
		row.UserDN = who.DN
	} else {
		row.GroupDN = who.DN
	}
	what := rowWords(who, geName)
	e, err := st.Entry(dn)
	if err != nil {
		return err
	}
	plan := &directory.Plan{}
	if e != nil {
		old, err := ldapschema.HomeSiteFromEntry(e)
		if err != nil {
			return err
		}
		if ldapschema.EqualDN(old.SiteDN, site.DN) {
			o.g.report("home site of %s: unchanged (%s)", what, site.Name)
			return nil
		}
		changes := row.Attrs().Changes(ldapschema.AttrsOf(e), ldapschema.HomeSiteManaged...)
		plan.Add(directory.ModifyWrite("update", fmt.Sprintf("home site of %s: %s -> %s", what,
			ldapschema.NameOf(old.SiteDN), site.Name), dn, changes))
	} else {
		plan.Add(directory.AddWrite("set", fmt.Sprintf("home site of %s to %s", what, site.Name), dn, row.Attrs()))
	}
	return applyPlan(o.g, st, plan, o.DryRun, "home site of "+what)
}

type homeSiteUnsetOptions struct {
	g *Globals
	writeFlags
	principalFlags
}

func newHomeSiteUnsetCommand(g *Globals) *cobra.Command {
	o := &homeSiteUnsetOptions{g: g}
	cmd := &cobra.Command{
		Use:   "unset (--user USER | --group GROUP) [--entitlement GE]",
		Short: "Remove the home site of a user or group (globally, or one entitlement's override)",
		Example: `  cpactl homesite unset --user alice
  cpactl homesite unset --group Engineering --entitlement Desktops`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	o.principalFlags.add(cmd, "remove this entitlement's override (default: the global home site)")
	o.writeFlags.add(cmd)
	return cmd
}

func (o *homeSiteUnsetOptions) run() error {
	if err := o.validate(true); err != nil {
		return err
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	who, err := o.principal(st)
	if err != nil {
		return err
	}
	var geDN, geName string
	if o.Entitlement != "" {
		ge, err := st.Entitlement(o.Entitlement)
		var nf *ldapclient.NotFoundError
		switch {
		case err == nil:
			geDN, geName = ge.DN, ge.Name
		case errors.As(err, &nf):
			// A row may outlive its entitlement: find it by the name.
			geDN, geName = st.DIT.Entitlement(o.Entitlement), o.Entitlement
			if e, rerr := st.Entry(st.DIT.HomeSite(who.DN, geDN)); rerr != nil || e == nil {
				return err
			}
		default:
			return err
		}
	}
	dn := st.DIT.HomeSite(who.DN, geDN)
	what := rowWords(who, geName)
	e, err := st.Entry(dn)
	if err != nil {
		return err
	}
	plan := &directory.Plan{}
	if e != nil {
		plan.Add(directory.DeleteWrite("unset", fmt.Sprintf("home site of %s (was %s)", what,
			ldapschema.NameOf(e.GetEqualFoldAttributeValue(ldapschema.AttrSiteDN))), dn))
	}
	if plan.Empty() {
		o.g.report("home site of %s: not set, unchanged", what)
		return nil
	}
	return applyPlan(o.g, st, plan, o.DryRun, "home site of "+what)
}

// HomeSiteView is one home-site row as `homesite list` prints it (JSON
// contract).
type HomeSiteView struct {
	Kind string `json:"kind"` // user or group
	Name string `json:"name"`
	// Entitlement is the GE the row overrides; null for a global home site.
	Entitlement *string `json:"entitlement"`
	Site        string  `json:"site"`
}

type homeSiteListOptions struct {
	g *Globals
	listFlags
	principalFlags
	Global bool
	Site   string
}

func newHomeSiteListCommand(g *Globals) *cobra.Command {
	o := &homeSiteListOptions{g: g}
	cmd := &cobra.Command{
		Use:   "list [--user USER | --group GROUP] [--entitlement GE | --global] [--site SITE]",
		Short: "List home-site rows, optionally of one user or group, one entitlement, one site, or global ones only",
		Long: `Lists home-site rows: users first, then groups, by name, global rows
before overrides. --user and --group list that user's or group's own rows
only (` + "`cpactl homesite resolve`" + ` also considers the user's groups); --site
the rows that name that site.`,
		Example: `  cpactl homesite list
  cpactl homesite list --site UK --global
  cpactl homesite list --entitlement Desktops -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	o.principalFlags.add(cmd, "only this entitlement's overrides")
	cmd.Flags().BoolVar(&o.Global, "global", false, "only global home sites")
	cmd.Flags().StringVar(&o.Site, "site", "", "only the rows whose home site is this site")
	o.listFlags.add(cmd, "home-site rows", false)
	return cmd
}

func (o *homeSiteListOptions) run() error {
	if err := o.validate(false); err != nil {
		return err
	}
	if o.Global && o.Entitlement != "" {
		return errorf("pass one of them", "--global and --entitlement exclude each other")
	}
	p, st, closeFn, _, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	var filters []string
	if o.User != "" || o.Group != "" {
		who, err := o.principal(st)
		if err != nil {
			return err
		}
		attr := ldapschema.AttrUserDN
		if who.Kind == objkind.Group {
			attr = ldapschema.AttrGroupDN
		}
		filters = append(filters, ldapclient.Filter(attr, who.DN))
	}
	if o.Entitlement != "" {
		ge, err := st.Entitlement(o.Entitlement)
		if err != nil {
			return err
		}
		filters = append(filters, ldapclient.Filter(ldapschema.AttrEntitlementDN, ge.DN))
	}
	if o.Global {
		filters = append(filters, "(!("+ldapschema.AttrEntitlementDN+"=*))")
	}
	if o.Site != "" {
		site, err := st.Site(o.Site)
		if err != nil {
			return err
		}
		filters = append(filters, ldapclient.Filter(ldapschema.AttrSiteDN, site.DN))
	}
	filter := ""
	if len(filters) > 0 {
		filter = ldapclient.And(filters...)
	}
	rows, err := st.HomeSites(filter)
	if err != nil {
		return err
	}
	views := make([]HomeSiteView, 0, len(rows))
	for _, r := range rows {
		v := HomeSiteView{Kind: objkind.User, Name: ldapschema.NameOf(r.UserDN), Site: ldapschema.NameOf(r.SiteDN)}
		if r.UserDN == "" {
			v.Kind, v.Name = objkind.Group, ldapschema.NameOf(r.GroupDN)
		}
		if r.EntitlementDN != "" {
			ge := ldapschema.NameOf(r.EntitlementDN)
			v.Entitlement = &ge
		}
		views = append(views, v)
	}
	sortHomeSiteViews(views)
	views, total := cut(views, o.Limit)
	defer o.counted(o.g, p, len(views), total)
	return p.Print(views, func(w io.Writer) error {
		table := make([][]string, 0, len(views))
		for _, v := range views {
			table = append(table, []string{v.Kind, v.Name, entitlementWord(v.Entitlement), v.Site})
		}
		return output.Rows(w, []string{"kind", "name", "entitlement", "site"}, table)
	})
}

func entitlementWord(ge *string) string {
	if ge == nil {
		return "(global)"
	}
	return *ge
}

func sortHomeSiteViews(vs []HomeSiteView) {
	key := func(v HomeSiteView) []string {
		ge := ""
		if v.Entitlement != nil {
			ge = "1" + strings.ToLower(*v.Entitlement)
		}
		kind := "1"
		if v.Kind == objkind.User {
			kind = "0"
		}
		return []string{kind, strings.ToLower(v.Name), ge, strings.ToLower(v.Site), v.Name}
	}
	sort.SliceStable(vs, func(i, j int) bool {
		a, b := key(vs[i]), key(vs[j])
		for k := range a {
			if a[k] != b[k] {
				return a[k] < b[k]
			}
		}
		return false
	})
}

type homeSiteResolveOptions struct {
	g *Globals
	readFlags
	User        string
	Entitlement string
}

func newHomeSiteResolveCommand(g *Globals) *cobra.Command {
	o := &homeSiteResolveOptions{g: g}
	cmd := &cobra.Command{
		Use:   "resolve --user USER [--entitlement GE]",
		Short: "Show a user's home site (for one entitlement or globally), its source, and why the other rows lost",
		Long: `Resolves a user's home site as the broker does when a global entitlement has
Use Home Site: the user's override for the entitlement, a group's override,
the user's global home site, a group's global home site (immediate groups
only). Prints the site, its source (USER_OVERRIDE, GROUP_OVERRIDE,
USER_DEFAULT, GROUP_DEFAULT, or NONE), the user's groups, conflicts between
groups, and every row considered with why it lost. Without --entitlement
only global rows count.`,
		Example: `  cpactl homesite resolve --user alice --entitlement Desktops
  cpactl homesite resolve --user 'CORP\alice' -o json --from backup.ldif`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	cmd.Flags().StringVar(&o.User, "user", "", `the user (uid, DOMAIN\uid or uid@domain; required)`)
	cmd.Flags().StringVar(&o.Entitlement, "entitlement", "", "the global entitlement (default: global home site only)")
	o.readFlags.add(cmd)
	return cmd
}

func (o *homeSiteResolveOptions) run() error {
	if o.User == "" {
		return errorf("pass --user USER", "name the user whose home site to resolve")
	}
	p, st, closeFn, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	u, err := st.User(o.User)
	if err != nil {
		return userError(err)
	}
	geName := ""
	if o.Entitlement != "" {
		ge, err := st.Entitlement(o.Entitlement)
		if err != nil {
			return err
		}
		geName = ge.Name
	}
	f, err := st.HomeSiteFederation(u)
	if err != nil {
		return err
	}
	res := broker.ResolveHomeSite(f, u.UID, geName)
	return p.Print(res, func(w io.Writer) error { return homeSiteResolutionTable(w, res) })
}

func homeSiteResolutionTable(w io.Writer, res broker.HomeSiteResolution) error {
	site := "none"
	if res.Site != nil {
		site = *res.Site
	}
	ge := "(global home site only)"
	if res.Entitlement != nil {
		ge = *res.Entitlement
	}
	fields := [][2]string{{"user", res.User}, {"entitlement", ge}, {"home site", site},
		{"source", string(res.Source)}, {"groups", joinOr(res.Groups, "-")}}
	for _, c := range res.Conflicts {
		parts := make([]string, len(c.Groups))
		for i, gs := range c.Groups {
			parts[i] = fmt.Sprintf("%s (%s)", gs.Group, gs.Site)
		}
		decisive := "outranked, changes nothing"
		if c.Decisive {
			decisive = "decisive"
		}
		fields = append(fields, [2]string{"conflict", fmt.Sprintf("%s: %s; %s wins, site %s (%s)",
			c.Level, strings.Join(parts, " vs "), c.WinningGroup, c.Site, decisive)})
	}
	if err := output.Fields(w, fields); err != nil {
		return err
	}
	if len(res.Rows) == 0 {
		_, err := fmt.Fprintln(w, "\nno home-site row applies")
		return err
	}
	rows := make([][]string, 0, len(res.Rows))
	for _, r := range res.Rows {
		result := "won"
		if !r.Won {
			result = "lost: " + r.LostBecause
		}
		rows = append(rows, []string{string(r.Level), string(r.Kind), r.Name, r.Site, result})
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	return output.Rows(w, []string{"level", "kind", "name", "site", "result"}, rows)
}
