// Helpers the entitlement, pool, farm, host, session and assignment
// commands share: on/off flag pairs, enumerations, sorting, and the rules
// an object must pass before it is written.

package commands

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

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
