package rules

import (
	"fmt"
	"strings"

	"github.com/cpactl/cpactl/internal/fold"
	"github.com/cpactl/cpactl/ldapschema"
)

// isFloatingDesktop reports whether ge is a floating desktop entitlement.
func isFloatingDesktop(ge ldapschema.Entitlement) bool {
	return ge.Type == ldapschema.TypeDesktop && !ge.Dedicated
}

// Entitlement applies docs/topology.md and docs/entitlements.md's rules on a global entitlement's
// options (and docs/resolve.md's on Ignore Preferred Sites with High Load).
// O(1): it looks at the entitlement's own options only.
func Entitlement(ge ldapschema.Entitlement) []Violation {
	var vs []Violation
	floatingOrApp := ge.Type == ldapschema.TypeApplication || isFloatingDesktop(ge)
	if ge.RequireHomeSite && !ge.UseHomeSite {
		vs = append(vs, Violation{Check: CheckRequireHomeSiteWithoutUse,
			Message: "require-home-site needs use-home-site",
			Fixes:   []string{"--use-home-site", "--no-require-home-site"}})
	}
	if ge.IgnoreHighLoad && (ge.LoadDistribution == "" || ge.LoadDistribution == ldapschema.PolicyNone) {
		vs = append(vs, Violation{Check: CheckIgnoreHighLoadWithoutPolicy,
			Message: "ignore-high-load-preferred-sites needs a load distribution policy other than none (a site's load is measured by it)",
			Fixes:   []string{"--load-distribution load", "--load-distribution session", "--no-ignore-high-load-preferred-sites"}})
	}
	if ge.AutoClean && !floatingOrApp {
		vs = append(vs, Violation{Check: CheckOptionNotAllowed,
			Message: "multiple-session-auto-clean is for floating desktop and application entitlements, not dedicated ones",
			Fixes:   []string{"--no-multiple-session-auto-clean"}})
	}
	if ge.ClientRestrictions && !floatingOrApp {
		vs = append(vs, Violation{Check: CheckOptionNotAllowed,
			Message: "client-restrictions is for floating desktop and application entitlements, not dedicated ones",
			Fixes:   []string{"--no-client-restrictions"}})
	}
	if ge.MultipleSessionsPerUser && !isFloatingDesktop(ge) {
		vs = append(vs, Violation{Check: CheckOptionNotAllowed,
			Message: "multiple-sessions-per-user is for floating desktop entitlements only",
			Fixes:   []string{"--no-multiple-sessions-per-user"}})
	}
	if ge.UsePreferredSites && ge.Scope != "" && ge.Scope != ldapschema.ScopeAny {
		vs = append(vs, Violation{Check: CheckPreferredSitesScope, Warning: true,
			Message: fmt.Sprintf("use-preferred-sites has no effect with scope %s: preferred sites apply only to scope ANY", ge.Scope),
			Fixes:   []string{"--scope ANY", "--no-use-preferred-sites"}})
	}
	if ge.IgnoreHighLoad && !ge.UsePreferredSites {
		vs = append(vs, Violation{Check: CheckIgnoreHighLoadWithoutPrefer, Warning: true,
			Message: "ignore-high-load-preferred-sites has no effect without use-preferred-sites",
			Fixes:   []string{"--use-preferred-sites", "--no-ignore-high-load-preferred-sites"}})
	}
	return vs
}

// Range is the accepted range of an integer field.
type Range struct {
	Field    string // the flag that sets it, without dashes
	Min, Max int
	NoMax    bool // only a lower bound
}

// The integer ranges of docs/topology.md and docs/entitlements.md.
var (
	RangeCapacity                   = Range{Field: "capacity", Min: 0, NoMax: true}
	RangePoolSessions               = Range{Field: "sessions", Min: 0, NoMax: true}
	RangeAssigned                   = Range{Field: "assigned", Min: 0, NoMax: true}
	RangeMaxSessionsPerHost         = Range{Field: "max-sessions-per-host", Min: 0, NoMax: true}
	RangeHostLoadIndexThreshold     = Range{Field: "host-load-index-threshold", Min: 0, Max: 100}
	RangeHostConnectingSessionLimit = Range{Field: "host-connecting-session-threshold", Min: 0, Max: 150}
	RangeLoadIndex                  = Range{Field: "load-index", Min: -1, Max: 100}
	RangeHostSessions               = Range{Field: "sessions", Min: 0, NoMax: true}
	RangeConnecting                 = Range{Field: "connecting", Min: 0, NoMax: true}
	// A host's policy (ADMX) thresholds take the farm's ranges (0 = off).
	RangePolicyLoadIndexThreshold         = Range{Field: "policy-load-index-threshold", Min: 0, Max: 100}
	RangePolicyConnectingSessionThreshold = Range{Field: "policy-connecting-session-threshold", Min: 0, Max: 150}
)

// Text renders the range for messages: "0..100" or "0 or more".
func (r Range) Text() string {
	if r.NoMax {
		return fmt.Sprintf("%d or more", r.Min)
	}
	return fmt.Sprintf("%d..%d", r.Min, r.Max)
}

// Check returns the violation of v, or nil.
func (r Range) Check(v int) *Violation {
	if v >= r.Min && (r.NoMax || v <= r.Max) {
		return nil
	}
	return &Violation{Check: CheckOutOfRange,
		Message: fmt.Sprintf("%s=%d is out of range: it takes an integer %s", r.Field, v, r.Text()),
		Fixes:   []string{fmt.Sprintf("--%s with a value %s", r.Field, r.Text())}}
}

func checkRanges(pairs ...any) []Violation {
	var vs []Violation
	for i := 0; i+1 < len(pairs); i += 2 {
		if v := pairs[i].(Range).Check(pairs[i+1].(int)); v != nil {
			vs = append(vs, *v)
		}
	}
	return vs
}

// Pool checks a pool's own figures (ranges): O(1).
func Pool(p ldapschema.Pool) []Violation {
	if p.Kind != ldapschema.KindDesktop {
		return nil
	}
	return checkRanges(RangeCapacity, p.Capacity, RangePoolSessions, p.Sessions, RangeAssigned, p.Assigned)
}

// PoolOvercommit reports a desktop pool whose counters are above its
// capacity (sessions, or assigned machines of a dedicated pool): resolve
// treats it as full. Writes refuse it unless --allow-overcommit: O(1).
func PoolOvercommit(p ldapschema.Pool) *Violation {
	if p.Kind != ldapschema.KindDesktop {
		return nil
	}
	fixes := []string{"--sessions N (at most the capacity)", "--capacity N"}
	switch {
	case p.Sessions > p.Capacity:
		return &Violation{Check: CheckOverCapacity, Fixes: fixes,
			Message: fmt.Sprintf("%d sessions are above the pool's capacity of %d (resolve treats the pool as full)", p.Sessions, p.Capacity)}
	case p.Dedicated && p.Assigned > p.Capacity:
		return &Violation{Check: CheckOverCapacity, Fixes: []string{"--assigned N (at most the capacity)", "--capacity N"},
			Message: fmt.Sprintf("%d assigned machines are above the pool's capacity of %d (resolve treats the pool as full)", p.Assigned, p.Capacity)}
	}
	return nil
}

// HostOvercommit reports an RDS host with more sessions than its farm's
// limit per host (0 is unlimited): it takes no new session. Writes refuse
// it unless --allow-overcommit: O(1).
func HostOvercommit(h ldapschema.Host, f ldapschema.Farm) *Violation {
	if f.MaxSessionsPerHost <= 0 || h.Sessions <= f.MaxSessionsPerHost {
		return nil
	}
	return &Violation{Check: CheckOverCapacity, Fixes: []string{"--sessions N (at most the farm's limit)"},
		Message: fmt.Sprintf("%d sessions are above farm %s's limit of %d per host (the host takes no new session)",
			h.Sessions, f.Name, f.MaxSessionsPerHost)}
}

// Farm checks a farm's limit and host-side thresholds: O(1).
func Farm(f ldapschema.Farm) []Violation {
	return checkRanges(RangeMaxSessionsPerHost, f.MaxSessionsPerHost,
		RangeHostLoadIndexThreshold, f.LoadIndexThreshold,
		RangeHostConnectingSessionLimit, f.ConnectingSessionThreshold)
}

// Host checks an RDS host's figures and features: O(features).
func Host(h ldapschema.Host) []Violation {
	vs := checkRanges(RangeLoadIndex, h.LoadIndex, RangeHostSessions, h.Sessions, RangeConnecting, h.Connecting)
	if h.PolicyLoadIndexThreshold != nil {
		vs = append(vs, checkRanges(RangePolicyLoadIndexThreshold, *h.PolicyLoadIndexThreshold)...)
	}
	if h.PolicyConnectingSessionThreshold != nil {
		vs = append(vs, checkRanges(RangePolicyConnectingSessionThreshold, *h.PolicyConnectingSessionThreshold)...)
	}
	for _, f := range h.Features {
		if !fold.Contains(ldapschema.AllFeatures, f) {
			vs = append(vs, Violation{Check: CheckOutOfRange,
				Message: fmt.Sprintf("feature %q is not one of %s", f, strings.ToLower(strings.Join(ldapschema.AllFeatures, ", "))),
				Fixes:   []string{"--features with known features"}})
		}
	}
	return vs
}

// FarmFits checks that a farm-backed pool's farm is in the pool's pod:
// O(1).
func FarmFits(p ldapschema.Pool, f ldapschema.Farm) *Violation {
	if strings.EqualFold(p.Pod, f.Pod) {
		return nil
	}
	return &Violation{Check: CheckFarmInAnotherPod,
		Message: fmt.Sprintf("farm %s is in pod %s, but pool %s is in pod %s: a farm-backed pool's farm must be in the same pod",
			f.Name, f.Pod, p.Name, p.Pod),
		Hint: fmt.Sprintf("pick a farm of pod %s (cpactl farm list)", p.Pod)}
}

// PoolFits checks that pool p may serve entitlement ge: desktop and
// rds-desktop pools serve desktop entitlements, application pools serve
// application entitlements; a dedicated entitlement holds only dedicated
// desktop pools, a floating one only floating pools (farm-backed pools are
// floating). O(1).
func PoolFits(ge ldapschema.Entitlement, p ldapschema.Pool) *Violation {
	wantApp := ge.Type == ldapschema.TypeApplication
	if (p.Kind == ldapschema.KindApplication) != wantApp {
		return &Violation{Check: CheckPoolTypeMismatch,
			Message: fmt.Sprintf("pool %s is %s, entitlement %s is %s: desktop and rds-desktop pools serve desktop entitlements, application pools serve application entitlements",
				p.Name, kindWords(p.Kind), ge.Name, typeWords(ge.Type)),
			Hint: "associate the pool with an entitlement of its type"}
	}
	if wantApp {
		return nil
	}
	poolDedicated := p.Kind == ldapschema.KindDesktop && p.Dedicated
	if poolDedicated != ge.Dedicated {
		return &Violation{Check: CheckDedicatedFloatingMismatch,
			Message: fmt.Sprintf("pool %s is %s, entitlement %s is %s: a dedicated entitlement holds only dedicated pools, a floating one only floating pools",
				p.Name, assignmentWords(poolDedicated), ge.Name, assignmentWords(ge.Dedicated)),
			Hint: "associate the pool with an entitlement of the same user assignment"}
	}
	return nil
}

func assignmentWords(dedicated bool) string {
	if dedicated {
		return "dedicated"
	}
	return "floating"
}

func kindWords(kind string) string {
	switch kind {
	case ldapschema.KindApplication:
		return "an application pool"
	case ldapschema.KindRDSDesktop:
		return "an rds-desktop pool"
	}
	return "a desktop pool"
}

func typeWords(t string) string {
	if t == ldapschema.TypeApplication {
		return "an application entitlement"
	}
	return "a desktop entitlement"
}

// PodSetting refuses a setting that is federation-wide only on a pod's
// entry: only the three pae-RDS* values (Setting.PerPod) live per pod, as
// in Horizon each pod's own directory holds them (docs/storm.md): O(1).
func PodSetting(s ldapschema.Setting) error {
	if s.PerPod {
		return nil
	}
	var perPod []string
	for _, x := range ldapschema.Settings {
		if x.PerPod {
			perPod = append(perPod, x.Attr)
		}
	}
	return &Error{Rule: RuleFederationWideSetting,
		Message: fmt.Sprintf("%s is federation-wide (rule %s): only %s may be set per pod", s.Attr,
			RuleFederationWideSetting, strings.Join(perPod, ", ")),
		Hint: "drop --pod to change it in cn=Common"}
}
