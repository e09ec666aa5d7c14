package commands

// The edits of a global entitlement's members and pools (add-member,
// remove-member, add-pool, remove-pool) and the members list.

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/membership"
	"github.com/cpactl/cpactl/output"
	"github.com/cpactl/cpactl/rules"
)

type entitlementMembersOptions struct {
	g *Globals
	readFlags
	Name      string
	Effective bool
}

// EffectiveMemberView is a user an entitlement reaches, as `entitlement
// members --effective` prints it (JSON contract): Direct when the user is
// a member itself, else Via lists the groups from the entitlement's member
// down to the user's own group (the shortest chain; ties by group name).
type EffectiveMemberView struct {
	User   string   `json:"user"`
	DN     string   `json:"dn"`
	Direct bool     `json:"direct"`
	Via    []string `json:"via"`
}

func newEntitlementMembersCommand(g *Globals) *cobra.Command {
	o := &entitlementMembersOptions{g: g}
	cmd := &cobra.Command{
		Use:   "members NAME",
		Short: "List the users and groups entitled directly, or with --effective every user reached through groups",
		Long: `Lists the entitlement's members: users, groups and computers, as stored.

With --effective, lists instead every user the entitlement reaches: its
user members and the users of its groups, nested to any depth (cycles are
tolerated), each once with the path: "direct", or the groups from the
entitlement's member down to the user's own group ("via Sales > EMEA
Sales"; the shortest path, ties by group name). It reads every group once.
Membership alone: tags, client restrictions and Require Home Site are
checked by ` + "`cpactl resolve`" + `; ` + "`cpactl user entitlements`" + ` asks the other way round.`,
		Example: `  cpactl entitlement members "Sales Desktop"
  cpactl entitlement members "Sales Desktop" --effective
  cpactl entitlement members "Sales Desktop" --effective -o json --from backup.ldif`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return o.g.execute(o)
		},
	}
	cmd.Flags().BoolVar(&o.Effective, "effective", false, "every user reached, through nested groups too, with the path")
	o.readFlags.add(cmd)
	return cmd
}

func (o *entitlementMembersOptions) run() error {
	p, st, closeFn, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	ge, err := st.Entitlement(o.Name)
	if err != nil {
		return err
	}
	if o.Effective {
		return o.effective(p, st, ge.Members)
	}
	views := memberViews(st, ge.Members)
	return p.Print(views, func(w io.Writer) error {
		rows := make([][]string, 0, len(views))
		for _, v := range views {
			rows = append(rows, []string{v.Kind, v.Name, v.DN})
		}
		return output.Rows(w, []string{"kind", "name", "dn"}, rows)
	})
}

// effective prints the users within members (membership.Graph.Reach over
// every group).
func (o *entitlementMembersOptions) effective(p output.Printer, st *directory.Store, members []string) error {
	groups, err := st.Groups()
	if err != nil {
		return err
	}
	views := []EffectiveMemberView{}
	for _, r := range membership.New(groups).Reach(members) {
		m := st.MemberOfDN(r.DN)
		if m.Kind != objkind.User {
			continue
		}
		views = append(views, EffectiveMemberView{User: m.Name, DN: r.DN, Direct: r.Direct(),
			Via: orEmpty(membership.Names(r.Chain()))})
	}
	sortBy(views, func(v EffectiveMemberView) string { return v.User })
	return p.Print(views, func(w io.Writer) error {
		rows := make([][]string, 0, len(views))
		for _, v := range views {
			path := "direct"
			if !v.Direct {
				path = "via " + strings.Join(v.Via, " > ")
			}
			rows = append(rows, []string{v.User, path})
		}
		return output.Rows(w, []string{"user", "path"}, rows)
	})
}

type entitlementMemberEditOptions struct {
	g *Globals
	writeFlags
	add    bool
	Name   string
	Users  []string
	Groups []string
}

func newEntitlementMemberEditCommand(g *Globals, add bool) *cobra.Command {
	o := &entitlementMemberEditOptions{g: g, add: add}
	cmd := &cobra.Command{
		Use:   "add-member NAME (--user U | --group G)...",
		Short: "Entitle users and groups (idempotent)",
		Long: `Adds users and groups to the entitlement's members. Every name is looked up
before anything is written (a missing one exits 3); members already there
are left alone. Users may be written uid, DOMAIN\uid or uid@domain.`,
		Example: `  cpactl entitlement add-member "Sales Desktop" --group Sales --user 'EXAMPLE\bob'`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return o.g.execute(o)
		},
	}
	if !add {
		cmd.Use = "remove-member NAME (--user U | --group G)..."
		cmd.Short = "Remove users and groups from an entitlement's members (idempotent)"
		cmd.Long = `Removes users and groups from the entitlement's members; names that are not
members are reported and left alone. A member whose entry no longer exists
can still be removed by name.`
		cmd.Example = `  cpactl entitlement remove-member "Sales Desktop" --user bob`
	}
	// StringArray, not StringSlice: names may hold commas.
	cmd.Flags().StringArrayVar(&o.Users, "user", nil, "a user (repeat the flag for several)")
	cmd.Flags().StringArrayVar(&o.Groups, "group", nil, "a group (repeat the flag for several)")
	o.writeFlags.add(cmd)
	return cmd
}

// memberArg is one --user or --group argument, resolved.
type memberArg struct {
	kind, name, dn string
}

func (o *entitlementMemberEditOptions) resolve(st *directory.Store, ge ldapschema.Entitlement) ([]memberArg, error) {
	var out []memberArg
	lookup := func(kind, arg string, find func(string) (string, string, error), fallback string) error {
		name, dn, err := find(arg)
		if directory.IsNotFound(err) && !o.add && containsDN(ge.Members, fallback) {
			name, dn, err = arg, fallback, nil // a dangling member can still go
		}
		if err != nil {
			return err
		}
		out = append(out, memberArg{kind: kind, name: name, dn: dn})
		return nil
	}
	for _, u := range o.Users {
		fallback := ""
		if n, err := directory.ParseUserName(u); err == nil {
			fallback = st.DIT.User(n.UID)
		}
		if err := lookup(objkind.User, u, func(a string) (string, string, error) {
			x, err := st.User(a)
			return x.UID, x.DN, err
		}, fallback); err != nil {
			return nil, err
		}
	}
	for _, gr := range o.Groups {
		if err := lookup(objkind.Group, gr, func(a string) (string, string, error) {
			x, err := st.Group(a)
			return x.Name, x.DN, err
		}, st.DIT.Group(gr)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (o *entitlementMemberEditOptions) run() error {
	if len(o.Users)+len(o.Groups) == 0 {
		return errorf("pass --user U or --group G (repeatable)", "name at least one member")
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	ge, err := st.Entitlement(o.Name)
	if err != nil {
		return err
	}
	args, err := o.resolve(st, ge)
	if err != nil {
		return err
	}
	e := valueEdit{add: o.add, attr: ldapschema.AttrMember, unchangedIn: "already members", unchangedOut: "not members"}
	for _, a := range args {
		e.offer(ge.Members, a.dn, a.kind+" "+a.name)
	}
	if o.add && len(e.values) > 0 {
		// A backup has no members: users reach it through its primary.
		users, err := st.EntitlementsBackedUpBy(ge.DN)
		if err != nil {
			return err
		}
		next := ge
		next.Members = append(append([]string(nil), ge.Members...), e.values...)
		if err := checkAsBackup(o.g, users, next); err != nil {
			return err
		}
	}
	return e.write(o.g, st, o.DryRun, ge, strings.Join(e.labels, ", "))
}

type entitlementPoolEditOptions struct {
	g *Globals
	writeFlags
	add   bool
	Name  string
	Pools []string
}

func newEntitlementPoolEditCommand(g *Globals, add bool) *cobra.Command {
	o := &entitlementPoolEditOptions{g: g, add: add}
	cmd := &cobra.Command{
		Use:   "add-pool NAME POOL...",
		Short: "Associate pools with a global entitlement (idempotent)",
		Long: `Associates pools with the entitlement. Every pool is checked before anything
is written: it exists (exit 3 otherwise), belongs to no other entitlement,
and fits the entitlement: desktop and rds-desktop pools serve desktop
entitlements, application pools application ones; a dedicated entitlement
takes only dedicated desktop pools, a floating one only floating pools
(farm-backed pools are floating).`,
		Example: `  cpactl entitlement add-pool "Sales Desktop" in-desk1 in-desk2 uk-desk us-desk`,
		Args:    cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name, o.Pools = args[0], args[1:]
			return o.g.execute(o)
		},
	}
	if !add {
		cmd.Use = "remove-pool NAME POOL..."
		cmd.Short = "Remove pools from a global entitlement (idempotent)"
		cmd.Long = `Removes pools from the entitlement; pools that are not in it are reported
and left alone. A pool whose entry no longer exists can still be removed by
name.`
		cmd.Example = `  cpactl entitlement remove-pool "Sales Desktop" us-desk`
	}
	o.writeFlags.add(cmd)
	return cmd
}

func (o *entitlementPoolEditOptions) run() error {
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	ge, err := st.Entitlement(o.Name)
	if err != nil {
		return err
	}
	e := valueEdit{add: o.add, attr: ldapschema.AttrEntitlementPoolDN, unchangedIn: "already in it", unchangedOut: "not in it"}
	for _, name := range o.Pools {
		dn, label, err := o.check(st, ge, name)
		if err != nil {
			return err
		}
		e.offer(ge.PoolDNs, dn, label)
	}
	return e.write(o.g, st, o.DryRun, ge, plural(len(e.labels), "pool ", "pools ")+strings.Join(e.labels, ", "))
}

// valueEdit adds values to, or removes them from, one multi-valued
// attribute of an entitlement (its members or its pools).
type valueEdit struct {
	add  bool
	attr string
	// unchangedIn and unchangedOut say why nothing changes: the values are
	// all in already (add) or none is in (remove).
	unchangedIn, unchangedOut string

	values, labels []string // the DNs to write and how to name them
	skipped        []string
}

// offer takes one named value: it is written unless it is already in
// (add) or not in (remove) current, or was offered before. An empty dn is
// skipped.
func (e *valueEdit) offer(current []string, dn, label string) {
	if dn == "" || containsDN(current, dn) == e.add || containsDN(e.values, dn) {
		e.skipped = append(e.skipped, label)
		return
	}
	e.values = append(e.values, dn)
	e.labels = append(e.labels, label)
}

// write applies the edit in one modify and reports it: "added X to
// entitlement E", "removed X from entitlement E" or "unchanged".
func (e *valueEdit) write(g *Globals, st *directory.Store, dryRun bool, ge ldapschema.Entitlement, what string) error {
	if len(e.values) == 0 {
		g.report("entitlement %s: unchanged (%s: %s)", ge.Name, onOff(e.add, e.unchangedIn, e.unchangedOut),
			strings.Join(e.skipped, ", "))
		return nil
	}
	write, verb, done, prep := st.AddValues, "add", "added", "to"
	if !e.add {
		write, verb, done, prep = st.RemoveValues, "remove", "removed", "from"
	}
	line := fmt.Sprintf("%s %s entitlement %s", what, prep, ge.Name)
	if dryRun {
		g.report("would %s %s", verb, line)
		return nil
	}
	if err := write(ge.DN, e.attr, e.values...); err != nil {
		return err
	}
	g.report("%s %s", done, line)
	return nil
}

// check validates one pool argument. It returns the DN to add or remove,
// or "" when the pool is not in the entitlement (remove).
func (o *entitlementPoolEditOptions) check(st *directory.Store, ge ldapschema.Entitlement, name string) (dn, label string, err error) {
	if !o.add {
		for _, d := range ge.PoolDNs {
			if strings.EqualFold(ldapschema.NameOf(d), name) {
				return d, ldapschema.NameOf(d), nil
			}
		}
		if _, err := st.Pool(name); err != nil {
			return "", "", err
		}
		return "", name, nil
	}
	pool, err := st.Pool(name)
	if err != nil {
		return "", "", err
	}
	if containsDN(ge.PoolDNs, pool.DN) {
		return pool.DN, pool.Name, nil // already in: nothing to check
	}
	if err := rules.AddPoolFits(ge, pool); err != nil {
		return "", "", refused(err)
	}
	others, err := st.EntitlementsWithPool(pool.DN)
	if err != nil {
		return "", "", err
	}
	if err := rules.AddPoolOwner(ge, pool, others); err != nil {
		return "", "", refused(err)
	}
	return pool.DN, pool.Name, nil
}
