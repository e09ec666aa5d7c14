package commands

import (
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/output"
	"github.com/cpactl/cpactl/quote"
	"github.com/cpactl/cpactl/rules"
)

func newFarmCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "farm",
		Short: "Manage RDS farms: session limit and host-side logon thresholds",
		Long: `An RDS farm is a set of RDS hosts in one pod; it serves rds-desktop and
application pools of that pod (several pools may share a farm).

  --max-sessions-per-host N              0 = unlimited (counts as 150 for the
                                         SESSION load policy)
  --host-load-index-threshold N          0..100, 0 = off: a host at or above
                                         this load index refuses logons
  --host-connecting-session-threshold N  0..150, 0 = off: a host with this many
                                         connecting sessions refuses logons

The host-side thresholds only filter candidates; the broker's buckets use
the global pae-RDS* settings (cpactl settings).`,
	}
	return cmd
}

// FarmView is a farm as `farm list` and `farm show` print it (JSON
// contract).
type FarmView struct {
	Name                           string   `json:"name"`
	Pod                            string   `json:"pod"`
	Description                    string   `json:"description"`
	MaxSessionsPerHost             int      `json:"max_sessions_per_host"`
	HostLoadIndexThreshold         int      `json:"host_load_index_threshold"`
	HostConnectingSessionThreshold int      `json:"host_connecting_session_threshold"`
	Hosts                          []string `json:"hosts"` // in name order
	Pools                          []string `json:"pools"` // the pools it serves, in name order
}

// farmParts lists, for each farm (by normalized DN), its hosts and the
// pools it serves, in the order given: built once, O(hosts + pools), so
// listing farms is not farms × (hosts + pools).
type farmParts struct{ hosts, pools map[string][]string }

func farmIndex(hosts []ldapschema.Host, pools []ldapschema.Pool) farmParts {
	x := farmParts{hosts: map[string][]string{}, pools: map[string][]string{}}
	for _, h := range hosts {
		k := ldapschema.NormalizeDN(ldapschema.ParentOf(h.DN))
		x.hosts[k] = append(x.hosts[k], h.Name)
	}
	for _, p := range pools {
		if p.FarmDN != "" {
			k := ldapschema.NormalizeDN(p.FarmDN)
			x.pools[k] = append(x.pools[k], p.Name)
		}
	}
	return x
}

func farmView(f ldapschema.Farm, parts farmParts) FarmView {
	v := FarmView{Name: f.Name, Pod: f.Pod, Description: f.Description, MaxSessionsPerHost: f.MaxSessionsPerHost,
		HostLoadIndexThreshold: f.LoadIndexThreshold, HostConnectingSessionThreshold: f.ConnectingSessionThreshold,
		Hosts: []string{}, Pools: []string{}}
	k := ldapschema.NormalizeDN(f.DN)
	v.Hosts = append(v.Hosts, parts.hosts[k]...)
	v.Pools = append(v.Pools, parts.pools[k]...)
	return v
}

type farmListOptions struct {
	g *Globals
	listFlags
	Pod, Site string
}

func newFarmListCommand(g *Globals) *cobra.Command {
	o := &farmListOptions{g: g}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List RDS farms with their limits, hosts and pools",
		Example: `  cpactl farm list --pod us-pod1
  cpactl farm list --site London -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	cmd.Flags().StringVar(&o.Pod, "pod", "", "only the farms of this pod")
	cmd.Flags().StringVar(&o.Site, "site", "", "only the farms of this site's pods")
	o.listFlags.add(cmd, "farms", true)
	return cmd
}

func (o *farmListOptions) run() error {
	p, st, closeFn, sel, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	if err := inPodOrSite(st, &sel, o.Pod, o.Site); err != nil {
		return err
	}
	farms, err := st.SelectFarms(sel)
	if err != nil {
		return err
	}
	hosts, err := st.Hosts("")
	if err != nil {
		return err
	}
	pools, err := st.Pools()
	if err != nil {
		return err
	}
	parts := farmIndex(hosts, pools)
	views := make([]FarmView, 0, len(farms.Items))
	for _, f := range farms.Items {
		views = append(views, farmView(f, parts))
	}
	defer o.counted(o.g, p, len(views), farms.Total)
	return p.Print(views, func(w io.Writer) error {
		rows := make([][]string, 0, len(views))
		for _, v := range views {
			rows = append(rows, []string{v.Name, v.Pod, offOr(v.MaxSessionsPerHost, "unlimited"), offOr(v.HostLoadIndexThreshold, "off"),
				offOr(v.HostConnectingSessionThreshold, "off"), strconv.Itoa(len(v.Hosts)), joinOr(v.Pools, "-")})
		}
		return output.RowsWide(w, []string{"name", "pod", "max sessions/host", "load index threshold", "connecting threshold",
			"hosts", "pools"}, []bool{3: true, 4: true}, rows)
	})
}

type farmShowOptions struct {
	g *Globals
	readFlags
	Name string
}

func newFarmShowCommand(g *Globals) *cobra.Command {
	o := &farmShowOptions{g: g}
	cmd := &cobra.Command{
		Use:     "show NAME",
		Short:   "Print an RDS farm with its hosts and pools",
		Example: `  cpactl farm show us-farm1`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return o.g.execute(o)
		},
	}
	o.readFlags.add(cmd)
	return cmd
}

func (o *farmShowOptions) run() error {
	p, st, closeFn, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	farm, err := st.Farm(o.Name)
	if err != nil {
		return err
	}
	hosts, err := st.Hosts(farm.DN)
	if err != nil {
		return err
	}
	pools, err := st.PoolsOfFarm(farm.DN)
	if err != nil {
		return err
	}
	v := farmView(farm, farmIndex(hosts, pools))
	return p.Print(v, func(w io.Writer) error {
		return output.Fields(w, [][2]string{
			{"name", v.Name}, {"pod", v.Pod}, {"description", orDash(v.Description)},
			{"max sessions per host", offOr(v.MaxSessionsPerHost, "unlimited")},
			{"host load index threshold", offOr(v.HostLoadIndexThreshold, "off")},
			{"host connecting session threshold", offOr(v.HostConnectingSessionThreshold, "off")},
			{"hosts", joinOr(v.Hosts, "-")}, {"pools", joinOr(v.Pools, "-")},
		})
	})
}

// farmLimitFlags are the flags create and update share.
type farmLimitFlags struct {
	MaxSessions, LoadIndexThreshold, ConnectingThreshold int
	Description                                          string
	changed                                              func(string) bool
}

func (f *farmLimitFlags) add(cmd *cobra.Command) {
	cmd.Flags().IntVar(&f.MaxSessions, "max-sessions-per-host", 0, "session limit of each host, 0 = unlimited")
	cmd.Flags().IntVar(&f.LoadIndexThreshold, "host-load-index-threshold", 0, "0..100, 0 = off: load index at which a host refuses logons")
	cmd.Flags().IntVar(&f.ConnectingThreshold, "host-connecting-session-threshold", 0,
		"0..150, 0 = off: connecting sessions at which a host refuses logons")
	cmd.Flags().StringVar(&f.Description, "description", "", "what the farm is")
	f.changed = cmd.Flags().Changed
}

func (f *farmLimitFlags) apply(farm *ldapschema.Farm) error {
	if f.changed("max-sessions-per-host") {
		farm.MaxSessionsPerHost = f.MaxSessions
	}
	if f.changed("host-load-index-threshold") {
		farm.LoadIndexThreshold = f.LoadIndexThreshold
	}
	if f.changed("host-connecting-session-threshold") {
		farm.ConnectingSessionThreshold = f.ConnectingThreshold
	}
	if f.changed("description") {
		farm.Description = f.Description
	}
	return checkDescription(objkind.Farm, farm.Name, farm.Description)
}

type farmCreateOptions struct {
	g *Globals
	writeFlags
	farmLimitFlags
	Name string
	Pod  string
}

func newFarmCreateCommand(g *Globals) *cobra.Command {
	o := &farmCreateOptions{g: g}
	cmd := &cobra.Command{
		Use:   "create NAME --pod P [flags]",
		Short: "Create an RDS farm (idempotent: an identical farm is left unchanged)",
		Example: `  cpactl farm create us-farm1 --pod us-pod1 --max-sessions-per-host 40
  cpactl farm create in-farm --pod in-pod1 --host-load-index-threshold 90 --host-connecting-session-threshold 20`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return o.g.execute(o)
		},
	}
	cmd.Flags().StringVar(&o.Pod, "pod", "", "the pod of the farm (required)")
	o.farmLimitFlags.add(cmd)
	o.writeFlags.add(cmd)
	return cmd
}

func (o *farmCreateOptions) build() (ldapschema.Farm, error) {
	f := ldapschema.Farm{Name: o.Name, Pod: o.Pod}
	if err := checkName(objkind.Farm, o.Name, maxName); err != nil {
		return f, err
	}
	if o.Pod == "" {
		return f, errorf(fmt.Sprintf("cpactl farm create %s --pod POD", quote.Shell(o.Name)), "a farm needs a pod: pass --pod")
	}
	if err := o.apply(&f); err != nil {
		return f, err
	}
	return f, checkRules(o.g, objkind.Farm, o.Name, rules.Farm(f))
}

func (o *farmCreateOptions) run() error {
	want, err := o.build()
	if err != nil {
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
	want.Pod, want.DN = pod.Name, st.DIT.Farm(pod.Name, o.Name)
	return createOrUnchanged(o.g, st, o.DryRun, creation[ldapschema.Farm]{
		kind: objkind.Farm, name: o.Name, where: " in pod " + pod.Name, dn: want.DN, attrs: want.Attrs(),
		read: func() (ldapschema.Farm, error) { return st.Farm(o.Name) },
		other: func(existing ldapschema.Farm) error {
			if !ldapschema.EqualDN(existing.DN, want.DN) {
				return errorf("farm names are unique across the federation: pick another name",
					"farm %s exists in pod %s", existing.Name, existing.Pod)
			}
			return nil
		},
		stored:   func(f ldapschema.Farm) (string, ldapschema.Attrs) { return f.Name, f.Attrs() },
		compared: ldapschema.FarmManaged,
		check:    func() error { return checkFreeSlot(st, want.DN, objkind.Farm, o.Name, "pod "+pod.Name) },
	})
}

type farmUpdateOptions struct {
	g *Globals
	writeFlags
	farmLimitFlags
	Name string
}

func newFarmUpdateCommand(g *Globals) *cobra.Command {
	o := &farmUpdateOptions{g: g}
	cmd := &cobra.Command{
		Use:     "update NAME [flags]",
		Short:   "Change an RDS farm's session limit, host-side thresholds or description",
		Example: `  cpactl farm update us-farm1 --host-load-index-threshold 0   # off`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return o.g.execute(o)
		},
	}
	o.farmLimitFlags.add(cmd)
	o.writeFlags.add(cmd)
	return cmd
}

func (o *farmUpdateOptions) run() error {
	if !anyChanged(o.changed, "max-sessions-per-host", "host-load-index-threshold", "host-connecting-session-threshold", "description") {
		return errorf("pass --max-sessions-per-host, --host-load-index-threshold, --host-connecting-session-threshold or --description",
			"nothing to update for farm %s", o.Name)
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	return updateOne(o.g, st, o.DryRun, modification[ldapschema.Farm]{
		kind: objkind.Farm, managed: ldapschema.FarmManaged,
		read: func() (ldapschema.Farm, error) { return st.Farm(o.Name) },
		apply: func(farm ldapschema.Farm, next *ldapschema.Farm) error {
			if err := o.apply(next); err != nil {
				return err
			}
			return checkRules(o.g, objkind.Farm, farm.Name, rules.Farm(*next))
		},
		name:  func(f ldapschema.Farm) string { return f.Name },
		dn:    func(f ldapschema.Farm) string { return f.DN },
		attrs: ldapschema.Farm.Attrs,
	})
}

func newFarmDeleteCommand(g *Globals) *cobra.Command {
	return newNamedDeleteCommand(g, namedDelete{
		kind:  objkind.Farm,
		short: "Delete an RDS farm; refused while it has hosts or serves pools (see --force)",
		long: `Deletes an RDS farm. While it has hosts or serves pools the delete is refused
and they are listed; with --force its hosts and the pools it serves go too
(the pools leave their entitlements, sessions lose their pool and host), in
one LDAP transaction.

On a terminal cpactl asks for confirmation; elsewhere pass --yes.`,
		example: `  cpactl farm delete lab-farm --yes
  cpactl farm delete us-farm1 --force --dry-run`,
		force: "also delete its hosts and the pools it serves, in the same transaction",
		hint: func(string) string {
			return "delete its hosts and pools first, or pass --force to delete them in the same transaction"
		},
	})
}
