package commands

import (
	"github.com/cpactl/cpactl/directory"
	"github.com/spf13/cobra"
)

func newInitCommand(g *Globals) *cobra.Command {
	o := &initOptions{g: g}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create the base containers and cn=Common (idempotent)",
		Long: `Creates, under the base DN, the containers of cpactl's layout (ou=Properties,
ou=Global, ou=Sites, ou=Pods, ou=Entitlements, ou=HomeSites, ou=People,
ou=Groups, ou=Computers, ou=Sessions, ou=Assignments) and the global
settings entry cn=Common,ou=Global,ou=Properties. Entries that exist are left
alone; the base entry itself is created when it is a missing dc= or o= entry
(only the server's root DN can create it: no account exists yet).

--roles also creates ou=Roles and the groups of cpactl's three roles
(cn=cpactl-admins, cn=cpactl-operators, cn=cpactl-helpdesk), empty, where
the ACLs of ` + "`cpactl schema print --format acl`" + ` expect them; then give the
first admin its role (cpactl role add-member admin DN, as the root DN) and
work as that admin (docs/access.md).`,
		Example: `  cpactl init -H ldap://ldap.example.com -D cn=admin,dc=vdiglobal,dc=vmware,dc=int -W
  cpactl init --roles -H ldap://ldap.example.com -D uid=ann,ou=Accounts,dc=vdiglobal,dc=vmware,dc=int -W`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	o.writeFlags.add(cmd)
	cmd.Flags().BoolVar(&o.Roles, "roles", false, "also create ou=Roles and the three role groups")
	return cmd
}

type initOptions struct {
	g *Globals
	writeFlags
	Roles bool
}

func (o *initOptions) run() error {
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	steps, err := st.Init(o.DryRun)
	if err == nil && o.Roles {
		var more []directory.InitStep
		more, err = st.InitRoles(o.DryRun)
		steps = append(steps, more...)
	}
	created := 0
	for _, s := range steps {
		if s.Created {
			created++
			if o.DryRun {
				o.g.report("would create %s", s.DN)
			} else {
				o.g.report("created %s", s.DN)
			}
		}
	}
	if err != nil {
		return err
	}
	if created == 0 {
		o.g.report("init: unchanged (%d entries already there)", len(steps))
	}
	return nil
}
