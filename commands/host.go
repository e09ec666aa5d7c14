package commands

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/output"
	"github.com/cpactl/cpactl/quote"
	"github.com/cpactl/cpactl/rules"
)

func newHostCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "host",
		Short: "Manage RDS hosts and feed their live figures (set-load)",
		Long: `An RDS host belongs to one farm. The broker reads its load index (-1..100,
-1 = load balancing disabled on the host), its sessions and its connecting
sessions, which a feed keeps current with ` + "`cpactl host set-load`" + `. Its
features (multisession, unauthenticated, rdp, pcoip, blast; all five by
default) decide which requests it can serve and whether it may join bucket
1. Host names are unique across the federation.`,
	}
	return cmd
}

// HostView is an RDS host as `host list` and `host show` print it (JSON
// contract).
type HostView struct {
	Name        string   `json:"name"`
	Farm        string   `json:"farm"`
	Pod         string   `json:"pod"`
	LoadIndex   int      `json:"load_index"`
	Sessions    int      `json:"sessions"`
	Connecting  int      `json:"connecting"`
	Features    []string `json:"features"` // MULTISESSION, UNAUTHENTICATED, RDP, PCOIP, BLAST
	Enabled     bool     `json:"enabled"`
	Description string   `json:"description"`
	// HostThresholds are the host-side thresholds in force with their
	// sources (`host show` only), given when the host's policy (ADMX)
	// sets one; absent, the farm's apply (`farm show`).
	HostThresholds *broker.HostThresholds `json:"host_thresholds,omitempty"`
}

func hostView(h ldapschema.Host) HostView {
	return HostView{Name: h.Name, Farm: h.Farm, Pod: h.Pod, LoadIndex: h.LoadIndex, Sessions: h.Sessions,
		Connecting: h.Connecting, Features: orEmpty(h.Features), Enabled: h.Enabled, Description: h.Description}
}

type hostListOptions struct {
	g *Globals
	listFlags
	Farm, Pod, Site string
}

func newHostListCommand(g *Globals) *cobra.Command {
	o := &hostListOptions{g: g}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List RDS hosts with their live figures",
		Example: `  cpactl host list --farm us-farm1
  cpactl host list --pod us-pod1 --name 'rdsh-0?' -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	cmd.Flags().StringVar(&o.Farm, "farm", "", "only the hosts of this farm")
	cmd.Flags().StringVar(&o.Pod, "pod", "", "only the hosts of this pod's farms")
	cmd.Flags().StringVar(&o.Site, "site", "", "only the hosts of this site's pods")
	o.listFlags.add(cmd, "RDS hosts", true)
	return cmd
}

func (o *hostListOptions) run() error {
	p, st, closeFn, sel, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	if err := inPodOrSite(st, &sel, o.Pod, o.Site); err != nil {
		return err
	}
	if o.Farm != "" {
		farm, err := st.Farm(o.Farm)
		if err != nil {
			return err
		}
		if o.Pod != "" && !strings.EqualFold(farm.Pod, o.Pod) {
			return errorf("pass one of them, or a farm of that pod (`cpactl farm list --pod "+quote.Shell(o.Pod)+"`)",
				"farm %s is not in pod %s (it is in %s)", farm.Name, o.Pod, farm.Pod)
		}
		if o.Site != "" && !sel.Keep(ldapschema.NormalizeDN(farm.DN)) {
			return errorf("pass one of them, or a farm of that site (`cpactl farm list --site "+quote.Shell(o.Site)+"`)",
				"farm %s is not in a pod of site %s (it is in pod %s)", farm.Name, o.Site, farm.Pod)
		}
		sel.Under = farm.DN
	}
	hosts, err := st.SelectHosts(sel)
	if err != nil {
		return err
	}
	views := make([]HostView, 0, len(hosts.Items))
	for _, h := range hosts.Items {
		views = append(views, hostView(h))
	}
	defer o.counted(o.g, p, len(views), hosts.Total)
	return p.Print(views, func(w io.Writer) error {
		rows := make([][]string, 0, len(views))
		for _, v := range views {
			rows = append(rows, []string{v.Name, v.Farm, v.Pod, strconv.Itoa(v.LoadIndex), strconv.Itoa(v.Sessions),
				strconv.Itoa(v.Connecting), featureWords(v.Features), yesNo(v.Enabled)})
		}
		return output.RowsWide(w, []string{"name", "farm", "pod", "load index", "sessions", "connecting", "features", "enabled"},
			[]bool{6: true}, rows)
	})
}

type hostShowOptions struct {
	g *Globals
	readFlags
	Name string
}

func newHostShowCommand(g *Globals) *cobra.Command {
	o := &hostShowOptions{g: g}
	cmd := &cobra.Command{
		Use:     "show NAME",
		Short:   "Print an RDS host",
		Example: `  cpactl host show rds-us-01 -o json`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return o.g.execute(o)
		},
	}
	o.readFlags.add(cmd)
	return cmd
}

func (o *hostShowOptions) run() error {
	p, st, closeFn, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	h, err := st.Host(o.Name)
	if err != nil {
		return err
	}
	farm, err := st.Farm(h.Farm)
	if err != nil {
		return err
	}
	v := hostView(h)
	bh, bf := directory.BrokerHost(h), directory.BrokerFarm(farm)
	inForce := broker.HostThresholdsInForce(bf, bh)
	if h.PolicyLoadIndexThreshold != nil || h.PolicyConnectingSessionThreshold != nil {
		v.HostThresholds = &inForce
	}
	return p.Print(v, func(w io.Writer) error {
		return output.Fields(w, [][2]string{
			{"name", v.Name}, {"farm", v.Farm}, {"pod", v.Pod}, {"load index", strconv.Itoa(v.LoadIndex)},
			{"sessions", strconv.Itoa(v.Sessions)}, {"connecting", strconv.Itoa(v.Connecting)},
			{"features", featureWords(v.Features)}, {"enabled", yesNo(v.Enabled)}, {"description", orDash(v.Description)},
			{"load index threshold", fmt.Sprintf("%s (%s)", offOr(inForce.LoadIndexThreshold, "off"), inForce.LoadIndexSource)},
			{"connecting session threshold", fmt.Sprintf("%s (%s)", offOr(inForce.ConnectingSessionThreshold, "off"), inForce.ConnectingSessionSource)},
		})
	})
}

// hostFigureFlags are the flags create, update and set-load share.
type hostFigureFlags struct {
	LoadIndex, Sessions, Connecting int
	Features                        []string
	Description                     string
	AllowOvercommit                 bool
	enabled                         *toggle
	changed                         func(string) bool
}

func (f *hostFigureFlags) add(cmd *cobra.Command, figuresOnly bool) {
	cmd.Flags().IntVar(&f.LoadIndex, "load-index", 0, "the host's load index, -1..100 (-1 = load balancing disabled on the host)")
	cmd.Flags().IntVar(&f.Sessions, "sessions", 0, "sessions on the host")
	cmd.Flags().IntVar(&f.Connecting, "connecting", 0, "sessions connecting to the host")
	cmd.Flags().BoolVar(&f.AllowOvercommit, "allow-overcommit", false,
		"accept --sessions above the farm's limit per host (the host then takes no new session; lint reports it)")
	f.changed = cmd.Flags().Changed
	if figuresOnly {
		return
	}
	csvListVar(cmd.Flags(), &f.Features, "features",
		"supported features: multisession,unauthenticated,rdp,pcoip,blast (default: all five)")
	cmd.Flags().StringVar(&f.Description, "description", "", "what the host is")
	f.enabled = addToggle(cmd, "enabled", "disabled", "whether the host takes sessions (default enabled)")
}

// checkOvercommit refuses sessions above the farm's limit per host unless
// --allow-overcommit.
func (f *hostFigureFlags) checkOvercommit(g *Globals, h ldapschema.Host, farm ldapschema.Farm) error {
	v, err := rules.HostCapacity(h, farm, f.AllowOvercommit)
	if v != nil {
		g.warn("rds host %s: %s (--allow-overcommit)", h.Name, v.Message)
	}
	return refused(err)
}

// parseFeatures validates --features and returns them in the canonical
// order of ldapschema.AllFeatures.
func parseFeatures(values []string) ([]string, error) {
	given := map[string]bool{}
	for _, v := range cleanList(values) {
		f := strings.ToUpper(v)
		if !slices.Contains(ldapschema.AllFeatures, f) {
			return nil, errorf("pass --features with some of multisession, unauthenticated, rdp, pcoip, blast",
				"unknown host feature %q", v)
		}
		given[f] = true
	}
	if len(given) == 0 {
		return nil, errorf("name at least one feature, e.g. --features rdp,blast", "--features is empty")
	}
	var out []string
	for _, f := range ldapschema.AllFeatures {
		if given[f] {
			out = append(out, f)
		}
	}
	return out, nil
}

func (f *hostFigureFlags) apply(h *ldapschema.Host) error {
	if f.changed("load-index") {
		h.LoadIndex = f.LoadIndex
	}
	if f.changed("sessions") {
		h.Sessions = f.Sessions
	}
	if f.changed("connecting") {
		h.Connecting = f.Connecting
	}
	if f.changed("features") {
		features, err := parseFeatures(f.Features)
		if err != nil {
			return err
		}
		h.Features = features
	}
	if f.changed("description") {
		h.Description = f.Description
	}
	if f.enabled != nil {
		f.enabled.apply(&h.Enabled)
	}
	return checkDescription(objkind.Host, h.Name, h.Description)
}

type hostCreateOptions struct {
	g *Globals
	writeFlags
	hostFigureFlags
	Name string
	Farm string
}

func newHostCreateCommand(g *Globals) *cobra.Command {
	o := &hostCreateOptions{g: g}
	cmd := &cobra.Command{
		Use:   "create NAME --farm F [flags]",
		Short: "Create an RDS host in a farm (idempotent: an identical host is left unchanged)",
		Example: `  cpactl host create rds-us-01 --farm us-farm1 --load-index 12 --sessions 8
  cpactl host create rds-us-09 --farm us-farm1 --features rdp,blast --disabled`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			if err := o.enabled.resolve(cmd); err != nil {
				return err
			}
			return o.g.execute(o)
		},
	}
	cmd.Flags().StringVar(&o.Farm, "farm", "", "the farm of the host (required)")
	o.hostFigureFlags.add(cmd, false)
	o.writeFlags.add(cmd)
	return cmd
}

func (o *hostCreateOptions) build() (ldapschema.Host, error) {
	h := ldapschema.Host{Name: o.Name, Enabled: true, Features: append([]string(nil), ldapschema.AllFeatures...)}
	if err := checkName(objkind.Host, o.Name, maxName); err != nil {
		return h, err
	}
	if o.Farm == "" {
		return h, errorf(fmt.Sprintf("cpactl host create %s --farm FARM", quote.Shell(o.Name)), "an RDS host needs a farm: pass --farm")
	}
	if err := o.apply(&h); err != nil {
		return h, err
	}
	return h, checkRules(o.g, objkind.Host, o.Name, rules.Host(h))
}

func (o *hostCreateOptions) run() error {
	want, err := o.build()
	if err != nil {
		return err
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	farm, err := st.Farm(o.Farm)
	if err != nil {
		return err
	}
	want.Farm, want.Pod, want.DN = farm.Name, farm.Pod, st.DIT.Host(farm.Pod, farm.Name, o.Name)
	if err := o.checkOvercommit(o.g, want, farm); err != nil {
		return err
	}
	return createOrUnchanged(o.g, st, o.DryRun, creation[ldapschema.Host]{
		kind: objkind.Host, name: o.Name, where: " in farm " + farm.Name, dn: want.DN, attrs: want.Attrs(),
		read: func() (ldapschema.Host, error) { return st.Host(o.Name) },
		other: func(existing ldapschema.Host) error {
			if !ldapschema.EqualDN(existing.DN, want.DN) {
				return errorf("RDS host names are unique across the federation: pick another name",
					"rds host %s exists in farm %s", existing.Name, existing.Farm)
			}
			return nil
		},
		// The configuration decides; the live figures (load index,
		// sessions, connecting), which a feed moves, are left as they are.
		stored:   func(h ldapschema.Host) (string, ldapschema.Attrs) { return h.Name, h.Attrs() },
		compared: ldapschema.HostManaged, counters: ldapschema.HostCounters,
	})
}

type hostUpdateOptions struct {
	g *Globals
	writeFlags
	hostFigureFlags
	setLoad bool
	Name    string
	// The host's policy (ADMX) thresholds, which replace the farm's.
	PolicyLoadIndexThreshold, PolicyConnectingSessionThreshold int
	NoPolicyThresholds                                         bool
}

// newHostUpdateCommand builds `host update`, or with setLoad `host
// set-load`, the narrow form a feed of live figures calls.
func newHostUpdateCommand(g *Globals, setLoad bool) *cobra.Command {
	o := &hostUpdateOptions{g: g, setLoad: setLoad}
	cmd := &cobra.Command{
		Use:   "update NAME [flags]",
		Short: "Change an RDS host's figures, features, description or state (only the flags given)",
		Example: `  cpactl host update rds-us-01 --features multisession,rdp,pcoip,blast
  cpactl host update rds-us-02 --disabled`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			if o.enabled != nil {
				if err := o.enabled.resolve(cmd); err != nil {
					return err
				}
			}
			return o.g.execute(o)
		},
	}
	if setLoad {
		cmd.Use = "set-load NAME --load-index N [--sessions N] [--connecting N]"
		cmd.Short = "Feed an RDS host's live figures: load index, sessions, connecting sessions"
		cmd.Long = `Records the figures an RDS host last reported, as a monitoring feed would:
the load index (-1..100, -1 = load balancing disabled on the host) and,
optionally, its sessions and connecting sessions. Unchanged figures print
"unchanged".`
		cmd.Example = `  cpactl host set-load rds-us-01 --load-index 35 --sessions 12 --connecting 3`
	}
	o.hostFigureFlags.add(cmd, setLoad)
	if !setLoad {
		cmd.Flags().IntVar(&o.PolicyLoadIndexThreshold, "policy-load-index-threshold", 0,
			"0..100, 0 = off: the host's policy (ADMX) Load Index Threshold, which replaces the farm's")
		cmd.Flags().IntVar(&o.PolicyConnectingSessionThreshold, "policy-connecting-session-threshold", 0,
			"0..150, 0 = off: the host's policy (ADMX) Connecting Session Threshold, which replaces the farm's")
		cmd.Flags().BoolVar(&o.NoPolicyThresholds, "no-policy-thresholds", false,
			"remove both policy thresholds: the farm's apply again")
		cmd.Example += `
  cpactl host update rds-us-03 --policy-load-index-threshold 50 --policy-connecting-session-threshold 10
  cpactl host update rds-us-03 --no-policy-thresholds`
	}
	o.writeFlags.add(cmd)
	return cmd
}

// policyFlags are the policy threshold flags; changedPolicy reports whether
// one of them was given.
var policyFlags = []string{"policy-load-index-threshold", "policy-connecting-session-threshold", "no-policy-thresholds"}

// applyPolicy sets or removes the host's policy thresholds as the flags say.
func (o *hostUpdateOptions) applyPolicy(h *ldapschema.Host) {
	if o.NoPolicyThresholds {
		h.PolicyLoadIndexThreshold, h.PolicyConnectingSessionThreshold = nil, nil
	}
	if o.changed("policy-load-index-threshold") {
		v := o.PolicyLoadIndexThreshold
		h.PolicyLoadIndexThreshold = &v
	}
	if o.changed("policy-connecting-session-threshold") {
		v := o.PolicyConnectingSessionThreshold
		h.PolicyConnectingSessionThreshold = &v
	}
}

func (o *hostUpdateOptions) run() error {
	switch {
	case o.setLoad && !o.changed("load-index"):
		return errorf(fmt.Sprintf("cpactl host set-load %s --load-index N", quote.Shell(o.Name)), "set-load needs --load-index")
	case o.NoPolicyThresholds && anyChanged(o.changed, policyFlags[:2]...):
		return errorf("pass either --no-policy-thresholds or the policy thresholds",
			"--no-policy-thresholds removes the policy thresholds that --policy-* would set")
	case !o.setLoad && (o.enabled == nil || !o.enabled.set()) &&
		!anyChanged(o.changed, append([]string{"load-index", "sessions", "connecting", "features", "description"}, policyFlags...)...):
		return errorf("pass --load-index, --sessions, --connecting, --features, --description, --enabled, --disabled, --policy-load-index-threshold, --policy-connecting-session-threshold or --no-policy-thresholds",
			"nothing to update for rds host %s", o.Name)
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	return updateOne(o.g, st, o.DryRun, modification[ldapschema.Host]{
		kind: objkind.Host, managed: ldapschema.HostManaged,
		read: func() (ldapschema.Host, error) { return st.Host(o.Name) },
		apply: func(h ldapschema.Host, next *ldapschema.Host) error {
			if err := o.apply(next); err != nil {
				return err
			}
			o.applyPolicy(next)
			if err := checkRules(o.g, objkind.Host, h.Name, rules.Host(*next)); err != nil {
				return err
			}
			if next.Sessions <= h.Sessions {
				return nil
			}
			farm, err := st.Farm(h.Farm)
			if err != nil {
				return err
			}
			return o.checkOvercommit(o.g, *next, farm)
		},
		name:  func(h ldapschema.Host) string { return h.Name },
		dn:    func(h ldapschema.Host) string { return h.DN },
		attrs: ldapschema.Host.Attrs,
	})
}

func newHostDeleteCommand(g *Globals) *cobra.Command {
	return newNamedDeleteCommand(g, namedDelete{
		kind:  objkind.Host,
		short: "Delete an RDS host; refused while session records name it (see --force)",
		long: `Deletes an RDS host. While session records name it the delete is refused
and they are listed; with --force the sessions lose their host, in the same
LDAP transaction.

On a terminal cpactl asks for confirmation; elsewhere pass --yes.`,
		example: `  cpactl host delete rds-us-09 --yes`,
		force:   "also remove the host from session records, in the same transaction",
		hint:    func(string) string { return "end the sessions on it first (cpactl session end), or pass --force" },
	})
}

// featureWords renders host features as --features spells them.
func featureWords(features []string) string {
	return strings.ToLower(strings.Join(features, ","))
}
