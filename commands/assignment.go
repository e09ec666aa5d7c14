package commands

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/output"
	"github.com/cpactl/cpactl/quote"
	"github.com/cpactl/cpactl/rules"
)

func newAssignmentCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "assignment",
		Short: "Set, list and delete pod assignments of dedicated entitlements",
		Long: `A pod assignment records where a user of a dedicated desktop entitlement got
a machine on first allocation: later connections go straight to that pod
(and machine), whatever the entitlement's scope. There is one assignment
per user and entitlement; setting it again replaces it.`,
	}
	return cmd
}

// AssignmentView is a pod assignment as `assignment list` prints it (JSON
// contract).
type AssignmentView struct {
	User        string `json:"user"`
	Entitlement string `json:"entitlement"`
	Pod         string `json:"pod"`
	Machine     string `json:"machine"`
}

func assignmentView(a ldapschema.Assignment) AssignmentView {
	return AssignmentView{User: ldapschema.NameOf(a.UserDN), Entitlement: ldapschema.NameOf(a.EntitlementDN),
		Pod: ldapschema.NameOf(a.PodDN), Machine: a.Machine}
}

type assignmentListOptions struct {
	g *Globals
	listFlags
	User, Entitlement string
}

func newAssignmentListCommand(g *Globals) *cobra.Command {
	o := &assignmentListOptions{g: g}
	cmd := &cobra.Command{
		Use:   "list [--user U] [--entitlement E]",
		Short: "List pod assignments",
		Example: `  cpactl assignment list --entitlement "Engineering Workstations"
  cpactl assignment list --user carol -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	cmd.Flags().StringVar(&o.User, "user", "", "only this user's assignments")
	cmd.Flags().StringVar(&o.Entitlement, "entitlement", "", "only the assignments of this entitlement")
	o.listFlags.add(cmd, "assignments", false)
	return cmd
}

func (o *assignmentListOptions) run() error {
	p, st, closeFn, _, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	filter, missing, err := recordFilter(st, o.User, o.Entitlement, "")
	if err != nil {
		return err
	}
	rows, err := st.Assignments(filter)
	if err != nil {
		return err
	}
	if err := o.g.leftBehind(missing, len(rows)); err != nil {
		return err
	}
	views := make([]AssignmentView, 0, len(rows))
	for _, a := range rows {
		views = append(views, assignmentView(a))
	}
	sortBy(views, func(v AssignmentView) string { return v.User + "\x00" + v.Entitlement })
	views, total := cut(views, o.Limit)
	defer o.counted(o.g, p, len(views), total)
	return p.Print(views, func(w io.Writer) error {
		table := make([][]string, 0, len(views))
		for _, v := range views {
			table = append(table, []string{v.User, v.Entitlement, v.Pod, orDash(v.Machine)})
		}
		return output.Rows(w, []string{"user", "entitlement", "pod", "machine"}, table)
	})
}

type assignmentSetOptions struct {
	g *Globals
	writeFlags
	User, Entitlement, Pod, Machine string
}

func newAssignmentSetCommand(g *Globals) *cobra.Command {
	o := &assignmentSetOptions{g: g}
	cmd := &cobra.Command{
		Use:   "set --user U --entitlement E --pod P [--machine M]",
		Short: "Set a user's pod assignment for a dedicated entitlement (idempotent)",
		Long: `Sets where a dedicated entitlement's user has a machine. The entitlement must
be a dedicated desktop entitlement; setting the same assignment again
prints "unchanged", a different pod or machine replaces it.`,
		Example: `  cpactl assignment set --user carol --entitlement "Engineering Workstations" --pod uk-pod1 --machine ENG-UK-017`,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	cmd.Flags().StringVar(&o.User, "user", "", "the user (required)")
	cmd.Flags().StringVar(&o.Entitlement, "entitlement", "", "the dedicated desktop entitlement (required)")
	cmd.Flags().StringVar(&o.Pod, "pod", "", "the pod holding the user's machine (required)")
	cmd.Flags().StringVar(&o.Machine, "machine", "", "the machine's name, when known")
	o.writeFlags.add(cmd)
	return cmd
}

func (o *assignmentSetOptions) run() error {
	if o.User == "" || o.Entitlement == "" || o.Pod == "" {
		return errorf("pass --user, --entitlement and --pod", "an assignment names its user, entitlement and pod")
	}
	if o.Machine != "" {
		if err := checkName("machine", o.Machine, maxName); err != nil {
			return err
		}
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	user, err := st.User(o.User)
	if err != nil {
		return err
	}
	ge, err := st.Entitlement(o.Entitlement)
	if err != nil {
		return err
	}
	if err := rules.AssignmentEntitlement(ge); err != nil {
		return refused(err)
	}
	pod, err := st.Pod(o.Pod)
	if err != nil {
		return err
	}
	inPod := false
	for _, dn := range ge.PoolDNs {
		inPod = inPod || ldapschema.EqualDN(ldapschema.ParentOf(dn), pod.DN)
	}
	if !inPod {
		o.g.warn("entitlement %s has no pool in pod %s: resolve still sends the user there", ge.Name, pod.Name)
	}
	a := ldapschema.Assignment{DN: st.DIT.Assignment(user.DN, ge.DN), UserDN: user.DN, EntitlementDN: ge.DN, PodDN: pod.DN,
		Machine: o.Machine}
	what := fmt.Sprintf("assignment of user %s for entitlement %s", user.UID, ge.Name)
	e, err := st.Entry(a.DN)
	if err != nil {
		return err
	}
	if e != nil {
		old, err := ldapschema.AssignmentFromEntry(e)
		if err != nil {
			return err
		}
		kind, name := "assignment of user", user.UID+" for entitlement "+ge.Name
		return applyPlan(o.g, st, planUpdate(kind, name, a.DN, a.Attrs().Changes(old.Attrs(), ldapschema.AssignmentManaged...), nil),
			o.DryRun, kind+" "+name)
	}
	if o.DryRun {
		o.g.report("would set %s to pod %s", what, pod.Name)
		return nil
	}
	if err := st.Add(st.Client, a.DN, a.Attrs()); err != nil {
		return existsHint(err, "assignment", user.UID)
	}
	o.g.report("set %s to pod %s", what, pod.Name)
	return nil
}

func newAssignmentDeleteCommand(g *Globals) *cobra.Command {
	var user, entitlement string
	return newNamedDeleteCommand(g, namedDelete{
		kind:  objkind.Assignment,
		use:   "delete --user U --entitlement E",
		short: "Delete a user's pod assignment (the next connection searches again)",
		long: `Deletes the pod assignment of a user for a dedicated entitlement. An
assignment left behind by a deleted user or entitlement can still be deleted
by name. On a terminal cpactl asks for confirmation; elsewhere pass --yes.`,
		example: `  cpactl assignment delete --user carol --entitlement "Engineering Workstations" --yes`,
		flags: func(cmd *cobra.Command) func() error {
			cmd.Flags().StringVar(&user, "user", "", "the user (required)")
			cmd.Flags().StringVar(&entitlement, "entitlement", "", "the entitlement (required)")
			return func() error {
				if user == "" || entitlement == "" {
					return errorf("pass --user and --entitlement", "name the assignment to delete")
				}
				return nil
			}
		},
		hint: func(string) string {
			return fmt.Sprintf("cpactl assignment delete --user %s --entitlement %s --yes", quote.Shell(user), quote.Shell(entitlement))
		},
		// A user or entitlement deleted by another tool: its assignment can
		// still be deleted by the name it had.
		lookup: func(st *directory.Store, _ string) (string, string, error) {
			udn, _, err := userDN(st, user)
			if err != nil {
				return "", "", err
			}
			gdn, _, err := entitlementDN(st, entitlement)
			if err != nil {
				return "", "", err
			}
			dn := st.DIT.Assignment(udn, gdn)
			e, err := st.Entry(dn, "1.1")
			if err != nil {
				return "", "", err
			}
			if e == nil {
				return "", "", &ldapclient.NotFoundError{Kind: "assignment of user " + ldapschema.NameOf(udn) + " for entitlement",
					Name: ldapschema.NameOf(gdn)}
			}
			return fmt.Sprintf("of user %s for entitlement %s", ldapschema.NameOf(udn), ldapschema.NameOf(gdn)), dn, nil
		},
	})
}
