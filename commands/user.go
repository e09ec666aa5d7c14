package commands

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/output"
	"github.com/cpactl/cpactl/quote"
)

const userForms = `User arguments take three forms: uid, DOMAIN\uid and uid@domain. A domain
given must match the user's stored domain when it has one (a NetBIOS name
matches the first label of a DNS domain). Names are taken literally:
"*)(uid=*" is a user name like any other.`

func newUserCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "user",
		Short: "List, show, create, update and delete users",
		Long:  "Users are inetOrgPerson entries under ou=People, named by uid.\n\n" + userForms,
	}
	return cmd
}

// UserView is a user as `user list` and `user show` print it (JSON
// contract).
type UserView struct {
	UID      string   `json:"uid"`
	Domain   string   `json:"domain"`
	FullName string   `json:"full_name"`
	Groups   []string `json:"groups"` // immediate groups, in name order
}

func (idx groupsByMember) of(dn string) []string {
	if names := idx[ldapschema.NormalizeDN(dn)]; names != nil {
		return names
	}
	return []string{}
}

type userListOptions struct {
	g *Globals
	listFlags
	Group string
}

func newUserListCommand(g *Globals) *cobra.Command {
	o := &userListOptions{g: g}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List users with their domain and immediate groups",
		Long: `Lists users by uid, with their domain and the groups that list them.
--group lists the members of a group as Horizon entitles them: its users and
those of the groups nested in it, at any depth (` + "`cpactl group show`" + ` shows its
direct members).`,
		Example: `  cpactl user list --group Sales --limit 20
  cpactl user list --name 'a*' -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	cmd.Flags().StringVar(&o.Group, "group", "", "only the members of this group, through nested groups too")
	o.listFlags.add(cmd, "users", true)
	return cmd
}

func (o *userListOptions) run() error {
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
	users, err := st.SelectUsers(sel)
	if err != nil {
		return err
	}
	byMember := groupIndex(groups)
	views := make([]UserView, 0, len(users.Items))
	for _, u := range users.Items {
		views = append(views, UserView{UID: u.UID, Domain: u.Domain, FullName: u.FullName, Groups: byMember.of(u.DN)})
	}
	defer o.counted(o.g, p, len(views), users.Total)
	return p.Print(views, func(w io.Writer) error {
		rows := make([][]string, 0, len(views))
		for _, v := range views {
			rows = append(rows, []string{v.UID, orDash(v.Domain), v.FullName, joinOr(v.Groups, "-")})
		}
		return output.Rows(w, []string{"uid", "domain", "full name", "groups"}, rows)
	})
}

type userShowOptions struct {
	g *Globals
	readFlags
	Name string
}

func newUserShowCommand(g *Globals) *cobra.Command {
	o := &userShowOptions{g: g}
	cmd := &cobra.Command{
		Use:   "show USER",
		Short: "Show one user and its immediate groups",
		Long:  userForms,
		Example: `  cpactl user show alice
  cpactl user show 'CORP\alice' -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return o.g.execute(o)
		},
	}
	o.readFlags.add(cmd)
	return cmd
}

func (o *userShowOptions) run() error {
	p, st, closeFn, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	u, err := st.User(o.Name)
	if err != nil {
		return userError(err)
	}
	groups, err := st.GroupsWithMember(u.DN)
	if err != nil {
		return err
	}
	v := UserView{UID: u.UID, Domain: u.Domain, FullName: u.FullName, Groups: groupsOf(u.DN, groups)}
	return p.Print(v, func(w io.Writer) error {
		return output.Fields(w, [][2]string{{"uid", v.UID}, {"domain", orDash(v.Domain)}, {"full name", v.FullName},
			{"groups", joinOr(v.Groups, "-")}})
	})
}

type userCreateOptions struct {
	g *Globals
	writeFlags
	Arg      string
	Domain   string
	FullName string
}

func newUserCreateCommand(g *Globals) *cobra.Command {
	o := &userCreateOptions{g: g}
	cmd := &cobra.Command{
		Use:   "create UID",
		Short: "Create a user (idempotent)",
		Long: `Creates a user. UID may carry its domain (DOMAIN\uid or uid@domain) instead
of --domain. Without --name, the full name is the uid.`,
		Example: `  cpactl user create alice --domain CORP --name "Alice Martin"
  cpactl user create 'bob@corp.example.com'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Arg = args[0]
			return o.g.execute(o)
		},
	}
	cmd.Flags().StringVar(&o.Domain, "domain", "", "the user's NetBIOS or DNS domain")
	cmd.Flags().StringVar(&o.FullName, "name", "", "the user's full name")
	o.writeFlags.add(cmd)
	return cmd
}

// want validates the arguments into the user record to create.
func (o *userCreateOptions) want() (ldapschema.User, error) {
	if strings.TrimSpace(o.Arg) != o.Arg {
		// ParseUserName forgives spaces around a name to look up; a name
		// to create keeps exactly what was typed, so refuse rather than
		// create "lead" for " lead".
		return ldapschema.User{}, errorf("remove the spaces", "user name %s starts or ends with a space", quote.Name(o.Arg))
	}
	n, err := directory.ParseUserName(o.Arg)
	if err != nil {
		return ldapschema.User{}, errorf(`write uid, DOMAIN\uid or uid@domain`, "%v", err)
	}
	if n.Domain != "" && o.Domain != "" && !strings.EqualFold(n.Domain, o.Domain) {
		return ldapschema.User{}, errorf("give the domain once", "user %s: the domain %q in the name and --domain %q differ", o.Arg, n.Domain, o.Domain)
	}
	u := ldapschema.User{UID: n.UID, Domain: n.Domain, FullName: strings.TrimSpace(o.FullName)}
	if o.Domain != "" {
		u.Domain = o.Domain
	}
	if err := checkName(objkind.User, u.UID, maxUserName); err != nil {
		return u, err
	}
	if u.Domain != "" {
		if err := checkName("domain", u.Domain, maxUserName); err != nil {
			return u, err
		}
	}
	if u.FullName != "" {
		if err := checkDescription(objkind.User, u.UID, u.FullName); err != nil {
			return u, err
		}
	}
	if u.FullName == "" {
		u.FullName = u.UID
	}
	return u, nil
}

func (o *userCreateOptions) run() error {
	want, err := o.want()
	if err != nil {
		return err
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	return createOrUnchanged(o.g, st, o.DryRun, creation[ldapschema.User]{
		kind: objkind.User, name: want.UID, where: "", dn: st.DIT.User(want.UID), attrs: want.Attrs(),
		read: func() (ldapschema.User, error) { return st.User(want.UID) },
		stored: func(u ldapschema.User) (string, ldapschema.Attrs) {
			if strings.EqualFold(u.Domain, want.Domain) {
				u.Domain = want.Domain // a domain compares without regard to case
			}
			return u.UID, u.Attrs()
		},
		compared: ldapschema.UserManaged,
	})
}

type userUpdateOptions struct {
	g *Globals
	writeFlags
	Arg      string
	Domain   *string
	FullName *string
}

func newUserUpdateCommand(g *Globals) *cobra.Command {
	o := &userUpdateOptions{g: g}
	var domain, name string
	cmd := &cobra.Command{
		Use:     "update USER",
		Short:   "Change a user's domain or full name",
		Long:    userForms,
		Example: `  cpactl user update alice --name "Alice Martin-Dupont"`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Arg = args[0]
			if cmd.Flags().Changed("domain") {
				o.Domain = &domain
			}
			if cmd.Flags().Changed("name") {
				o.FullName = &name
			}
			return o.g.execute(o)
		},
	}
	cmd.Flags().StringVar(&domain, "domain", "", "new domain (\"\" removes it)")
	cmd.Flags().StringVar(&name, "name", "", "new full name (\"\" makes it the uid)")
	o.writeFlags.add(cmd)
	return cmd
}

func (o *userUpdateOptions) run() error {
	if o.Domain == nil && o.FullName == nil {
		return errorf("pass --domain or --name", "nothing to update for user %s", o.Arg)
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	return updateOne(o.g, st, o.DryRun, modification[ldapschema.User]{
		kind: objkind.User, managed: ldapschema.UserManaged,
		read: func() (ldapschema.User, error) {
			u, err := st.User(o.Arg)
			return u, userError(err)
		},
		apply: func(u ldapschema.User, next *ldapschema.User) error {
			if o.Domain != nil {
				next.Domain = strings.TrimSpace(*o.Domain)
				if next.Domain != "" {
					if err := checkName("domain", next.Domain, maxUserName); err != nil {
						return err
					}
				}
			}
			if o.FullName != nil {
				next.FullName = strings.TrimSpace(*o.FullName)
				if err := checkDescription(objkind.User, u.UID, next.FullName); err != nil {
					return err
				}
				if next.FullName == "" {
					next.FullName = u.UID
				}
			}
			return nil
		},
		name:  func(u ldapschema.User) string { return u.UID },
		dn:    func(u ldapschema.User) string { return u.DN },
		attrs: ldapschema.User.Attrs,
	})
}

func newUserDeleteCommand(g *Globals) *cobra.Command {
	return newNamedDeleteCommand(g, namedDelete{
		kind:  objkind.User,
		use:   "delete USER",
		short: "Delete a user; refused while groups, entitlements, home sites or records refer to it (see --force)",
		long: `Deletes a user. While groups or entitlements list it as a member, or
home-site rows, sessions or pod assignments name it, the delete is refused
and they are listed; with --force it leaves the groups and entitlements and
those rows and records are deleted, in the same LDAP transaction.

On a terminal cpactl asks for confirmation; elsewhere pass --yes.

` + userForms,
		example: `  cpactl user delete alice --yes
  cpactl user delete 'CORP\bob' --force --yes`,
		force: "also remove the user from groups and entitlements and delete its home sites, sessions and assignments",
		hint: func(_ string) string {
			return "remove it from its groups first, or pass --force to remove every reference in the same transaction"
		},
		lookup: func(st *directory.Store, name string) (string, string, error) {
			x, err := st.User(name)
			if err != nil {
				return "", "", userError(err)
			}
			return x.UID, x.DN, nil
		},
	})
}
