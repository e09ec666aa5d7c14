// Helpers the entitlement, pool, farm, host, session and assignment
// commands share: on/off flag pairs, enumerations, the words of changed
// attributes, and checking and writing one object.

package commands

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/rules"
)

// toggle is an on/off flag pair (--use-home-site / --no-use-home-site,
// --enabled / --disabled). Value is nil when neither was given, so an
// update changes only what the administrator named.
type toggle struct {
	On, Off     string
	onV, offV   bool
	value       *bool
	description string
}

// addToggle registers the pair on cmd.
func addToggle(cmd *cobra.Command, on, off, usage string) *toggle {
	t := &toggle{On: on, Off: off, description: usage}
	cmd.Flags().BoolVar(&t.onV, on, false, usage)
	cmd.Flags().BoolVar(&t.offV, off, false, "the opposite of --"+on)
	return t
}

// resolve reads the pair after parsing; both given is an error.
func (t *toggle) resolve(cmd *cobra.Command) error {
	on, off := cmd.Flags().Changed(t.On), cmd.Flags().Changed(t.Off)
	switch {
	case on && off:
		return errorf(fmt.Sprintf("pass one of --%s and --%s", t.On, t.Off), "--%s and --%s contradict each other", t.On, t.Off)
	case on:
		v := t.onV
		t.value = &v
	case off:
		v := !t.offV
		t.value = &v
	}
	return nil
}

// set reports whether the pair was given.
func (t *toggle) set() bool { return t.value != nil }

// apply stores the given value into dst, if any.
func (t *toggle) apply(dst *bool) {
	if t.value != nil {
		*dst = *t.value
	}
}

// The allowed values of the enumeration flags, in their stored form: the
// validators check against these tables and completion offers them
// (complete.go), so a value added here is accepted and completed alike.
var (
	entitlementTypes  = []string{ldapschema.TypeDesktop, ldapschema.TypeApplication}
	scopes            = []string{ldapschema.ScopeAny, ldapschema.ScopeSite, ldapschema.ScopeLocal}
	loadDistributions = []string{ldapschema.PolicyNone, ldapschema.PolicyLoad, ldapschema.PolicySession}
	protocols         = []string{ldapschema.ProtocolBlast, ldapschema.ProtocolPCoIP, ldapschema.ProtocolRDP}
	sessionStates     = []string{ldapschema.StateConnected, ldapschema.StateDisconnected}
	podStatuses       = []string{ldapschema.PodOnline, ldapschema.PodOffline}
	poolKinds         = []string{ldapschema.KindDesktop, ldapschema.KindRDSDesktop, ldapschema.KindApplication}
)

// parseEnum maps a flag value (any case) to its stored form, one of
// allowed (stored in upper case).
func parseEnum(flag, value string, allowed ...string) (string, error) {
	v := strings.ToUpper(strings.TrimSpace(value))
	for _, a := range allowed {
		if v == a {
			return a, nil
		}
	}
	words := make([]string, len(allowed))
	for i, a := range allowed {
		words[i] = strings.ToLower(a)
	}
	return "", errorf(fmt.Sprintf("pass --%s with one of %s", flag, strings.Join(words, ", ")),
		"--%s %q is not one of %s", flag, value, strings.Join(words, ", "))
}

// parseAlias reads a flag value in cpactl's words or in Horizon's
// (ldapschema's alias tables: "All Sites", ALL_SITES, "Load Index",
// "VMware Blast"), returning cpactl's word; allowed are cpactl's words, in
// the order the refusal lists them.
func parseAlias(flag, value string, aliases map[string]string, allowed ...string) (string, error) {
	if v, ok := ldapschema.Canonical(aliases, value); ok {
		return v, nil
	}
	return parseEnum(flag, value, allowed...)
}

// onOff picks one of two words.
func onOff(v bool, on, off string) string {
	if v {
		return on
	}
	return off
}

// yesNo renders a boolean for tables.
func yesNo(v bool) string { return onOff(v, "yes", "no") }

// sortBy sorts s by key, case-insensitively (then exactly), as lists are
// printed.
func sortBy[T any](s []T, key func(T) string) {
	sort.SliceStable(s, func(i, j int) bool {
		a, b := key(s[i]), key(s[j])
		if la, lb := strings.ToLower(a), strings.ToLower(b); la != lb {
			return la < lb
		}
		return a < b
	})
}

// checkRules applies the rules an object must pass before it is written:
// the errors fail (naming the flags that fix the first); warnings are
// printed.
func checkRules(g *Globals, kind, name string, vs []rules.Violation) error {
	if err := rules.Refusal(kind, name, vs); err != nil {
		return refused(err)
	}
	for _, v := range rules.Warnings(vs) {
		g.warn("%s %s: %s (%s)", kind, name, v.Message, v.FixText())
	}
	return nil
}

// writeChanges applies one modify of an object and reports it:
// "updated pool P (capacity, sessions)", or "unchanged".
func writeChanges(g *Globals, st *directory.Store, dryRun bool, kind, name, dn string, changes ldapschema.Changes) error {
	if len(changes) == 0 {
		g.report("%s %s: unchanged", kind, name)
		return nil
	}
	if dryRun {
		g.report("would update %s %s (%s)", kind, name, attrWords(changes.Attrs()))
		return nil
	}
	if err := st.Update(dn, changes); err != nil {
		return err
	}
	g.report("updated %s %s (%s)", kind, name, attrWords(changes.Attrs()))
	return nil
}

// containsDN reports whether dns holds dn (compared as DNs).
func containsDN(dns []string, dn string) bool {
	if dn == "" {
		return false
	}
	for _, d := range dns {
		if ldapschema.EqualDN(d, dn) {
			return true
		}
	}
	return false
}

// namedDelete describes `NOUN delete NAME`, the one delete every named
// object (site, pod, Connection Server, pool, farm, RDS host, entitlement,
// user, group, computer) shares: look the object up, refuse while entries
// refer to it (listing them) or, with --force, remove them in the same
// transaction (runDelete).
type namedDelete struct {
	kind                        string // directory.Kind*
	use                         string // "delete NAME" unless set
	short, long, example, force string // help texts; force documents --force
	// hint says what to do when referrers block the delete of the object
	// named stored (as the directory spells it).
	hint func(stored string) string
	// lookup finds the object: its name as stored and its DN. Unset, it is
	// Store.NamedEntry of kind.
	lookup func(st *directory.Store, name string) (stored, dn string, err error)
}

type namedDeleteOptions struct {
	g *Globals
	deleteFlags
	spec namedDelete
	Name string
}

func newNamedDeleteCommand(g *Globals, spec namedDelete) *cobra.Command {
	o := &namedDeleteOptions{g: g, spec: spec}
	use := spec.use
	if use == "" {
		use = "delete NAME"
	}
	cmd := &cobra.Command{
		Use:     use,
		Short:   spec.short,
		Long:    spec.long,
		Example: spec.example,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return o.g.execute(o)
		},
	}
	o.deleteFlags.add(cmd, spec.force)
	return cmd
}

func (o *namedDeleteOptions) run() error {
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	lookup := o.spec.lookup
	if lookup == nil {
		lookup = func(st *directory.Store, name string) (string, string, error) {
			e, err := st.NamedEntry(o.spec.kind, name)
			if err != nil {
				return "", "", err
			}
			return ldapschema.NameOf(e.DN), e.DN, nil
		}
	}
	stored, dn, err := lookup(st, o.Name)
	if err != nil {
		return err
	}
	return runDelete(o.g, st, o.spec.kind, stored, dn, o.deleteFlags, o.spec.hint(stored))
}
