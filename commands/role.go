package commands

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/output"
)

// The roles (docs/access.md): slapd enforces them with the ACLs of
// `cpactl schema print --format acl`; these commands show and change who
// holds them, and say who the connection is.

func newRoleCommand(g *Globals) *cobra.Command {
	var b strings.Builder
	for _, d := range ldapschema.Roles {
		fmt.Fprintf(&b, "  %-9s %s (Horizon: %s)\n", d.Role, d.May, d.Horizon)
	}
	return &cobra.Command{
		Use:   "role",
		Short: "Show and change who holds cpactl's roles (admin, operator, helpdesk)",
		Long: "cpactl's roles are groups under ou=Roles (created by `cpactl init --roles`);\n" +
			"slapd enforces them with the ACLs of `cpactl schema print --format acl`. Each\n" +
			"role allows what the ones above it allow:\n\n" + b.String() +
			"\nAnonymous may only bind; nobody, admins included, reads a password. A member\n" +
			"is any entry that can bind (an account) or hold members (a group, whose members\n" +
			"then hold the role: groups may nest). Only admins change the groups.\n" +
			"A service account's password is set with the Password Modify operation\n" +
			"(docs/access.md): ldappasswd -H URL -D ADMIN_DN -W -T NEWPW_FILE ACCOUNT_DN",
	}
}

// RoleView is one role as `role list` and `role show` print it (JSON
// contract).
type RoleView struct {
	Role    string   `json:"role"`
	Group   string   `json:"group"`
	Exists  bool     `json:"exists"`
	Members []string `json:"members"`
	// Effective are the accounts and groups that hold the role through
	// nested groups too (role show), with the groups in between.
	Effective []EffectiveMember `json:"effective,omitempty"`
	// Unreadable lists nested groups this bind could not read.
	Unreadable []string `json:"unreadable,omitempty"`
	May        string   `json:"may"`
}

// EffectiveMember is a member through nested groups.
type EffectiveMember struct {
	DN      string   `json:"dn"`
	Through []string `json:"through"`
}

func roleView(g directory.RoleGroup, effective bool) RoleView {
	v := RoleView{Role: string(g.Role), Group: g.DN, Exists: g.Exists, Members: g.Members,
		Unreadable: g.Unreadable, May: g.Role.Definition().May}
	if v.Members == nil {
		v.Members = []string{}
	}
	if effective {
		for dn, chain := range g.Chain {
			if chain == nil {
				chain = []string{}
			}
			v.Effective = append(v.Effective, EffectiveMember{DN: dn, Through: chain})
		}
		slices.SortFunc(v.Effective, func(a, b EffectiveMember) int { return strings.Compare(a.DN, b.DN) })
	}
	return v
}

type roleListOptions struct {
	g *Globals
	readFlags
}

func newRoleListCommand(g *Globals) *cobra.Command {
	o := &roleListOptions{g: g}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the roles and their direct members",
		Long: `Lists the three roles and their direct members (-o wide: and their groups).
Every bound account may read the role groups; anonymous may not (exit 4).`,
		Example: `  cpactl role list
  cpactl role list -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "table", output.FormatUsage)
	return cmd
}

func (o *roleListOptions) run() error {
	p, err := o.printer(o.g)
	if err != nil {
		return err
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	groups, err := st.RoleGroups()
	if err != nil {
		return err
	}
	views := make([]RoleView, len(groups))
	for i, gr := range groups {
		views[i] = roleView(gr, false)
	}
	return p.Print(views, func(w io.Writer) error {
		var rows [][]string
		for _, v := range views {
			members := strings.Join(v.Members, "; ")
			if !v.Exists {
				members = "(no group: run cpactl init --roles)"
			}
			rows = append(rows, []string{v.Role, v.Group, members})
		}
		// The group's DN is -o wide's: a line stays within 100 columns.
		return output.RowsWide(w, []string{"role", "group", "members"}, []bool{false, true, false}, rows)
	})
}

type roleShowOptions struct {
	g *Globals
	readFlags
	Role string
}

func newRoleShowCommand(g *Globals) *cobra.Command {
	o := &roleShowOptions{g: g}
	cmd := &cobra.Command{
		Use:   "show ROLE",
		Short: "Show a role: what it allows, its direct members and who holds it through nested groups",
		Example: `  cpactl role show helpdesk
  cpactl role show admin -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Role = args[0]
			return o.g.execute(o)
		},
		ValidArgs: ldapschema.RoleNames(),
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "table", output.FormatUsage)
	return cmd
}

// parseRole validates a ROLE argument.
func parseRole(name string) (ldapschema.Role, error) {
	r, ok := ldapschema.ParseRole(name)
	if !ok {
		return "", errorf("roles are "+strings.Join(ldapschema.RoleNames(), ", "), "unknown role %q", name)
	}
	return r, nil
}

func (o *roleShowOptions) run() error {
	r, err := parseRole(o.Role)
	if err != nil {
		return err
	}
	p, err := o.printer(o.g)
	if err != nil {
		return err
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	groups, err := st.RoleGroups()
	if err != nil {
		return err
	}
	var v RoleView
	for _, gr := range groups {
		if gr.Role == r {
			v = roleView(gr, true)
		}
	}
	return p.Print(v, func(w io.Writer) error {
		var effective []string
		for _, m := range v.Effective {
			if len(m.Through) > 0 {
				effective = append(effective, m.DN+" (through "+strings.Join(m.Through, " < ")+")")
			}
		}
		return output.Fields(w, [][2]string{{"role", v.Role}, {"group", v.Group}, {"may", v.May},
			{"members", strings.Join(v.Members, "; ")}, {"through groups", strings.Join(effective, "; ")},
			{"unreadable groups", strings.Join(v.Unreadable, "; ")}})
	})
}

type roleMemberOptions struct {
	g *Globals
	writeFlags
	add  bool
	Role string
	DN   string
}

func newRoleMemberCommand(g *Globals, add bool) *cobra.Command {
	o := &roleMemberOptions{g: g, add: add}
	use, short, example := "add-member ROLE DN", "Give an account or a group a role (admins only)",
		`  cpactl role add-member operator uid=feed,ou=Accounts,dc=vdiglobal,dc=vmware,dc=int
  cpactl role add-member helpdesk cn=helpdesk-tier1,ou=Roles,dc=vdiglobal,dc=vmware,dc=int`
	if !add {
		use, short, example = "remove-member ROLE DN", "Take a role from an account or a group (admins only)",
			`  cpactl role remove-member operator uid=feed,ou=Accounts,dc=vdiglobal,dc=vmware,dc=int`
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long: `Adds DN to, or removes it from, the role's group under ou=Roles. DN is any
entry that can bind (its classes allow a userPassword: an account an admin
made with ldapadd, anywhere under the base) or hold members (a group: its
members, and theirs, then hold the role). slapd lets only admins change the
groups; a change takes effect on the next command, with no restart. The
admin role keeps at least one member (only the root DN could manage roles
otherwise). A member already there (or not there) is "unchanged".`,
		Example: example,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Role, o.DN = args[0], args[1]
			return o.g.execute(o)
		},
	}
	o.writeFlags.add(cmd)
	return cmd
}

func (o *roleMemberOptions) run() error {
	r, err := parseRole(o.Role)
	if err != nil {
		return err
	}
	if _, err := ldapschema.NormalizeDNChecked(o.DN); err != nil || strings.TrimSpace(o.DN) == "" {
		return errorf("pass the entry's whole DN, e.g. uid=feed,ou=Accounts,"+ldapschema.DefaultBase, "%q is not a DN", o.DN)
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	done, would, prep := "added", "would add", "to"
	change := st.AddRoleMember
	if !o.add {
		done, would, prep = "removed", "would remove", "from"
		change = st.RemoveRoleMember
	}
	res, err := change(r, o.DN, o.DryRun)
	var kind *directory.MemberKindError
	var last *directory.LastAdminError
	switch {
	case errors.As(err, &kind):
		return &Failure{Code: ExitError, Err: err, Hint: "a member is an account (e.g. objectClass account and simpleSecurityObject) or a group (groupOfNames)"}
	case errors.As(err, &last):
		return &Failure{Code: ExitError, Err: err, Hint: "add another admin first: cpactl role add-member admin DN"}
	case err != nil:
		return err
	}
	switch {
	case !res.Changed && o.add:
		o.g.report("role %s: %s is a member already: unchanged", r, o.DN)
	case !res.Changed:
		o.g.report("role %s: %s is not a member: unchanged", r, o.DN)
	case o.DryRun:
		o.g.report("%s %s %s role %s", would, o.DN, prep, r)
	default:
		o.g.report("%s %s %s role %s", done, o.DN, prep, r)
	}
	return nil
}

type whoamiOptions struct {
	g *Globals
	readFlags
}

// WhoamiView is what `cpactl whoami` prints (JSON contract).
type WhoamiView struct {
	Identity     string              `json:"identity"`
	Anonymous    bool                `json:"anonymous"`
	Roles        []string            `json:"roles"`
	Through      map[string][]string `json:"through,omitempty"`
	RolesUnknown string              `json:"roles_unknown,omitempty"`
	May          []string            `json:"may"`
	MayNot       []string            `json:"may_not"`
}

func newWhoamiCommand(g *Globals) *cobra.Command {
	o := &whoamiOptions{g: g}
	cmd := &cobra.Command{
		Use:   "whoami",
		Short: "Show who the connection binds as, its roles, and what it may and may not do",
		Long: `Binds as the flags say (-D, -W, -y, or anonymous, or SASL EXTERNAL over
ldapi://), asks the server who that is (the "Who am I?" operation), reads
the role groups (through nested groups) and says in one line per role what
the identity may and may not do. A bind that fails is exit 4. slapd decides
access; this only reports the groups it holds.`,
		Example: `  cpactl whoami -D uid=hedy,ou=Accounts,dc=vdiglobal,dc=vmware,dc=int -W
  cpactl whoami -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "table", output.FormatUsage)
	return cmd
}

func (o *whoamiOptions) run() error {
	p, err := o.printer(o.g)
	if err != nil {
		return err
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	id, err := st.WhoAmI()
	if err != nil {
		return err
	}
	v := WhoamiView{Identity: id.Name(), Anonymous: id.Anonymous, Roles: []string{}, RolesUnknown: id.Unknown,
		May: []string{}, MayNot: []string{}}
	for i := len(id.Roles) - 1; i >= 0; i-- {
		v.Roles = append(v.Roles, string(id.Roles[i]))
	}
	if len(id.Through) > 0 {
		v.Through = map[string][]string{}
		for r, chain := range id.Through {
			v.Through[string(r)] = chain
		}
	}
	if id.Anonymous {
		v.MayNot = append(v.MayNot, "read or change anything of the federation: anonymous may only bind")
	}
	for _, d := range ldapschema.Roles {
		line := d.May + " (" + string(d.Role) + ")"
		if id.Holds(d.Role) {
			v.May = append(v.May, line)
		} else {
			v.MayNot = append(v.MayNot, line)
		}
	}
	v.MayNot = append(v.MayNot, "read a password (no role may)")
	return p.Print(v, func(w io.Writer) error {
		roles := strings.Join(v.Roles, ", ")
		switch {
		case v.RolesUnknown != "":
			roles = "unknown: " + v.RolesUnknown
		case roles == "":
			roles = "none"
		}
		for _, r := range v.Roles {
			if chain, ok := v.Through[r]; ok {
				roles += fmt.Sprintf(" (%s through %s)", r, strings.Join(chain, " < "))
			}
		}
		pairs := [][2]string{{"identity", v.Identity}, {"roles", roles}}
		for _, m := range v.May {
			pairs = append(pairs, [2]string{"may", m})
		}
		for _, m := range v.MayNot {
			pairs = append(pairs, [2]string{"may not", m})
		}
		return output.Fields(w, pairs)
	})
}
