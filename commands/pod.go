package commands

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/output"
)

func newPodCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pod",
		Short: "List, show, create, update (move, take offline, rename) and delete pods",
		Long: `A pod is one Horizon pod; it belongs to exactly one site. Its status (ONLINE or
OFFLINE) is what-if input for resolve: offline pods are never searched.
Pod names are unique across the federation. A pod's Connection Servers,
pools and farms are entries below it and move with it on a rename.`,
	}
	return cmd
}

// PodView is a pod as `pod list` and `pod show` print it (JSON contract).
type PodView struct {
	Name              string   `json:"name"`
	Site              string   `json:"site"`
	Status            string   `json:"status"` // ONLINE or OFFLINE
	Description       string   `json:"description"`
	ConnectionServers []string `json:"connection_servers"` // in name order
}

func podView(p ldapschema.Pod, servers []ldapschema.ConnectionServer) PodView {
	v := PodView{Name: p.Name, Site: p.Site, Status: podStatus(p.Online), Description: p.Description,
		ConnectionServers: []string{}}
	for _, cs := range servers {
		if ldapschema.EqualDN(ldapschema.ParentOf(cs.DN), p.DN) {
			v.ConnectionServers = append(v.ConnectionServers, cs.Name)
		}
	}
	return v
}

func podStatus(online bool) string {
	if online {
		return ldapschema.PodOnline
	}
	return ldapschema.PodOffline
}

// parseStatus reads --status online|offline.
func parseStatus(s string) (bool, error) {
	if v := strings.ToUpper(strings.TrimSpace(s)); slices.Contains(podStatuses, v) {
		return v == ldapschema.PodOnline, nil
	}
	return false, errorf("use --status online or --status offline", "unknown pod status %q", s)
}

type podListOptions struct {
	g *Globals
	listFlags
	Site string
}

func newPodListCommand(g *Globals) *cobra.Command {
	o := &podListOptions{g: g}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List pods with their site, status and Connection Servers",
		Example: `  cpactl pod list --site London
  cpactl pod list --name 'lon-*' -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	cmd.Flags().StringVar(&o.Site, "site", "", "only the pods of this site")
	o.listFlags.add(cmd, "pods", true)
	return cmd
}

func (o *podListOptions) run() error {
	p, st, closeFn, sel, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	if o.Site != "" {
		site, err := st.Site(o.Site)
		if err != nil {
			return err
		}
		withFilter(&sel, ldapclient.Filter(ldapschema.AttrSiteDN, site.DN))
	}
	pods, err := st.SelectPods(sel)
	if err != nil {
		return err
	}
	servers, err := st.ConnectionServers()
	if err != nil {
		return err
	}
	views := make([]PodView, 0, len(pods.Items))
	for _, pod := range pods.Items {
		views = append(views, podView(pod, servers))
	}
	defer o.counted(o.g, p, len(views), pods.Total)
	return p.Print(views, func(w io.Writer) error {
		rows := make([][]string, 0, len(views))
		for _, v := range views {
			rows = append(rows, []string{v.Name, v.Site, v.Status, joinOr(v.ConnectionServers, "-"), v.Description})
		}
		return output.Rows(w, []string{"name", "site", "status", "connection servers", "description"}, rows)
	})
}

type podShowOptions struct {
	g *Globals
	readFlags
	Name string
}

func newPodShowCommand(g *Globals) *cobra.Command {
	o := &podShowOptions{g: g}
	cmd := &cobra.Command{
		Use:     "show NAME",
		Short:   "Show one pod",
		Example: `  cpactl pod show Bangalore-1`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return o.g.execute(o)
		},
	}
	o.readFlags.add(cmd)
	return cmd
}

func (o *podShowOptions) run() error {
	p, st, closeFn, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	pod, err := st.Pod(o.Name)
	if err != nil {
		return err
	}
	servers, err := st.ConnectionServersOfPod(pod.DN)
	if err != nil {
		return err
	}
	v := podView(pod, servers)
	return p.Print(v, func(w io.Writer) error {
		return output.Fields(w, [][2]string{{"name", v.Name}, {"site", v.Site}, {"status", v.Status},
			{"description", v.Description}, {"connection servers", joinOr(v.ConnectionServers, "-")}})
	})
}

type podCreateOptions struct {
	g *Globals
	writeFlags
	Name        string
	Site        string
	Description string
	Status      string
	// statusGiven: --status was given (then a repeated create compares it).
	statusGiven bool
}

func newPodCreateCommand(g *Globals) *cobra.Command {
	o := &podCreateOptions{g: g}
	cmd := &cobra.Command{
		Use:   "create NAME --site SITE",
		Short: "Create a pod in a site (idempotent)",
		Long: `Creates a pod in a site, ONLINE unless --status offline. Creating a pod that
exists in the same site with the same description prints "unchanged" (its
status is compared only when --status is given).`,
		Example: `  cpactl pod create Bangalore-1 --site India --description "first pod"`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			o.statusGiven = cmd.Flags().Changed("status")
			return o.g.execute(o)
		},
	}
	cmd.Flags().StringVar(&o.Site, "site", "", "the site the pod belongs to (required)")
	cmd.Flags().StringVar(&o.Description, "description", "", "what the pod is")
	cmd.Flags().StringVar(&o.Status, "status", "online", "online or offline")
	o.writeFlags.add(cmd)
	return cmd
}

func (o *podCreateOptions) run() error {
	if err := checkName(objkind.Pod, o.Name, maxName); err != nil {
		return err
	}
	if o.Site == "" {
		return errorf(fmt.Sprintf("cpactl pod create %s --site SITE", o.Name), "a pod needs a site: pass --site")
	}
	if err := checkDescription(objkind.Pod, o.Name, o.Description); err != nil {
		return err
	}
	online, err := parseStatus(o.Status)
	if err != nil {
		return err
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	site, err := st.Site(o.Site)
	if err != nil {
		return err
	}
	// A repeated create compares the site and description, and the status
	// only when --status was given.
	compared := []string{ldapschema.AttrSiteDN, ldapschema.AttrDescription}
	if o.statusGiven {
		compared = append(compared, ldapschema.AttrPodStatus)
	}
	return createOrUnchanged(o.g, st, o.DryRun, creation[ldapschema.Pod]{
		kind: objkind.Pod, name: o.Name, where: " in site " + site.Name, dn: st.DIT.Pod(o.Name), attrs: ldapschema.Pod{Name: o.Name, SiteDN: site.DN, Description: o.Description, Online: online}.Attrs(),
		read:     func() (ldapschema.Pod, error) { return st.Pod(o.Name) },
		stored:   func(p ldapschema.Pod) (string, ldapschema.Attrs) { return p.Name, p.Attrs() },
		compared: compared,
	})
}

type podUpdateOptions struct {
	g *Globals
	writeFlags
	Name        string
	Site        string
	Status      string
	Description *string
	Rename      string
}

func newPodUpdateCommand(g *Globals) *cobra.Command {
	o := &podUpdateOptions{g: g}
	var description string
	cmd := &cobra.Command{
		Use:   "update NAME",
		Short: "Move a pod to another site, change its status or description, or rename it",
		Long: `Changes a pod. --site moves it to another site; --status online|offline is
what-if input for resolve; --rename renames it: its Connection Servers,
pools and farms move with it and every reference to them (sessions, pod
assignments, entitlements' pools) is rewritten, in one LDAP transaction.`,
		Example: `  cpactl pod update London-2 --status offline
  cpactl pod update London-2 --site UK --rename Manchester-1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			if cmd.Flags().Changed("description") {
				o.Description = &description
			}
			return o.g.execute(o)
		},
	}
	cmd.Flags().StringVar(&o.Site, "site", "", "move the pod to this site")
	cmd.Flags().StringVar(&o.Status, "status", "", "online or offline")
	cmd.Flags().StringVar(&description, "description", "", "new description (\"\" removes it)")
	cmd.Flags().StringVar(&o.Rename, "rename", "", "new name of the pod")
	o.writeFlags.add(cmd)
	return cmd
}

func (o *podUpdateOptions) run() error {
	if o.Site == "" && o.Status == "" && o.Description == nil && o.Rename == "" {
		return errorf("pass --site, --status, --description or --rename", "nothing to update for pod %s", o.Name)
	}
	var online bool
	if o.Status != "" {
		var err error
		if online, err = parseStatus(o.Status); err != nil {
			return err
		}
	}
	if o.Description != nil {
		if err := checkDescription(objkind.Pod, o.Name, *o.Description); err != nil {
			return err
		}
	}
	if o.Rename != "" {
		if err := checkName(objkind.Pod, o.Rename, maxName); err != nil {
			return err
		}
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	return updateOne(o.g, st, o.DryRun, modification[ldapschema.Pod]{
		kind: objkind.Pod, managed: ldapschema.PodManaged,
		read: func() (ldapschema.Pod, error) { return st.Pod(o.Name) },
		apply: func(_ ldapschema.Pod, next *ldapschema.Pod) error {
			if o.Site != "" {
				site, err := st.Site(o.Site)
				if err != nil {
					return err
				}
				next.SiteDN, next.Site = site.DN, site.Name
			}
			if o.Status != "" {
				next.Online = online
			}
			if o.Description != nil {
				next.Description = *o.Description
			}
			return nil
		},
		name:   func(p ldapschema.Pod) string { return p.Name },
		dn:     func(p ldapschema.Pod) string { return p.DN },
		attrs:  ldapschema.Pod.Attrs,
		rename: o.Rename,
		lookup: func(n string) (string, error) {
			p, err := st.Pod(n)
			return p.DN, err
		},
	})
}

func newPodDeleteCommand(g *Globals) *cobra.Command {
	return newNamedDeleteCommand(g, namedDelete{
		kind:  objkind.Pod,
		use:   "delete NAME",
		short: "Delete a pod; refused while it has Connection Servers, pools or farms, or records refer to it (see --force)",
		long: `Deletes a pod. While Connection Servers, pools or farms lie below it, or
sessions, pod assignments or entitlements refer to it or to them, the delete
is refused and they are listed. With --force they are deleted (entitlements
only lose the pools) in the same LDAP transaction as the pod.

On a terminal cpactl asks for confirmation; elsewhere pass --yes.`,
		example: `  cpactl pod delete Lab-1 --yes
  cpactl pod delete London-2 --force --dry-run`,
		force: "also delete the pod's Connection Servers, pools and farms and every reference to them",
		hint: func(_ string) string {
			return "delete its Connection Servers, pools and farms first, or pass --force to delete them in the same transaction"
		},
		lookup: func(st *directory.Store, name string) (string, string, error) {
			x, err := st.Pod(name)
			if err != nil {
				return "", "", err
			}
			return x.Name, x.DN, nil
		},
	})
}
