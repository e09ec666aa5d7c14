package commands

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/output"
)

func newSiteCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "site",
		Short: "List, show, create, update, rename and delete sites; rank their preferred sites",
		Long: `A site is a group of pods on one LAN. Each site keeps an ordered list of
preferred sites: the other sites the broker searches, in rank order, when
the connecting site cannot serve a request with Use Preferred Sites (see
` + "`cpactl site preferred --help`" + `).

Site names are 1 to 64 printable characters, any of them allowed
(, + " \ < > ; = * ( ) and non-ASCII letters included), compared without
regard to case.`,
	}
	return cmd
}

// SiteView is a site as `site list` and `site show` print it (JSON
// contract).
type SiteView struct {
	Name           string   `json:"name"`
	Description    string   `json:"description"`
	URL            string   `json:"url"`
	PreferredSites []string `json:"preferred_sites"` // in rank order
	Pods           []string `json:"pods"`            // in name order
}

func siteView(s ldapschema.Site, pods []ldapschema.Pod) SiteView {
	v := SiteView{Name: s.Name, Description: s.Description, URL: s.URL, PreferredSites: orEmpty(s.PreferredSites),
		Pods: []string{}}
	for _, p := range pods {
		if ldapschema.EqualDN(p.SiteDN, s.DN) {
			v.Pods = append(v.Pods, p.Name)
		}
	}
	return v
}

// ranked renders a preferred-site list for people: "1. UK, 2. US".
func ranked(names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%d. %s", i+1, n)
	}
	return joinOr(parts, "-")
}

type siteListOptions struct {
	g *Globals
	listFlags
}

func newSiteListCommand(g *Globals) *cobra.Command {
	o := &siteListOptions{g: g}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List sites with their preferred sites and pods",
		Example: `  cpactl site list
  cpactl site list --name 'eu-*'
  cpactl site list -o json --from backup.ldif`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	o.listFlags.add(cmd, "sites", true)
	return cmd
}

func (o *siteListOptions) run() error {
	p, st, closeFn, sel, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	sites, err := st.SelectSites(sel)
	if err != nil {
		return err
	}
	pods, err := st.Pods()
	if err != nil {
		return err
	}
	views := make([]SiteView, 0, len(sites.Items))
	for _, s := range sites.Items {
		views = append(views, siteView(s, pods))
	}
	defer o.counted(o.g, p, len(views), sites.Total)
	return p.Print(views, func(w io.Writer) error {
		rows := make([][]string, 0, len(views))
		for _, v := range views {
			rows = append(rows, []string{v.Name, ranked(v.PreferredSites), joinOr(v.Pods, "-"), v.URL, v.Description})
		}
		return output.RowsWide(w, []string{"name", "preferred sites", "pods", "url", "description"}, []bool{3: true, 4: true}, rows)
	})
}

type siteShowOptions struct {
	g *Globals
	readFlags
	Name string
}

func newSiteShowCommand(g *Globals) *cobra.Command {
	o := &siteShowOptions{g: g}
	cmd := &cobra.Command{
		Use:     "show NAME",
		Short:   "Show one site: description, URL, preferred sites in rank order, pods",
		Example: `  cpactl site show India -o json`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return o.g.execute(o)
		},
	}
	o.readFlags.add(cmd)
	return cmd
}

func (o *siteShowOptions) run() error {
	p, st, closeFn, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	site, err := st.Site(o.Name)
	if err != nil {
		return err
	}
	pods, err := st.PodsOfSite(site.DN)
	if err != nil {
		return err
	}
	v := siteView(site, pods)
	return p.Print(v, func(w io.Writer) error {
		return output.Fields(w, [][2]string{{"name", v.Name}, {"description", v.Description}, {"url", v.URL},
			{"preferred sites", ranked(v.PreferredSites)}, {"pods", joinOr(v.Pods, "-")}})
	})
}

type siteCreateOptions struct {
	g *Globals
	writeFlags
	Name        string
	Description string
	URL         string
}

func newSiteCreateCommand(g *Globals) *cobra.Command {
	o := &siteCreateOptions{g: g}
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a site (idempotent: an identical site is left unchanged)",
		Long: `Creates a site. Creating a site that exists with the same description and
URL prints "unchanged"; with different ones it fails and points to update.
Rank its preferred sites afterwards with ` + "`cpactl site preferred`.",
		Example: `  cpactl site create India --description "Bangalore data centre" --site-url https://vdi.in.example.com
  cpactl site create 'R&D, "West" <1>+;=*()\ Zürich'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return o.g.execute(o)
		},
	}
	cmd.Flags().StringVar(&o.Description, "description", "", "what the site is (up to 1024 characters)")
	// --url is the global LDAP server flag (-H/--url), hence --site-url.
	cmd.Flags().StringVar(&o.URL, "site-url", "", "the address users of the site connect to")
	o.writeFlags.add(cmd)
	return cmd
}

func (o *siteCreateOptions) validate() error {
	if err := checkSiteURLFlag(o.g); err != nil {
		return err
	}
	if err := checkName(objkind.Site, o.Name, maxName); err != nil {
		return err
	}
	return checkDescription(objkind.Site, o.Name, o.Description)
}

func (o *siteCreateOptions) run() error {
	if err := o.validate(); err != nil {
		return err
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	want := ldapschema.Site{Name: o.Name, Description: o.Description, URL: o.URL}
	return createOrUnchanged(o.g, st, o.DryRun, creation[ldapschema.Site]{
		kind: objkind.Site, name: o.Name, where: "", dn: st.DIT.Site(o.Name), attrs: want.Attrs(),
		read:     func() (ldapschema.Site, error) { return st.Site(o.Name) },
		stored:   func(s ldapschema.Site) (string, ldapschema.Attrs) { return s.Name, s.Attrs() },
		compared: siteCompared,
	})
}

// checkSiteURLFlag catches a site's web address given to -H/--url, the
// LDAP server flag, instead of --site-url.
func checkSiteURLFlag(g *Globals) error {
	for _, u := range g.URLs {
		if l := strings.ToLower(u); strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") {
			return errorf("a site's address is --site-url; --url (-H) names the LDAP server",
				"--url %s is not an LDAP URI", u)
		}
	}
	return nil
}

// siteCompared are what a repeated site create compares, and what site
// update changes besides the name.
var siteCompared = []string{ldapschema.AttrDescription, ldapschema.AttrSiteURL}

type siteUpdateOptions struct {
	g *Globals
	writeFlags
	Name        string
	Description *string
	URL         *string
	Rename      string
}

func newSiteUpdateCommand(g *Globals) *cobra.Command {
	o := &siteUpdateOptions{g: g}
	var description, url string
	cmd := &cobra.Command{
		Use:   "update NAME",
		Short: "Change a site's description or URL, or rename it (references follow, in one transaction)",
		Long: `Changes a site's description or URL (--site-url), or renames it. A rename rewrites every
reference to the site (its pods, home-site rows, other sites' preferred-site
lists) in the same LDAP transaction as the rename itself.`,
		Example: `  cpactl site update UK --description "London and Manchester"
  cpactl site update UK --rename GB`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			if cmd.Flags().Changed("description") {
				o.Description = &description
			}
			if cmd.Flags().Changed("site-url") {
				o.URL = &url
			}
			return o.g.execute(o)
		},
	}
	cmd.Flags().StringVar(&description, "description", "", "new description (\"\" removes it)")
	cmd.Flags().StringVar(&url, "site-url", "", "new URL of the site (\"\" removes it)")
	cmd.Flags().StringVar(&o.Rename, "rename", "", "new name of the site")
	o.writeFlags.add(cmd)
	return cmd
}

func (o *siteUpdateOptions) validate() error {
	if err := checkSiteURLFlag(o.g); err != nil {
		return err
	}
	if o.Description == nil && o.URL == nil && o.Rename == "" {
		return errorf("pass --description, --site-url or --rename", "nothing to update for site %s", o.Name)
	}
	if o.Description != nil {
		if err := checkDescription(objkind.Site, o.Name, *o.Description); err != nil {
			return err
		}
	}
	if o.Rename != "" {
		return checkName(objkind.Site, o.Rename, maxName)
	}
	return nil
}

func (o *siteUpdateOptions) run() error {
	if err := o.validate(); err != nil {
		return err
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	return updateOne(o.g, st, o.DryRun, modification[ldapschema.Site]{
		kind: objkind.Site, managed: siteCompared,
		read: func() (ldapschema.Site, error) { return st.Site(o.Name) },
		apply: func(_ ldapschema.Site, next *ldapschema.Site) error {
			if o.Description != nil {
				next.Description = *o.Description
			}
			if o.URL != nil {
				next.URL = *o.URL
			}
			return nil
		},
		name:   func(s ldapschema.Site) string { return s.Name },
		dn:     func(s ldapschema.Site) string { return s.DN },
		attrs:  ldapschema.Site.Attrs,
		rename: o.Rename,
		lookup: func(n string) (string, error) {
			s, err := st.Site(n)
			return s.DN, err
		},
	})
}

func newSiteDeleteCommand(g *Globals) *cobra.Command {
	return newNamedDeleteCommand(g, namedDelete{
		kind:  objkind.Site,
		use:   "delete NAME",
		short: "Delete a site; refused while pods, preferred-site lists or home sites refer to it (see --force)",
		long: `Deletes a site. While pods, other sites' preferred-site lists or home-site
rows refer to it, the delete is refused and the referrers are listed. With
--force every reference goes in the same LDAP transaction as the site: the
site leaves the other sites' lists (the ranks close up), its home-site rows
are deleted, and so are its pods, with their Connection Servers, pools and
farms, and the records that refer to those.

On a terminal cpactl asks for confirmation; elsewhere pass --yes.`,
		example: `  cpactl site delete Lab --yes
  cpactl site delete UK --force --dry-run`,
		force: "also remove every reference to the site (pods included) in the same transaction",
		hint: func(_ string) string {
			return "move the pods with `cpactl pod update POD --site OTHER`, edit the lists and home sites, or pass --force to remove every reference in the same transaction"
		},
		lookup: func(st *directory.Store, name string) (string, string, error) {
			x, err := st.Site(name)
			if err != nil {
				return "", "", err
			}
			return x.Name, x.DN, nil
		},
	})
}
