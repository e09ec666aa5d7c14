package commands

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/output"
	"github.com/cpactl/cpactl/quote"
	"github.com/cpactl/cpactl/rules"
)

const memberForms = `A member is a user, a group or a client computer, named as it is (users
also as DOMAIN\uid or uid@domain). A name that several kinds carry must
say which: user:NAME, group:NAME or computer:NAME. Separate members with
commas or repeat the flag; quote names holding commas as CSV does.`

func newGroupCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "group",
		Short: "List, show, create and delete groups and change their members",
		Long: `Groups hold users, client computers and other groups (groups nest; a cycle
is tolerated but reported). A group may be empty.

` + memberForms,
	}
	return cmd
}

// GroupMemberView is one member of a group (JSON contract).
type GroupMemberView struct {
	Kind string `json:"kind"` // user, group, computer (or entry, for a DN elsewhere)
	Name string `json:"name"`
}

// GroupView is a group as `group list` and `group show` print it (JSON
// contract).
type GroupView struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Members     []GroupMemberView `json:"members"`   // by kind, then name
	MemberOf    []string          `json:"member_of"` // immediate parent groups, in name order
}

func groupView(st *directory.Store, g ldapschema.Group, parents groupsByMember) GroupView {
	v := GroupView{Name: g.Name, Description: g.Description, Members: []GroupMemberView{}, MemberOf: parents.of(g.DN)}
	for _, m := range g.Members {
		mm := st.MemberOfDN(m)
		v.Members = append(v.Members, GroupMemberView{Kind: mm.Kind, Name: mm.Name})
	}
	sortMembers(v.Members)
	return v
}

func sortMembers(ms []GroupMemberView) {
	rank := func(kind string) int {
		switch kind {
		case objkind.User:
			return 0
		case objkind.Group:
			return 1
		case objkind.Computer:
			return 2
		}
		return 3
	}
	sort.SliceStable(ms, func(i, j int) bool {
		a, b := ms[i], ms[j]
		if ra, rb := rank(a.Kind), rank(b.Kind); ra != rb {
			return ra < rb
		}
		if x, y := strings.ToLower(a.Name), strings.ToLower(b.Name); x != y {
			return x < y
		}
		return a.Name < b.Name
	})
}

func memberWords(ms []GroupMemberView) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = m.Kind + " " + m.Name
	}
	return joinOr(parts, "-")
}

type groupListOptions struct {
	g *Globals
	listFlags
}

func newGroupListCommand(g *Globals) *cobra.Command {
	o := &groupListOptions{g: g}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List groups with their members and parent groups",
		Example: `  cpactl group list --name 'sales*'
  cpactl group list -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	o.listFlags.add(cmd, "groups", true)
	return cmd
}

func (o *groupListOptions) run() error {
	p, st, closeFn, sel, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	groups, err := st.Groups()
	if err != nil {
		return err
	}
	// Every group is read for the parents column; a second read selects
	// when --name or --limit narrow the list.
	selected := directory.Selected[ldapschema.Group]{Items: groups, Total: len(groups)}
	if sel.Name != nil || sel.Limit > 0 {
		if selected, err = st.SelectGroups(sel); err != nil {
			return err
		}
	}
	byMember := groupIndex(groups)
	views := make([]GroupView, 0, len(selected.Items))
	for _, gr := range selected.Items {
		views = append(views, groupView(st, gr, byMember))
	}
	defer o.counted(o.g, p, len(views), selected.Total)
	return p.Print(views, func(w io.Writer) error {
		rows := make([][]string, 0, len(views))
		for _, v := range views {
			rows = append(rows, []string{v.Name, memberWords(v.Members), joinOr(v.MemberOf, "-"), v.Description})
		}
		return output.Rows(w, []string{"name", "members", "member of", "description"}, rows)
	})
}

type groupShowOptions struct {
	g *Globals
	readFlags
	Name string
}

func newGroupShowCommand(g *Globals) *cobra.Command {
	o := &groupShowOptions{g: g}
	cmd := &cobra.Command{
		Use:     "show NAME",
		Short:   "Show one group: members and parent groups",
		Example: `  cpactl group show Engineering -o yaml`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return o.g.execute(o)
		},
	}
	o.readFlags.add(cmd)
	return cmd
}

func (o *groupShowOptions) run() error {
	p, st, closeFn, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	gr, err := st.Group(o.Name)
	if err != nil {
		return err
	}
	parents, err := st.GroupsWithMember(gr.DN)
	if err != nil {
		return err
	}
	v := groupView(st, gr, groupIndex(parents))
	return p.Print(v, func(w io.Writer) error {
		return output.Fields(w, [][2]string{{"name", v.Name}, {"description", v.Description},
			{"members", memberWords(v.Members)}, {"member of", joinOr(v.MemberOf, "-")}})
	})
}

// resolveMembers resolves member arguments for group, refusing the group
// itself and repeats.
func resolveMembers(st *directory.Store, groupName, groupDN string, args []string) ([]directory.Member, error) {
	var out []directory.Member
	check := rules.NewGroupMembers(groupName, groupDN)
	for _, a := range args {
		m, err := st.ResolveMember(a)
		if err != nil {
			return nil, memberError(err)
		}
		if err := check.Add(rules.GroupMember{Kind: m.Kind, Name: m.Name, DN: m.DN}); err != nil {
			return nil, refused(err)
		}
		out = append(out, m)
	}
	return out, nil
}

func memberError(err error) error {
	var nf *ldapclient.NotFoundError
	if errors.As(err, &nf) {
		return err
	}
	var ambiguous *directory.AmbiguousError
	if errors.As(err, &ambiguous) {
		return errorf("prefix the name with user:, group: or computer:", "%v", err)
	}
	return userError(err)
}

// warnCycles warns when adding group members closes a cycle of nested
// groups (tolerated, as Horizon tolerates it, but rarely meant).
func warnCycles(g *Globals, st *directory.Store, groupName, groupDN string, members []directory.Member) error {
	for _, m := range members {
		if m.Kind != objkind.Group {
			continue
		}
		cycle, err := st.ReachesGroup(groupDN, m.DN)
		if err != nil {
			return err
		}
		if cycle {
			g.warn("group %s is already (directly or through other groups) a member of group %s: this makes a cycle", groupName, m.Name)
		}
	}
	return nil
}

type groupCreateOptions struct {
	g *Globals
	writeFlags
	Name        string
	Members     []string
	Description string
}

func newGroupCreateCommand(g *Globals) *cobra.Command {
	o := &groupCreateOptions{g: g}
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a group, empty or with members (idempotent)",
		Long:  "Creates a group. " + memberForms,
		Example: `  cpactl group create Engineering --members alice,bob,group:Contractors
  cpactl group create Kiosks --members computer:KIOSK-01 --description "lobby kiosks"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return o.g.execute(o)
		},
	}
	csvListVar(cmd.Flags(), &o.Members, "members", "users, groups and computers: a,b,group:c")
	cmd.Flags().StringVar(&o.Description, "description", "", "what the group is")
	o.writeFlags.add(cmd)
	return cmd
}

func (o *groupCreateOptions) run() error {
	if err := checkName(objkind.Group, o.Name, maxName); err != nil {
		return err
	}
	if err := checkDescription(objkind.Group, o.Name, o.Description); err != nil {
		return err
	}
	o.Members = cleanList(o.Members)
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	// The group as it exists (or a *ldapclient.NotFoundError), read once:
	// a member may not be the group itself.
	existing, err := st.Group(o.Name)
	if err != nil && !directory.IsNotFound(err) {
		return err
	}
	members, merr := resolveMembers(st, o.Name, existing.DN, o.Members)
	if merr != nil {
		return merr
	}
	want := ldapschema.Group{Name: o.Name, Description: o.Description}
	for _, m := range members {
		want.Members = append(want.Members, m.DN)
	}
	dn := st.DIT.Group(o.Name)
	return createOrUnchanged(o.g, st, o.DryRun, creation[ldapschema.Group]{
		kind: objkind.Group, name: o.Name, where: " with " + memberList(members), dn: dn, attrs: want.Attrs(),
		read:     func() (ldapschema.Group, error) { return existing, err },
		stored:   func(gr ldapschema.Group) (string, ldapschema.Attrs) { return gr.Name, gr.Attrs() },
		compared: []string{ldapschema.AttrDescription, ldapschema.AttrMember},
		fix:      fmt.Sprintf("use `cpactl group add-member %s` or `remove-member` to change its members", quote.Shell(existing.Name)),
		check: func() error {
			if o.DryRun {
				return nil // the cycles are read when the group is written
			}
			return warnCycles(o.g, st, o.Name, dn, members)
		},
	})
}

func memberList(ms []directory.Member) string {
	if len(ms) == 0 {
		return "no members"
	}
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = m.String()
	}
	return strings.Join(parts, ", ")
}

type groupMembersOptions struct {
	g *Globals
	writeFlags
	add     bool
	Group   string
	Members []string
}

func newGroupMembersCommand(g *Globals, add bool) *cobra.Command {
	o := &groupMembersOptions{g: g, add: add}
	cmd := &cobra.Command{
		Use:   "add-member GROUP MEMBER...",
		Short: "Add users, groups or computers to a group (members already there are left alone)",
		Long:  memberForms,
		Example: `  cpactl group add-member Engineering alice 'CORP\bob' group:Contractors
  cpactl group add-member Kiosks computer:KIOSK-02`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Group, o.Members = args[0], args[1:]
			return o.g.execute(o)
		},
	}
	if !add {
		cmd.Use = "remove-member GROUP MEMBER..."
		cmd.Short = "Remove members from a group (members not there are left alone)"
		cmd.Long = memberForms + "\n\nA member whose entry no longer exists is removed by its name."
		cmd.Example = `  cpactl group remove-member Engineering alice group:Contractors`
	}
	o.writeFlags.add(cmd)
	return cmd
}

func (o *groupMembersOptions) run() error {
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	gr, err := st.Group(o.Group)
	if err != nil {
		return err
	}
	var members []directory.Member
	if o.add {
		members, err = resolveMembers(st, gr.Name, gr.DN, cleanList(o.Members))
	} else {
		members, err = o.storedMembers(st, gr)
	}
	if err != nil {
		return err
	}
	var vals []string
	var changed []directory.Member
	for _, m := range members {
		present := false
		for _, v := range gr.Members {
			present = present || ldapschema.EqualDN(v, m.DN)
		}
		switch {
		case o.add && present:
			o.g.report("%s is already a member of group %s", m, gr.Name)
		case !o.add && !present:
			o.g.report("%s is not a member of group %s", m, gr.Name)
		default:
			vals = append(vals, m.DN)
			changed = append(changed, m)
		}
	}
	if len(changed) == 0 {
		o.g.report("group %s: unchanged", gr.Name)
		return nil
	}
	verb, prep := "add", "to"
	op := directory.ChangeAdd
	if !o.add {
		verb, prep, op = "remove", "from", directory.ChangeRemove
	}
	plan := &directory.Plan{}
	plan.Add(directory.ChangeWrite(verb, fmt.Sprintf("%s %s group %s", memberList(changed), prep, gr.Name), gr.DN,
		directory.Change{Op: op, Attr: ldapschema.AttrMember, Values: vals}))
	if o.add && !o.DryRun {
		if err := warnCycles(o.g, st, gr.Name, gr.DN, changed); err != nil {
			return err
		}
	}
	return applyPlan(o.g, st, plan, o.DryRun, "group "+gr.Name)
}

// storedMembers resolves remove-member arguments; an argument naming no
// existing entry still matches a stored member by name (a dangling DN).
func (o *groupMembersOptions) storedMembers(st *directory.Store, gr ldapschema.Group) ([]directory.Member, error) {
	var out []directory.Member
	for _, a := range cleanList(o.Members) {
		m, err := st.ResolveMember(a)
		var nf *ldapclient.NotFoundError
		if errors.As(err, &nf) {
			found := false
			name := a
			for _, p := range []string{"user:", "group:", "computer:"} {
				if strings.HasPrefix(strings.ToLower(a), p) {
					name = a[len(p):]
				}
			}
			for _, v := range gr.Members {
				if strings.EqualFold(ldapschema.NameOf(v), name) {
					out = append(out, st.MemberOfDN(v))
					found = true
				}
			}
			if found {
				continue
			}
		}
		if err != nil {
			return nil, memberError(err)
		}
		out = append(out, m)
	}
	return out, nil
}

func newGroupDeleteCommand(g *Globals) *cobra.Command {
	return newNamedDeleteCommand(g, namedDelete{
		kind:  objkind.Group,
		use:   "delete NAME",
		short: "Delete a group; refused while groups, entitlements or home sites refer to it (see --force)",
		long: `Deletes a group (its own members are not touched). While other groups or
entitlements list it as a member, or home-site rows name it, the delete is
refused and they are listed; with --force it leaves those groups and
entitlements and its home-site rows are deleted, in the same LDAP
transaction.

On a terminal cpactl asks for confirmation; elsewhere pass --yes.`,
		example: `  cpactl group delete Contractors --yes`,
		force:   "also remove the group from groups and entitlements and delete its home sites",
		hint: func(_ string) string {
			return "remove it from those groups and entitlements first, or pass --force to remove every reference in the same transaction"
		},
		lookup: func(st *directory.Store, name string) (string, string, error) {
			x, err := st.Group(name)
			if err != nil {
				return "", "", err
			}
			return x.Name, x.DN, nil
		},
	})
}
