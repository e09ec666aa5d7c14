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

func newComputerCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "computer",
		Short: "List, show, create and delete client computers",
		Long: `Client computers (device entries under ou=Computers) are members of groups;
an entitlement with client restrictions admits only computers in a group
that is itself a member of the entitlement.`,
	}
	return cmd
}

// ComputerView is a client computer as `computer list` and `computer show`
// print it (JSON contract).
type ComputerView struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Groups      []string `json:"groups"` // immediate groups, in name order
}

type computerListOptions struct {
	g *Globals
	listFlags
	Group string
}

func newComputerListCommand(g *Globals) *cobra.Command {
	o := &computerListOptions{g: g}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List client computers and their immediate groups",
		Example: `  cpactl computer list --group Kiosks
  cpactl computer list --name 'pc-0*' -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	cmd.Flags().StringVar(&o.Group, "group", "", "only the members of this group, through nested groups too")
	o.listFlags.add(cmd, "computers", true)
	return cmd
}

func (o *computerListOptions) run() error {
	p, st, closeFn, sel, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	groups, err := st.Groups()
	if err != nil {
		return err
	}
	if o.Group != "" {
		if sel.Keep, err = reachedBy(st, o.Group, groups); err != nil {
			return err
		}
	}
	computers, err := st.SelectComputers(sel)
	if err != nil {
		return err
	}
	byMember := groupIndex(groups)
	views := make([]ComputerView, 0, len(computers.Items))
	for _, c := range computers.Items {
		views = append(views, ComputerView{Name: c.Name, Description: c.Description, Groups: byMember.of(c.DN)})
	}
	defer o.counted(o.g, p, len(views), computers.Total)
	return p.Print(views, func(w io.Writer) error {
		rows := make([][]string, 0, len(views))
		for _, v := range views {
			rows = append(rows, []string{v.Name, joinOr(v.Groups, "-"), v.Description})
		}
		return output.Rows(w, []string{"name", "groups", "description"}, rows)
	})
}

type computerShowOptions struct {
	g *Globals
	readFlags
	Name string
}

func newComputerShowCommand(g *Globals) *cobra.Command {
	o := &computerShowOptions{g: g}
	cmd := &cobra.Command{
		Use:     "show NAME",
		Short:   "Show one client computer and its immediate groups",
		Example: `  cpactl computer show KIOSK-01`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return o.g.execute(o)
		},
	}
	o.readFlags.add(cmd)
	return cmd
}

func (o *computerShowOptions) run() error {
	p, st, closeFn, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	c, err := st.Computer(o.Name)
	if err != nil {
		return err
	}
	groups, err := st.GroupsWithMember(c.DN)
	if err != nil {
		return err
	}
	v := ComputerView{Name: c.Name, Description: c.Description, Groups: groupsOf(c.DN, groups)}
	return p.Print(v, func(w io.Writer) error {
		return output.Fields(w, [][2]string{{"name", v.Name}, {"description", v.Description}, {"groups", joinOr(v.Groups, "-")}})
	})
}

type computerCreateOptions struct {
	g *Globals
	writeFlags
	Name        string
	Description string
}

func newComputerCreateCommand(g *Globals) *cobra.Command {
	o := &computerCreateOptions{g: g}
	cmd := &cobra.Command{
		Use:     "create NAME",
		Short:   "Create a client computer (idempotent)",
		Example: `  cpactl computer create KIOSK-01 --description "lobby kiosk"`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return o.g.execute(o)
		},
	}
	cmd.Flags().StringVar(&o.Description, "description", "", "what the computer is")
	o.writeFlags.add(cmd)
	return cmd
}

func (o *computerCreateOptions) run() error {
	if err := checkName(objkind.Computer, o.Name, maxName); err != nil {
		return err
	}
	if err := checkDescription(objkind.Computer, o.Name, o.Description); err != nil {
		return err
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	return createOrUnchanged(o.g, st, o.DryRun, creation[ldapschema.Computer]{
		kind: objkind.Computer, name: o.Name, where: "", dn: st.DIT.Computer(o.Name), attrs: ldapschema.Computer{Name: o.Name, Description: o.Description}.Attrs(),
		read:     func() (ldapschema.Computer, error) { return st.Computer(o.Name) },
		stored:   func(c ldapschema.Computer) (string, ldapschema.Attrs) { return c.Name, c.Attrs() },
		compared: []string{ldapschema.AttrDescription},
		fix:      "delete and create it again, or keep its description",
	})
}

func newComputerDeleteCommand(g *Globals) *cobra.Command {
	return newNamedDeleteCommand(g, namedDelete{
		kind:  objkind.Computer,
		use:   "delete NAME",
		short: "Delete a client computer; refused while groups or sessions refer to it (see --force)",
		long: `Deletes a client computer. While groups list it or sessions name it, the
delete is refused and they are listed; with --force it leaves the groups
and the sessions lose their client, in the same LDAP transaction.

On a terminal cpactl asks for confirmation; elsewhere pass --yes.`,
		example: `  cpactl computer delete KIOSK-01 --force --yes`,
		force:   "also remove the computer from its groups and from session records",
		hint: func(stored string) string {
			return fmt.Sprintf("remove it from its groups first (cpactl group remove-member GROUP computer:%s), or pass --force", stored)
		},
		lookup: func(st *directory.Store, name string) (string, string, error) {
			x, err := st.Computer(name)
			if err != nil {
				return "", "", err
			}
			return x.Name, x.DN, nil
		},
	})
}
