package commands

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/output"
	"github.com/cpactl/cpactl/quote"
	"github.com/cpactl/cpactl/rules"
)

func newPoolCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pool",
		Short: "Manage desktop pools and farm-backed (RDS desktop and application) pools",
		Long: `A pool lives in one pod. Desktop pools (--kind desktop) are virtual machines,
dedicated or floating, with a capacity and the figures the broker reads:
sessions in use and, for dedicated pools, machines already assigned. RDS
desktop and application pools (--kind rds-desktop, --kind application) are
served by an RDS farm of the same pod; their figures come from the farm's
hosts. Pool names are unique across the federation.`,
	}
	return cmd
}

// PoolView is a pool as `pool list` and `pool show` print it (JSON
// contract). Figures that do not apply to the pool's kind are null.
type PoolView struct {
	Name         string   `json:"name"`
	Pod          string   `json:"pod"`
	Kind         string   `json:"kind"`      // DESKTOP, RDS_DESKTOP or APPLICATION
	Dedicated    *bool    `json:"dedicated"` // desktop pools
	Capacity     *int     `json:"capacity"`  // desktop pools
	Sessions     *int     `json:"sessions"`  // desktop pools
	Assigned     *int     `json:"assigned"`  // dedicated desktop pools
	Farm         *string  `json:"farm"`      // farm-backed pools
	Enabled      bool     `json:"enabled"`
	Description  string   `json:"description"`
	Entitlements []string `json:"entitlements"` // the GE holding it (lint reports more than one)
}

// entitlementsByPool lists, for each pool (by normalized DN), the names of
// the entitlements that hold it, in the order given: built once,
// O(entitlements' pools), so listing pools is not pools × entitlements.
type entitlementsByPool map[string][]string

func poolIndex(ges []ldapschema.Entitlement) entitlementsByPool {
	idx := entitlementsByPool{}
	for _, ge := range ges {
		seen := map[string]bool{}
		for _, dn := range ge.PoolDNs {
			if k := ldapschema.NormalizeDN(dn); dn != "" && !seen[k] {
				seen[k] = true
				idx[k] = append(idx[k], ge.Name)
			}
		}
	}
	return idx
}

func poolView(p ldapschema.Pool, ges entitlementsByPool) PoolView {
	v := PoolView{Name: p.Name, Pod: p.Pod, Kind: p.Kind, Enabled: p.Enabled, Description: p.Description,
		Entitlements: []string{}}
	if p.Kind == ldapschema.KindDesktop {
		d, c, s := p.Dedicated, p.Capacity, p.Sessions
		v.Dedicated, v.Capacity, v.Sessions = &d, &c, &s
		if p.Dedicated {
			a := p.Assigned
			v.Assigned = &a
		}
	} else {
		f := p.Farm
		v.Farm = &f
	}
	v.Entitlements = append(v.Entitlements, ges[ldapschema.NormalizeDN(p.DN)]...)
	return v
}

type poolListOptions struct {
	g *Globals
	listFlags
	Pod, Site string
}

func newPoolListCommand(g *Globals) *cobra.Command {
	o := &poolListOptions{g: g}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List pools with their pod, kind, figures and entitlement",
		Example: `  cpactl pool list
  cpactl pool list --site London --name '*-rds'
  cpactl pool list --pod uk-pod1 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	cmd.Flags().StringVar(&o.Pod, "pod", "", "only the pools of this pod")
	cmd.Flags().StringVar(&o.Site, "site", "", "only the pools of this site's pods")
	o.listFlags.add(cmd, "pools", true)
	return cmd
}

func (o *poolListOptions) run() error {
	p, st, closeFn, sel, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	if err := inPodOrSite(st, &sel, o.Pod, o.Site); err != nil {
		return err
	}
	pools, err := st.SelectPools(sel)
	if err != nil {
		return err
	}
	ges, err := st.Entitlements()
	if err != nil {
		return err
	}
	byPool := poolIndex(ges)
	views := make([]PoolView, 0, len(pools.Items))
	for _, pl := range pools.Items {
		views = append(views, poolView(pl, byPool))
	}
	defer o.counted(o.g, p, len(views), pools.Total)
	return p.Print(views, func(w io.Writer) error {
		rows := make([][]string, 0, len(views))
		for _, v := range views {
			rows = append(rows, []string{v.Name, v.Pod, kindWord(v.Kind), assignmentWord(v.Dedicated), intOrDash(v.Capacity),
				intOrDash(v.Sessions), intOrDash(v.Assigned), strOrDash(v.Farm), yesNo(v.Enabled), joinOr(v.Entitlements, "-")})
		}
		return output.RowsWide(w, []string{"name", "pod", "kind", "assignment", "capacity", "sessions", "assigned", "farm",
			"enabled", "entitlement"}, []bool{6: true, 7: true}, rows)
	})
}

type poolShowOptions struct {
	g *Globals
	readFlags
	Name string
}

func newPoolShowCommand(g *Globals) *cobra.Command {
	o := &poolShowOptions{g: g}
	cmd := &cobra.Command{
		Use:     "show NAME",
		Short:   "Print a pool",
		Example: `  cpactl pool show uk-desk -o json`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return o.g.execute(o)
		},
	}
	o.readFlags.add(cmd)
	return cmd
}

func (o *poolShowOptions) run() error {
	p, st, closeFn, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	pool, err := st.Pool(o.Name)
	if err != nil {
		return err
	}
	ges, err := st.EntitlementsWithPool(pool.DN)
	if err != nil {
		return err
	}
	v := poolView(pool, poolIndex(ges))
	return p.Print(v, func(w io.Writer) error {
		return output.Fields(w, [][2]string{
			{"name", v.Name}, {"pod", v.Pod}, {"kind", kindWord(v.Kind)}, {"user assignment", assignmentWord(v.Dedicated)},
			{"capacity", intOrDash(v.Capacity)}, {"sessions", intOrDash(v.Sessions)}, {"assigned", intOrDash(v.Assigned)},
			{"farm", strOrDash(v.Farm)}, {"enabled", yesNo(v.Enabled)}, {"description", orDash(v.Description)},
			{"entitlement", joinOr(v.Entitlements, "-")},
		})
	})
}

// poolFigureFlags are the flags create and update share.
type poolFigureFlags struct {
	Capacity, Sessions, Assigned int
	Farm, Description            string
	AllowOvercommit              bool
	enabled                      *toggle
	changed                      func(string) bool
}

func (f *poolFigureFlags) add(cmd *cobra.Command) {
	cmd.Flags().IntVar(&f.Capacity, "capacity", 0, "machines in a desktop pool")
	cmd.Flags().IntVar(&f.Sessions, "sessions", 0, "sessions in use in a desktop pool")
	cmd.Flags().IntVar(&f.Assigned, "assigned", 0, "machines already assigned in a dedicated desktop pool")
	cmd.Flags().StringVar(&f.Farm, "farm", "", "the RDS farm (of the same pod) serving an rds-desktop or application pool")
	cmd.Flags().StringVar(&f.Description, "description", "", "what the pool is")
	f.enabled = addToggle(cmd, "enabled", "disabled", "whether the pool takes sessions (default enabled)")
	cmd.Flags().BoolVar(&f.AllowOvercommit, "allow-overcommit", false,
		"accept --sessions or --assigned above --capacity (resolve treats such a pool as full; lint reports it)")
	f.changed = cmd.Flags().Changed
}

// checkOvercommit refuses counters above the capacity unless
// --allow-overcommit.
func (f *poolFigureFlags) checkOvercommit(g *Globals, p ldapschema.Pool) error {
	v, err := rules.PoolCapacity(p, f.AllowOvercommit)
	if v != nil {
		g.warn("pool %s: %s (--allow-overcommit)", p.Name, v.Message)
	}
	return refused(err)
}

// apply sets the given figures on p, refusing those that do not fit its
// kind.
func (f *poolFigureFlags) apply(p *ldapschema.Pool) error {
	if err := rules.PoolFigures(*p, f.changed); err != nil {
		return refused(err)
	}
	if f.changed("capacity") {
		p.Capacity = f.Capacity
	}
	if f.changed("sessions") {
		p.Sessions = f.Sessions
	}
	if f.changed("assigned") {
		p.Assigned = f.Assigned
	}
	if f.changed("description") {
		p.Description = f.Description
	}
	f.enabled.apply(&p.Enabled)
	return checkDescription(objkind.Pool, p.Name, p.Description)
}

// bindFarm points a farm-backed pool at the farm --farm names, which must
// exist and be in the pool's pod.
func (f *poolFigureFlags) bindFarm(st *directory.Store, p *ldapschema.Pool) error {
	if !f.changed("farm") {
		return nil
	}
	farm, err := st.Farm(f.Farm)
	if err != nil {
		return err
	}
	if v := rules.FarmFits(*p, farm); v != nil {
		return errorf(v.Hint, "pool %s: %s", p.Name, v.Message)
	}
	p.FarmDN, p.Farm = farm.DN, farm.Name
	return nil
}

type poolCreateOptions struct {
	g *Globals
	writeFlags
	poolFigureFlags
	Name      string
	Pod       string
	Kind      string
	Dedicated bool
	Floating  bool
}

func newPoolCreateCommand(g *Globals) *cobra.Command {
	o := &poolCreateOptions{g: g}
	cmd := &cobra.Command{
		Use:   "create NAME --pod P --kind desktop|rds-desktop|application [flags]",
		Short: "Create a pool (idempotent: an identical pool is left unchanged)",
		Long: `Creates a pool in a pod. A desktop pool needs --dedicated or --floating
(never changed afterwards) and takes --capacity, --sessions and, when
dedicated, --assigned. An rds-desktop or application pool needs --farm, a
farm of the same pod. Pools start enabled (--disabled to start them off).`,
		Example: `  cpactl pool create uk-desk --pod uk-pod1 --kind desktop --floating --capacity 50 --sessions 12
  cpactl pool create in-ded --pod in-pod1 --kind desktop --dedicated --capacity 20 --assigned 20
  cpactl pool create office --pod us-pod1 --kind application --farm us-farm1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			if err := o.enabled.resolve(cmd); err != nil {
				return err
			}
			return o.g.execute(o)
		},
	}
	cmd.Flags().StringVar(&o.Pod, "pod", "", "the pod of the pool (required)")
	cmd.Flags().StringVar(&o.Kind, "kind", "", "desktop, rds-desktop or application (required)")
	cmd.Flags().BoolVar(&o.Dedicated, "dedicated", false, "a desktop pool of dedicated machines")
	cmd.Flags().BoolVar(&o.Floating, "floating", false, "a desktop pool of floating machines")
	o.poolFigureFlags.add(cmd)
	o.writeFlags.add(cmd)
	return cmd
}

// parseKind maps --kind to the stored kind.
func parseKind(s string) (string, error) {
	for _, k := range poolKinds {
		if v := strings.TrimSpace(s); strings.EqualFold(v, kindWord(k)) || strings.EqualFold(v, k) {
			return k, nil
		}
	}
	return "", errorf("pass --kind desktop, --kind rds-desktop or --kind application",
		"--kind %q is not one of desktop, rds-desktop, application", s)
}

// build validates the flags (no I/O) and returns the pool to write,
// without its farm.
func (o *poolCreateOptions) build() (ldapschema.Pool, error) {
	p := ldapschema.Pool{Name: o.Name, Enabled: true}
	if err := checkName(objkind.Pool, o.Name, maxName); err != nil {
		return p, err
	}
	if o.Pod == "" {
		return p, errorf(fmt.Sprintf("cpactl pool create %s --pod POD --kind KIND", quote.Shell(o.Name)), "a pool needs a pod: pass --pod")
	}
	if o.Kind == "" {
		return p, errorf("pass --kind desktop, --kind rds-desktop or --kind application", "pool %s needs --kind", o.Name)
	}
	kind, err := parseKind(o.Kind)
	if err != nil {
		return p, err
	}
	p.Kind, p.Pod = kind, o.Pod
	if err := rules.PoolKind(p, o.Dedicated, o.Floating, o.changed("farm")); err != nil {
		return p, refused(err)
	}
	p.Dedicated = o.Dedicated
	if err := o.apply(&p); err != nil {
		return p, err
	}
	if err := checkRules(o.g, objkind.Pool, o.Name, rules.Pool(p)); err != nil {
		return p, err
	}
	return p, o.checkOvercommit(o.g, p)
}

func (o *poolCreateOptions) run() error {
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
	want.Pod, want.DN = pod.Name, st.DIT.Pool(pod.Name, o.Name)
	if err := o.bindFarm(st, &want); err != nil {
		return err
	}
	return createOrUnchanged(o.g, st, o.DryRun, creation[ldapschema.Pool]{
		kind: objkind.Pool, name: o.Name, where: " in pod " + pod.Name, dn: want.DN, attrs: want.Attrs(),
		read: func() (ldapschema.Pool, error) { return st.Pool(o.Name) },
		other: func(existing ldapschema.Pool) error {
			switch {
			case !ldapschema.EqualDN(existing.DN, want.DN):
				return errorf("pool names are unique across the federation: pick another name",
					"pool %s exists in pod %s", existing.Name, existing.Pod)
			case existing.Kind != want.Kind:
				return errorf(fmt.Sprintf("use `cpactl pool update %s` to change it", quote.Shell(existing.Name)),
					"pool %s exists with a different kind (%s)", existing.Name, kindWord(existing.Kind))
			}
			return nil
		},
		// The configuration decides; the live counters (sessions,
		// assigned), which a feed moves, are left as they are.
		stored:   func(p ldapschema.Pool) (string, ldapschema.Attrs) { return p.Name, p.Attrs() },
		compared: ldapschema.PoolManaged, counters: ldapschema.PoolCounters,
		check: func() error { return checkFreeSlot(st, want.DN, objkind.Pool, o.Name, "pod "+pod.Name) },
	})
}

type poolUpdateOptions struct {
	g *Globals
	writeFlags
	poolFigureFlags
	Name string
}

func newPoolUpdateCommand(g *Globals) *cobra.Command {
	o := &poolUpdateOptions{g: g}
	cmd := &cobra.Command{
		Use:   "update NAME [flags]",
		Short: "Change a pool's figures, farm, description or state (only the flags given)",
		Long: `Changes what the flags name. A pool's pod, kind and dedicated/floating
assignment are fixed; delete and create the pool to change them.`,
		Example: `  cpactl pool update uk-desk --sessions 50      # full
  cpactl pool update in-desk1 --disabled
  cpactl pool update office --farm us-farm2`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			if err := o.enabled.resolve(cmd); err != nil {
				return err
			}
			return o.g.execute(o)
		},
	}
	o.poolFigureFlags.add(cmd)
	o.writeFlags.add(cmd)
	return cmd
}

func (o *poolUpdateOptions) run() error {
	if !o.enabled.set() && !anyChanged(o.changed, "capacity", "sessions", "assigned", "farm", "description") {
		return errorf("pass --capacity, --sessions, --assigned, --farm, --description, --enabled or --disabled",
			"nothing to update for pool %s", o.Name)
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	return updateOne(o.g, st, o.DryRun, modification[ldapschema.Pool]{
		kind: objkind.Pool, managed: ldapschema.PoolManaged,
		read: func() (ldapschema.Pool, error) { return st.Pool(o.Name) },
		apply: func(pool ldapschema.Pool, next *ldapschema.Pool) error {
			if err := o.apply(next); err != nil {
				return err
			}
			if err := checkRules(o.g, objkind.Pool, pool.Name, rules.Pool(*next)); err != nil {
				return err
			}
			if err := o.checkOvercommit(o.g, *next); err != nil {
				return err
			}
			return o.bindFarm(st, next)
		},
		name:  func(p ldapschema.Pool) string { return p.Name },
		dn:    func(p ldapschema.Pool) string { return p.DN },
		attrs: ldapschema.Pool.Attrs,
	})
}

func newPoolDeleteCommand(g *Globals) *cobra.Command {
	return newNamedDeleteCommand(g, namedDelete{
		kind:  objkind.Pool,
		short: "Delete a pool; refused while an entitlement or session refers to it (see --force)",
		long: `Deletes a pool. While an entitlement holds it or session records name it,
the delete is refused and they are listed; with --force the pool leaves the
entitlement and the sessions lose their pool, in one LDAP transaction.

On a terminal cpactl asks for confirmation; elsewhere pass --yes.`,
		example: `  cpactl pool delete old-desk --yes
  cpactl pool delete uk-desk --force --dry-run`,
		force: "also remove the pool from its entitlement and from session records, in the same transaction",
		hint: func(string) string {
			return "remove it from its entitlement first (cpactl entitlement remove-pool), or pass --force"
		},
	})
}
