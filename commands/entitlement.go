package commands

import (
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/output"
	"github.com/cpactl/cpactl/rules"
)

func newEntitlementCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "entitlement",
		Aliases: []string{"ge"},
		Short:   "Manage global entitlements: policy, members and pools",
		Long: `A global entitlement (GE) gives users and groups desktops or applications
from pools in any pod of the federation. Its policy says where the broker
looks (scope, home site, preferred sites, load distribution) and what a
user may do (several sessions, client restrictions, tags).

Rules checked before anything is written:
  --require-home-site needs --use-home-site;
  --ignore-high-load-preferred-sites needs --load-distribution load or session;
  --multiple-session-auto-clean and --client-restrictions are for floating
    desktop and application entitlements;
  --multiple-sessions-per-user is for floating desktop entitlements;
  --dedicated or --floating: desktop entitlements only, required at create,
    never changed afterwards;
  --use-preferred-sites with a scope other than ANY is allowed, with a warning
    (it has no effect there).
A pool belongs to at most one entitlement, of its type and user assignment.`,
	}
	return cmd
}

// EntitlementView is a global entitlement as `entitlement show` and
// `entitlement list` print it (JSON contract): every field of docs/topology.md and docs/entitlements.md.
type EntitlementView struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Type        string `json:"type"` // DESKTOP or APPLICATION
	// Dedicated is true (dedicated) or false (floating) for desktop
	// entitlements, null for application entitlements.
	Dedicated                    *bool        `json:"dedicated"`
	Scope                        string       `json:"scope"` // ANY, SITE or LOCAL
	Enabled                      bool         `json:"enabled"`
	DefaultProtocol              string       `json:"default_protocol"` // BLAST, PCOIP or RDP
	UseHomeSite                  bool         `json:"use_home_site"`
	RequireHomeSite              bool         `json:"require_home_site"`
	UsePreferredSites            bool         `json:"use_preferred_sites"`
	IgnoreHighLoadPreferredSites bool         `json:"ignore_high_load_preferred_sites"`
	LoadDistribution             string       `json:"load_distribution"` // NONE, LOAD or SESSION
	MultipleSessionAutoClean     bool         `json:"multiple_session_auto_clean"`
	MultipleSessionsPerUser      bool         `json:"multiple_sessions_per_user"`
	ClientRestrictions           bool         `json:"client_restrictions"`
	Tags                         []string     `json:"tags"`
	Members                      []MemberView `json:"members"`
	Pools                        []PoolRef    `json:"pools"`
	// Backup is the backup global entitlement, omitted when none;
	// BackupOf (show only) the entitlements that name this one as theirs.
	Backup   string   `json:"backup,omitempty"`
	BackupOf []string `json:"backup_of,omitempty"`
}

// MemberView is a member of an entitlement (JSON contract).
type MemberView struct {
	Kind string `json:"kind"` // user or group ("entry" for a DN outside both)
	Name string `json:"name"`
	DN   string `json:"dn"`
}

// PoolRef names a pool and its pod (JSON contract).
type PoolRef struct {
	Name string `json:"name"`
	Pod  string `json:"pod"`
}

func entitlementView(st *directory.Store, ge ldapschema.Entitlement) EntitlementView {
	v := EntitlementView{Name: ge.Name, Description: ge.Description, Type: ge.Type, Scope: ge.Scope, Enabled: ge.Enabled,
		DefaultProtocol: ge.DefaultProtocol, UseHomeSite: ge.UseHomeSite, RequireHomeSite: ge.RequireHomeSite,
		UsePreferredSites: ge.UsePreferredSites, IgnoreHighLoadPreferredSites: ge.IgnoreHighLoad,
		LoadDistribution: ge.LoadDistribution, MultipleSessionAutoClean: ge.AutoClean,
		MultipleSessionsPerUser: ge.MultipleSessionsPerUser, ClientRestrictions: ge.ClientRestrictions,
		Tags: orEmpty(ge.Tags), Members: memberViews(st, ge.Members), Pools: poolRefs(ge.PoolDNs)}
	if ge.BackupDN != "" {
		v.Backup = ldapschema.NameOf(ge.BackupDN)
	}
	if ge.Type == ldapschema.TypeDesktop {
		d := ge.Dedicated
		v.Dedicated = &d
	}
	return v
}

func memberViews(st *directory.Store, dns []string) []MemberView {
	out := make([]MemberView, 0, len(dns))
	for _, dn := range dns {
		m := st.MemberOfDN(dn)
		out = append(out, MemberView{Kind: m.Kind, Name: m.Name, DN: dn})
	}
	sortBy(out, func(m MemberView) string { return m.Kind + "\x00" + m.Name })
	return out
}

func poolRefs(dns []string) []PoolRef {
	out := make([]PoolRef, 0, len(dns))
	for _, dn := range dns {
		out = append(out, PoolRef{Name: ldapschema.NameOf(dn), Pod: ldapschema.NameOf(ldapschema.ParentOf(dn))})
	}
	sortBy(out, func(p PoolRef) string { return p.Name })
	return out
}

type entitlementListOptions struct {
	g *Globals
	listFlags
	Pool string
}

func newEntitlementListCommand(g *Globals) *cobra.Command {
	o := &entitlementListOptions{g: g}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List global entitlements with their type, scope, policy, members and pools",
		Example: `  cpactl entitlement list
  cpactl entitlement list --pool uk-desk
  cpactl entitlement list -o json | jq -r '.[] | select(.use_preferred_sites) | .name'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	cmd.Flags().StringVar(&o.Pool, "pool", "", "only the entitlements that include this pool")
	o.listFlags.add(cmd, "entitlements", true)
	return cmd
}

func (o *entitlementListOptions) run() error {
	p, st, closeFn, sel, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	if o.Pool != "" {
		pool, err := st.Pool(o.Pool)
		if err != nil {
			return err
		}
		withFilter(&sel, ldapclient.Filter(ldapschema.AttrEntitlementPoolDN, pool.DN))
	}
	ges, err := st.SelectEntitlements(sel)
	if err != nil {
		return err
	}
	views := make([]EntitlementView, 0, len(ges.Items))
	for _, ge := range ges.Items {
		views = append(views, entitlementView(st, ge))
	}
	defer o.counted(o.g, p, len(views), ges.Total)
	return p.Print(views, func(w io.Writer) error {
		rows := make([][]string, 0, len(views))
		for _, v := range views {
			rows = append(rows, []string{v.Name, strings.ToLower(v.Type), assignmentWord(v.Dedicated), v.Scope,
				strings.ToLower(v.LoadDistribution), yesNo(v.Enabled), strconv.Itoa(len(v.Members)), strconv.Itoa(len(v.Pools))})
		}
		return output.Rows(w, []string{"name", "type", "assignment", "scope", "load distribution", "enabled", "members", "pools"}, rows)
	})
}

type entitlementShowOptions struct {
	g *Globals
	readFlags
	Name string
}

func newEntitlementShowCommand(g *Globals) *cobra.Command {
	o := &entitlementShowOptions{g: g}
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Print every field of a global entitlement",
		Example: `  cpactl entitlement show "Sales Desktop"
  cpactl entitlement show "Sales Desktop" -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return o.g.execute(o)
		},
	}
	o.readFlags.add(cmd)
	return cmd
}

func (o *entitlementShowOptions) run() error {
	p, st, closeFn, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	ge, err := st.Entitlement(o.Name)
	if err != nil {
		return err
	}
	v := entitlementView(st, ge)
	users, err := st.EntitlementsBackedUpBy(ge.DN)
	if err != nil {
		return err
	}
	for _, u := range users {
		v.BackupOf = append(v.BackupOf, u.Name)
	}
	return p.Print(v, func(w io.Writer) error {
		members := make([]string, len(v.Members))
		for i, m := range v.Members {
			members[i] = m.Kind + " " + m.Name
		}
		pools := make([]string, len(v.Pools))
		for i, pl := range v.Pools {
			pools[i] = pl.Name + " (" + pl.Pod + ")"
		}
		rows := [][2]string{
			{"name", v.Name},
			{"description", orDash(v.Description)},
			{"type", strings.ToLower(v.Type)},
			{"user assignment", assignmentWord(v.Dedicated)},
			{"scope", v.Scope},
			{"enabled", yesNo(v.Enabled)},
			{"default protocol", strings.ToLower(v.DefaultProtocol)},
			{"use home site", yesNo(v.UseHomeSite)},
			{"require home site", yesNo(v.RequireHomeSite)},
			{"use preferred sites", yesNo(v.UsePreferredSites)},
			{"ignore preferred sites with high load", yesNo(v.IgnoreHighLoadPreferredSites)},
			{"load distribution", strings.ToLower(v.LoadDistribution)},
			{"auto clean up redundant sessions", yesNo(v.MultipleSessionAutoClean)},
			{"multiple sessions per user", yesNo(v.MultipleSessionsPerUser)},
			{"client restrictions", yesNo(v.ClientRestrictions)},
			{"tags", joinOr(v.Tags, "-")},
			{"members", joinOr(members, "-")},
			{"pools", joinOr(pools, "-")},
		}
		if v.Backup != "" {
			rows = append(rows, [2]string{"backup", v.Backup})
		}
		if len(v.BackupOf) > 0 {
			rows = append(rows, [2]string{"backup of", strings.Join(v.BackupOf, ", ")})
		}
		return output.Fields(w, rows)
	})
}

// entitlementPolicyFlags are the policy flags of create and update.
type entitlementPolicyFlags struct {
	Type             string
	Scope            string
	LoadDistribution string
	DefaultProtocol  string
	Description      string
	Tags             []string
	NoTags           bool
	Dedicated        bool
	Floating         bool

	useHomeSite, requireHomeSite, usePreferredSites, ignoreHighLoad *toggle
	autoClean, multipleSessions, clientRestrictions, enabled        *toggle

	changed func(name string) bool
}

func (f *entitlementPolicyFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.Type, "type", "", "desktop or application (fixed at creation)")
	fl.StringVar(&f.Scope, "scope", "ANY", "where the broker looks: ANY (every pod), SITE (the connecting site), LOCAL (the connecting pod); Horizon's words too: \"All Sites\", \"Within Site\", \"Within Pod\", ALL_SITES, WITHIN_SITE, WITHIN_POD")
	fl.StringVar(&f.LoadDistribution, "load-distribution", "none", "Session Load Distribution policy: none, load (load index) or session (session count); Horizon's words too: disabled, \"Load Index\", \"Session Count\"")
	fl.StringVar(&f.DefaultProtocol, "default-protocol", "blast", "display protocol when the request names none: blast, pcoip or rdp (also \"VMware Blast\", \"Microsoft RDP\")")
	fl.StringVar(&f.Description, "description", "", "what the entitlement is for (up to 1024 characters)")
	csvListVar(fl, &f.Tags, "tags", "Connection Server restriction tags, comma-separated: only servers with one of them broker it")
	fl.BoolVar(&f.NoTags, "no-tags", false, "no restriction tags: any Connection Server brokers it")
	fl.BoolVar(&f.Dedicated, "dedicated", false, "desktop entitlement of dedicated desktops (fixed at creation)")
	fl.BoolVar(&f.Floating, "floating", false, "desktop entitlement of floating desktops (fixed at creation)")
	f.useHomeSite = addToggle(cmd, "use-home-site", "no-use-home-site", "start the search at the user's home site")
	f.requireHomeSite = addToggle(cmd, "require-home-site", "no-require-home-site",
		"only users with a home site get the entitlement (needs --use-home-site)")
	f.usePreferredSites = addToggle(cmd, "use-preferred-sites", "no-use-preferred-sites",
		"search the connecting site's preferred sites (scope ANY only)")
	f.ignoreHighLoad = addToggle(cmd, "ignore-high-load-preferred-sites", "no-ignore-high-load-preferred-sites",
		"skip preferred sites loaded above pae-LoadThresholdForSite (needs --load-distribution load or session)")
	f.autoClean = addToggle(cmd, "multiple-session-auto-clean", "no-multiple-session-auto-clean",
		"log off the redundant sessions the user does not pick (floating desktop and application entitlements)")
	f.multipleSessions = addToggle(cmd, "multiple-sessions-per-user", "no-multiple-sessions-per-user",
		"one session per client device (floating desktop entitlements)")
	f.clientRestrictions = addToggle(cmd, "client-restrictions", "no-client-restrictions",
		"only client computers in an entitled group may connect (floating desktop and application entitlements)")
	f.enabled = addToggle(cmd, "enabled", "disabled", "whether users get the entitlement (default enabled)")
	f.changed = cmd.Flags().Changed
}

func (f *entitlementPolicyFlags) toggles() []*toggle {
	return []*toggle{f.useHomeSite, f.requireHomeSite, f.usePreferredSites, f.ignoreHighLoad, f.autoClean,
		f.multipleSessions, f.clientRestrictions, f.enabled}
}

// parse checks the flags alone (no I/O) after cobra parsed them.
func (f *entitlementPolicyFlags) parse(cmd *cobra.Command) error {
	for _, t := range f.toggles() {
		if err := t.resolve(cmd); err != nil {
			return err
		}
	}
	if f.Dedicated && f.Floating {
		return errorf("pass one of --dedicated and --floating", "--dedicated and --floating contradict each other")
	}
	if f.NoTags && f.changed("tags") {
		return errorf("pass one of --tags and --no-tags", "--tags and --no-tags contradict each other")
	}
	var err error
	if f.changed("type") {
		if f.Type, err = parseEnum("type", f.Type, entitlementTypes...); err != nil {
			return err
		}
	}
	if f.Scope, err = parseAlias("scope", f.Scope, ldapschema.ScopeAliases, scopes...); err != nil {
		return err
	}
	if f.LoadDistribution, err = parseAlias("load-distribution", f.LoadDistribution, ldapschema.PolicyAliases, loadDistributions...); err != nil {
		return err
	}
	if f.DefaultProtocol, err = parseAlias("default-protocol", f.DefaultProtocol, ldapschema.ProtocolAliases, protocols...); err != nil {
		return err
	}
	f.Tags = cleanList(f.Tags)
	return checkTags(f.Tags)
}

// any reports whether a policy flag was given (for update).
func (f *entitlementPolicyFlags) any() bool {
	for _, name := range []string{"type", "scope", "load-distribution", "default-protocol", "description", "tags", "no-tags",
		"dedicated", "floating"} {
		if f.changed(name) {
			return true
		}
	}
	for _, t := range f.toggles() {
		if t.set() {
			return true
		}
	}
	return false
}

// apply sets the given options on ge. On update the type and the user
// assignment may be repeated but not changed.
func (f *entitlementPolicyFlags) apply(ge *ldapschema.Entitlement, creating bool) error {
	newType := ""
	if f.changed("type") {
		newType = f.Type
	}
	if err := rules.EntitlementKind(*ge, creating, newType, f.Dedicated, f.Floating); err != nil {
		return refused(err)
	}
	if newType != "" {
		ge.Type = newType
	}
	if f.Dedicated || f.Floating {
		ge.Dedicated = f.Dedicated
	}
	if creating || f.changed("scope") {
		ge.Scope = f.Scope
	}
	if creating || f.changed("load-distribution") {
		ge.LoadDistribution = f.LoadDistribution
	}
	if creating || f.changed("default-protocol") {
		ge.DefaultProtocol = f.DefaultProtocol
	}
	if f.changed("description") {
		ge.Description = f.Description
	}
	switch {
	case f.NoTags:
		ge.Tags = nil
	case f.changed("tags"):
		ge.Tags = sortedTags(f.Tags)
	}
	if creating {
		ge.Enabled = true
	}
	f.useHomeSite.apply(&ge.UseHomeSite)
	f.requireHomeSite.apply(&ge.RequireHomeSite)
	f.usePreferredSites.apply(&ge.UsePreferredSites)
	f.ignoreHighLoad.apply(&ge.IgnoreHighLoad)
	f.autoClean.apply(&ge.AutoClean)
	f.multipleSessions.apply(&ge.MultipleSessionsPerUser)
	f.clientRestrictions.apply(&ge.ClientRestrictions)
	f.enabled.apply(&ge.Enabled)
	return checkDescription(objkind.Entitlement, ge.Name, ge.Description)
}

// entitlementCompared lists the attributes create compares with an
// existing entitlement.
var entitlementCompared = append([]string{ldapschema.AttrEntitlementType}, ldapschema.EntitlementManaged...)

type entitlementCreateOptions struct {
	g *Globals
	writeFlags
	entitlementPolicyFlags
	Name string
}

func newEntitlementCreateCommand(g *Globals) *cobra.Command {
	o := &entitlementCreateOptions{g: g}
	cmd := &cobra.Command{
		Use:   "create NAME --type desktop|application [--dedicated|--floating] [policy flags]",
		Short: "Create a global entitlement (idempotent: an identical one is left unchanged)",
		Long: `Creates a global entitlement with its policy; add members and pools
afterwards with add-member and add-pool. Creating an entitlement that exists
with the same policy prints "unchanged"; with a different one it fails and
points to update.

Defaults: --scope ANY, --load-distribution none, --default-protocol blast,
enabled, every other option off. A desktop entitlement needs --dedicated or
--floating, which can never be changed afterwards.`,
		Example: `  # seed 000: a floating desktop GE searching India's preferred sites, least loaded first
  cpactl entitlement create "Sales Desktop" --type desktop --floating --scope ANY \
    --use-preferred-sites --ignore-high-load-preferred-sites --load-distribution load
  cpactl entitlement create "Office Apps" --type application --multiple-session-auto-clean --tags internal,dmz`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			if err := o.parse(cmd); err != nil {
				return err
			}
			return o.g.execute(o)
		},
	}
	o.entitlementPolicyFlags.add(cmd)
	o.writeFlags.add(cmd)
	return cmd
}

// build validates the flags and returns the entitlement to write.
func (o *entitlementCreateOptions) build() (ldapschema.Entitlement, error) {
	if err := checkName(objkind.Entitlement, o.Name, maxName); err != nil {
		return ldapschema.Entitlement{}, err
	}
	ge := ldapschema.Entitlement{Name: o.Name}
	if err := o.apply(&ge, true); err != nil {
		return ge, err
	}
	return ge, checkRules(o.g, objkind.Entitlement, o.Name, rules.Entitlement(ge))
}

func (o *entitlementCreateOptions) run() error {
	ge, err := o.build()
	if err != nil {
		return err
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	return createOrUnchanged(o.g, st, o.DryRun, creation[ldapschema.Entitlement]{
		kind: objkind.Entitlement, name: o.Name, where: "", dn: st.DIT.Entitlement(o.Name), attrs: ge.Attrs(),
		read:     func() (ldapschema.Entitlement, error) { return st.Entitlement(o.Name) },
		stored:   func(ge ldapschema.Entitlement) (string, ldapschema.Attrs) { return ge.Name, ge.Attrs() },
		compared: entitlementCompared,
	})
}

type entitlementUpdateOptions struct {
	g *Globals
	writeFlags
	entitlementPolicyFlags
	Name     string
	Backup   string // --backup: the backup global entitlement
	NoBackup bool   // --no-backup
}

func newEntitlementUpdateCommand(g *Globals) *cobra.Command {
	o := &entitlementUpdateOptions{g: g}
	cmd := &cobra.Command{
		Use:   "update NAME [policy flags]",
		Short: "Change a global entitlement's policy (only the options given)",
		Long: `Changes the options given and leaves the others alone. Every on/off option
has its off form (--no-use-home-site, --disabled, ...). The whole resulting
policy is checked against the rules before anything is written; the type
and dedicated/floating may be repeated but never changed.`,
		Example: `  cpactl entitlement update "Sales Desktop" --use-home-site --require-home-site
  cpactl entitlement update "Sales Desktop" --no-ignore-high-load-preferred-sites --load-distribution none
  cpactl entitlement update "Office Apps" --no-tags --disabled --dry-run
  # users of "Sales Desktop" get a desktop of "Sales Overflow" when it has no room
  cpactl entitlement update "Sales Desktop" --backup "Sales Overflow"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			if err := o.parse(cmd); err != nil {
				return err
			}
			if o.NoBackup && cmd.Flags().Changed("backup") {
				return errorf("pass one of --backup and --no-backup", "--backup and --no-backup contradict each other")
			}
			if !o.any() && !o.NoBackup && !cmd.Flags().Changed("backup") {
				return errorf("pass the options to change; see `cpactl entitlement update --help`",
					"nothing to update for entitlement %s", o.Name)
			}
			return o.g.execute(o)
		},
	}
	o.entitlementPolicyFlags.add(cmd)
	cmd.Flags().StringVar(&o.Backup, "backup", "", "the backup global entitlement, used when this one has no room (floating desktop entitlements; docs/resolve.md)")
	cmd.Flags().BoolVar(&o.NoBackup, "no-backup", false, "remove the backup global entitlement")
	o.writeFlags.add(cmd)
	return cmd
}

// entitlementUpdateManaged adds the backup reference to what an update
// rewrites (a repeated create does not compare it).
var entitlementUpdateManaged = append(append([]string(nil), ldapschema.EntitlementManaged...), ldapschema.AttrBackupEntitlementDN)

// checkBackup applies the backup rules to next as it would be written: to
// the backup it names (the one given with --backup, else the stored one),
// and to next as the backup of the entitlements that name it as theirs.
func (o *entitlementUpdateOptions) checkBackup(st *directory.Store, next *ldapschema.Entitlement) error {
	users, err := st.EntitlementsBackedUpBy(next.DN)
	if err != nil {
		return err
	}
	var vs []rules.Violation
	var backup ldapschema.Entitlement
	switch {
	case o.NoBackup:
		next.BackupDN = ""
	case o.Backup != "":
		backup, err = st.Entitlement(o.Backup)
	case next.BackupDN != "":
		backup, err = st.EntitlementByDN(next.BackupDN)
	}
	if err != nil {
		return err
	}
	if backup.DN != "" {
		next.BackupDN = backup.DN
		var names []string
		for _, u := range users {
			names = append(names, u.Name)
		}
		vs = rules.Backup(*next, backup, names)
	}
	if err := checkRules(o.g, objkind.Entitlement, next.Name, vs); err != nil {
		return err
	}
	return checkAsBackup(o.g, users, *next)
}

// checkAsBackup applies the backup rules to ge as it would be written, as
// the backup of each of users (the entitlements naming it as theirs): a
// write may not turn a valid backup into one that breaks a rule.
func checkAsBackup(g *Globals, users []ldapschema.Entitlement, ge ldapschema.Entitlement) error {
	for _, u := range users {
		if err := checkRules(g, objkind.Entitlement, ge.Name, rules.Backup(u, ge, nil)); err != nil {
			return err
		}
	}
	return nil
}

func (o *entitlementUpdateOptions) run() error {
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	return updateOne(o.g, st, o.DryRun, modification[ldapschema.Entitlement]{
		kind: objkind.Entitlement, managed: entitlementUpdateManaged,
		read: func() (ldapschema.Entitlement, error) { return st.Entitlement(o.Name) },
		apply: func(ge ldapschema.Entitlement, next *ldapschema.Entitlement) error {
			if err := o.apply(next, false); err != nil {
				return err
			}
			if err := checkRules(o.g, objkind.Entitlement, ge.Name, rules.Entitlement(*next)); err != nil {
				return err
			}
			return o.checkBackup(st, next)
		},
		name:  func(ge ldapschema.Entitlement) string { return ge.Name },
		dn:    func(ge ldapschema.Entitlement) string { return ge.DN },
		attrs: ldapschema.Entitlement.Attrs,
	})
}

func newEntitlementDeleteCommand(g *Globals) *cobra.Command {
	return newNamedDeleteCommand(g, namedDelete{
		kind:  objkind.Entitlement,
		short: "Delete a global entitlement; refused while home sites, sessions or assignments refer to it (see --force)",
		long: `Deletes a global entitlement (its pools and members stay). While home-site
overrides, session records or pod assignments refer to it, the delete is
refused and they are listed; with --force they are deleted with it, in one
LDAP transaction.

On a terminal cpactl asks for confirmation; elsewhere pass --yes.`,
		example: `  cpactl entitlement delete "Old Desktop" --yes
  cpactl entitlement delete "Sales Desktop" --force --dry-run`,
		force: "also delete the home-site overrides, sessions and assignments of the entitlement, in the same transaction",
		hint: func(string) string {
			return "end the sessions and delete the overrides and assignments first, or pass --force to delete them in the same transaction"
		},
	})
}
