package commands

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/membership"
	"github.com/cpactl/cpactl/output"
)

// UserEntitlementView is one entitlement of a user as `user entitlements`
// prints it (JSON contract).
type UserEntitlementView struct {
	Entitlement string `json:"entitlement"`
	Type        string `json:"type"` // DESKTOP or APPLICATION
	Enabled     bool   `json:"enabled"`
	// Direct is true when the user is a member of the entitlement; else Via
	// lists the groups from the user's immediate group to the group that is
	// a member (the shortest chain; ties by group name).
	Direct bool     `json:"direct"`
	Via    []string `json:"via"`
}

type userEntitlementsOptions struct {
	g *Globals
	readFlags
	User string
}

// newUserEntitlementsCommand builds `user entitlements`.
func newUserEntitlementsCommand(g *Globals) *cobra.Command {
	o := &userEntitlementsOptions{g: g}
	cmd := &cobra.Command{
		Use:   "entitlements USER",
		Short: "List the global entitlements a user has, directly or through nested groups, with the path",
		Long: `Lists every global entitlement the user is a member of, directly or through
groups (nested to any depth; cycles are tolerated). For an entitlement
reached through groups, VIA shows the chain from the user's immediate group
to the group the entitlement lists (the shortest; ties by group name).
Membership alone: tags, client restrictions and Require Home Site are
checked by ` + "`cpactl resolve`" + `.`,
		Example: `  cpactl user entitlements alice
  cpactl user entitlements 'EXAMPLE\alice' -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.User = args[0]
			return o.g.execute(o)
		},
	}
	o.readFlags.add(cmd)
	return cmd
}

func (o *userEntitlementsOptions) run() error {
	p, st, closeFn, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	user, err := st.User(o.User)
	if err != nil {
		return err
	}
	groups, err := st.GroupsAbove(user.DN)
	if err != nil {
		return err
	}
	dns := []string{user.DN}
	for _, gr := range groups {
		dns = append(dns, gr.DN)
	}
	ges, err := st.EntitlementsWithMember(dns...)
	if err != nil {
		return err
	}
	graph := membership.New(groups)
	views := make([]UserEntitlementView, 0, len(ges))
	for _, ge := range ges {
		via, ok := graph.MemberOf(user.DN, ge.Members)
		if !ok {
			continue
		}
		views = append(views, UserEntitlementView{Entitlement: ge.Name, Type: ge.Type, Enabled: ge.Enabled,
			Direct: via.Direct, Via: orEmpty(membership.Names(via.Chain))})
	}
	return p.Print(views, func(w io.Writer) error {
		rows := make([][]string, 0, len(views))
		for _, v := range views {
			path := "direct"
			if !v.Direct {
				path = "group " + strings.Join(v.Via, " > group ")
			}
			rows = append(rows, []string{v.Entitlement, strings.ToLower(v.Type), yesNo(v.Enabled), path})
		}
		return output.Rows(w, []string{"entitlement", "type", "enabled", "via"}, rows)
	})
}
