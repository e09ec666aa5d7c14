package commands

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/output"
)

func newConnectionServerCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cs",
		Short: "List, show, create, update and delete Connection Servers and their restriction tags",
		Long: `A Connection Server is a broker in a pod (an entry below the pod). Its
restriction tags decide which global entitlements it may broker: a GE
without tags is brokered by any server, a GE with tags only by a server
that has at least one of them. Names are unique across the federation.`,
	}
	return cmd
}

// ConnectionServerView is a Connection Server as `cs list` and `cs show`
// print it (JSON contract).
type ConnectionServerView struct {
	Name        string   `json:"name"`
	Pod         string   `json:"pod"`
	Site        string   `json:"site"`
	Tags        []string `json:"tags"` // sorted
	Description string   `json:"description"`
}

func csView(cs ldapschema.ConnectionServer, pods []ldapschema.Pod) ConnectionServerView {
	v := ConnectionServerView{Name: cs.Name, Pod: cs.Pod, Tags: orEmpty(cs.Tags), Description: cs.Description}
	for _, p := range pods {
		if ldapschema.EqualDN(p.DN, ldapschema.ParentOf(cs.DN)) {
			v.Pod, v.Site = p.Name, p.Site
		}
	}
	return v
}

type csListOptions struct {
	g *Globals
	listFlags
	Pod, Site string
}

func newCSListCommand(g *Globals) *cobra.Command {
	o := &csListOptions{g: g}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List Connection Servers with their pod, site and tags",
		Example: `  cpactl cs list --pod lon-pod1
  cpactl cs list --site London -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	cmd.Flags().StringVar(&o.Pod, "pod", "", "only the Connection Servers of this pod")
	cmd.Flags().StringVar(&o.Site, "site", "", "only the Connection Servers of this site's pods")
	o.listFlags.add(cmd, "Connection Servers", true)
	return cmd
}

func (o *csListOptions) run() error {
	p, st, closeFn, sel, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	if err := inPodOrSite(st, &sel, o.Pod, o.Site); err != nil {
		return err
	}
	servers, err := st.SelectConnectionServers(sel)
	if err != nil {
		return err
	}
	pods, err := st.Pods()
	if err != nil {
		return err
	}
	views := make([]ConnectionServerView, 0, len(servers.Items))
	for _, cs := range servers.Items {
		views = append(views, csView(cs, pods))
	}
	defer o.counted(o.g, p, len(views), servers.Total)
	return p.Print(views, func(w io.Writer) error {
		rows := make([][]string, 0, len(views))
		for _, v := range views {
			rows = append(rows, []string{v.Name, v.Pod, v.Site, joinOr(v.Tags, "-"), v.Description})
		}
		return output.Rows(w, []string{"name", "pod", "site", "tags", "description"}, rows)
	})
}

type csShowOptions struct {
	g *Globals
	readFlags
	Name string
}

func newCSShowCommand(g *Globals) *cobra.Command {
	o := &csShowOptions{g: g}
	cmd := &cobra.Command{
		Use:     "show NAME",
		Short:   "Show one Connection Server",
		Example: `  cpactl cs show cs-in-1 -o yaml`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return o.g.execute(o)
		},
	}
	o.readFlags.add(cmd)
	return cmd
}

func (o *csShowOptions) run() error {
	p, st, closeFn, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	cs, err := st.ConnectionServer(o.Name)
	if err != nil {
		return err
	}
	var pods []ldapschema.Pod
	if pod, err := st.Pod(cs.Pod); err == nil {
		pods = append(pods, pod)
	}
	v := csView(cs, pods)
	return p.Print(v, func(w io.Writer) error {
		return output.Fields(w, [][2]string{{"name", v.Name}, {"pod", v.Pod}, {"site", v.Site},
			{"tags", joinOr(v.Tags, "-")}, {"description", v.Description}})
	})
}

type csCreateOptions struct {
	g *Globals
	writeFlags
	Name        string
	Pod         string
	Tags        []string
	Description string
}

func newCSCreateCommand(g *Globals) *cobra.Command {
	o := &csCreateOptions{g: g}
	cmd := &cobra.Command{
		Use:   "create NAME --pod POD",
		Short: "Create a Connection Server in a pod, with optional restriction tags (idempotent)",
		Example: `  cpactl cs create cs-in-1 --pod Bangalore-1
  cpactl cs create cs-in-ext --pod Bangalore-1 --tags external,contractors`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return o.g.execute(o)
		},
	}
	cmd.Flags().StringVar(&o.Pod, "pod", "", "the pod the server belongs to (required)")
	csvListVar(cmd.Flags(), &o.Tags, "tags", "restriction tags: a,b")
	cmd.Flags().StringVar(&o.Description, "description", "", "what the server is")
	o.writeFlags.add(cmd)
	return cmd
}

func (o *csCreateOptions) run() error {
	if err := checkName(objkind.ConnectionServer, o.Name, maxName); err != nil {
		return err
	}
	if o.Pod == "" {
		return errorf(fmt.Sprintf("cpactl cs create %s --pod POD", o.Name), "a Connection Server needs a pod: pass --pod")
	}
	o.Tags = cleanList(o.Tags)
	if err := checkTags(o.Tags); err != nil {
		return err
	}
	if err := checkDescription(objkind.ConnectionServer, o.Name, o.Description); err != nil {
		return err
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	pod, err := st.Pod(o.Pod)
	if err != nil {
		return err
	}
	want := ldapschema.ConnectionServer{Name: o.Name, Pod: pod.Name, Description: o.Description, Tags: sortedTags(o.Tags)}
	return createOrUnchanged(o.g, st, o.DryRun, creation[ldapschema.ConnectionServer]{
		kind: objkind.ConnectionServer, name: o.Name, where: " in pod " + pod.Name, dn: st.DIT.ConnectionServer(pod.Name, o.Name), attrs: want.Attrs(),
		read: func() (ldapschema.ConnectionServer, error) { return st.ConnectionServer(o.Name) },
		other: func(existing ldapschema.ConnectionServer) error {
			if !ldapschema.EqualDN(ldapschema.ParentOf(existing.DN), pod.DN) {
				return errorf("Connection Server names are unique across the federation: pick another name",
					"connection server %s exists in pod %s", existing.Name, existing.Pod)
			}
			return nil
		},
		stored:   func(cs ldapschema.ConnectionServer) (string, ldapschema.Attrs) { return cs.Name, cs.Attrs() },
		compared: ldapschema.ConnectionServerManaged,
	})
}

type csUpdateOptions struct {
	g *Globals
	writeFlags
	Name        string
	Tags        []string
	NoTags      bool
	Description *string
	tagsGiven   bool
}

func newCSUpdateCommand(g *Globals) *cobra.Command {
	o := &csUpdateOptions{g: g}
	var description string
	cmd := &cobra.Command{
		Use:   "update NAME",
		Short: "Replace a Connection Server's tags (--tags a,b or --no-tags) or description",
		Example: `  cpactl cs update cs-in-ext --tags external
  cpactl cs update cs-in-ext --no-tags`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			o.tagsGiven = cmd.Flags().Changed("tags")
			if cmd.Flags().Changed("description") {
				o.Description = &description
			}
			return o.g.execute(o)
		},
	}
	csvListVar(cmd.Flags(), &o.Tags, "tags", "the new restriction tags: a,b (replaces the old ones)")
	cmd.Flags().BoolVar(&o.NoTags, "no-tags", false, "remove every tag")
	cmd.Flags().StringVar(&description, "description", "", "new description (\"\" removes it)")
	o.writeFlags.add(cmd)
	return cmd
}

func (o *csUpdateOptions) run() error {
	if o.tagsGiven && o.NoTags {
		return errorf("pass one of them", "--tags and --no-tags exclude each other")
	}
	if !o.tagsGiven && !o.NoTags && o.Description == nil {
		return errorf("pass --tags, --no-tags or --description", "nothing to update for connection server %s", o.Name)
	}
	o.Tags = cleanList(o.Tags)
	if o.tagsGiven && len(o.Tags) == 0 {
		return errorf("to remove every tag, use --no-tags", "--tags names no tag")
	}
	if err := checkTags(o.Tags); err != nil {
		return err
	}
	if o.Description != nil {
		if err := checkDescription(objkind.ConnectionServer, o.Name, *o.Description); err != nil {
			return err
		}
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	return updateOne(o.g, st, o.DryRun, modification[ldapschema.ConnectionServer]{
		kind: objkind.ConnectionServer, managed: ldapschema.ConnectionServerManaged,
		read: func() (ldapschema.ConnectionServer, error) { return st.ConnectionServer(o.Name) },
		apply: func(_ ldapschema.ConnectionServer, next *ldapschema.ConnectionServer) error {
			switch {
			case o.NoTags:
				next.Tags = nil
			case o.tagsGiven:
				next.Tags = sortedTags(o.Tags)
			}
			if o.Description != nil {
				next.Description = *o.Description
			}
			return nil
		},
		name:  func(cs ldapschema.ConnectionServer) string { return cs.Name },
		dn:    func(cs ldapschema.ConnectionServer) string { return cs.DN },
		attrs: ldapschema.ConnectionServer.Attrs,
	})
}

func newCSDeleteCommand(g *Globals) *cobra.Command {
	return newNamedDeleteCommand(g, namedDelete{
		kind:  objkind.ConnectionServer,
		use:   "delete NAME",
		short: "Delete a Connection Server",
		long: `Deletes a Connection Server. On a terminal cpactl asks for confirmation;
elsewhere pass --yes.`,
		example: `  cpactl cs delete cs-in-old --yes`,
		force:   "also remove every reference to the server in the same transaction",
		hint:    func(_ string) string { return "pass --force to remove the references in the same transaction" },
		lookup: func(st *directory.Store, name string) (string, string, error) {
			x, err := st.ConnectionServer(name)
			if err != nil {
				return "", "", err
			}
			return x.Name, x.DN, nil
		},
	})
}
