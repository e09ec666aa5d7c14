package broker

// The site loads of one global entitlement across the whole federation,
// as tier (c) of the search measures them: what `cpactl site graph
// --entitlement` draws.

import (
	"math/big"

	"github.com/cpactl/cpactl/internal/objkind"
)

// EntitlementSiteLoads are every site's load for one global entitlement,
// and which of them a preferred-site search would skip.
type EntitlementSiteLoads struct {
	Entitlement string // the GE's stored name
	// Policy is the GE's Session Load Distribution policy in force
	// (NONE when unset or unknown).
	Policy Policy
	// Scope is the GE's scope in force (ANY when unset or unknown).
	Scope Scope
	// Threshold is pae-LoadThresholdForSite.
	Threshold int
	// UsesPreferredSites is set when the search has a preferred tier: Use
	// Preferred Sites on a GE of scope ANY.
	UsesPreferredSites bool
	// IgnoreHighLoad is set when that tier skips overloaded sites: Ignore
	// Preferred Sites with High Load with a LOAD or SESSION policy.
	IgnoreHighLoad bool
	// Sites are every site, in name order.
	Sites []SiteLoadEntry
	// Warnings name the GE's options that do not apply (as Resolve warns).
	Warnings []string
}

// SiteLoadEntry is one site's load for a global entitlement.
type SiteLoadEntry struct {
	Site string // the site's stored name
	// Pools is how many of the GE's pools in the site are available
	// (enabled, on an online pod, able to hold a session).
	Pools int
	// Load is the site's load under the policy over those pools, exact;
	// nil under NONE or when the site has none.
	Load *big.Rat
	// AboveThreshold is set when Load is strictly above Threshold (the
	// test of the preferred tier, made whatever the GE's options).
	AboveThreshold bool
	// Skipped is set when a preferred-site search would skip the site:
	// UsesPreferredSites, IgnoreHighLoad and AboveThreshold.
	Skipped bool
}

// SiteLoadsFor computes the load of every site of f for the global
// entitlement named entitlement, with the functions and rules of the
// preferred tier of Resolve (docs/resolve.md step 5 and "Loads"):
// offlinePods are treated as offline too. A site's load is taken over
// the GE's available pools in every pod of the site (the scope ANY that
// preferred sites need). A *NotFoundError when the GE or an offline pod
// does not exist.
func SiteLoadsFor(f *Federation, entitlement string, offlinePods []string) (*EntitlementSiteLoads, error) {
	if f == nil {
		return nil, &RequestError{Message: "no federation data"}
	}
	ix := newIndex(f, offlinePods)
	for _, p := range offlinePods {
		if ix.pod(p) == nil {
			return nil, &NotFoundError{Kind: objkind.Pod, Name: p}
		}
	}
	ge := ix.entitlement(entitlement)
	if ge == nil {
		return nil, &NotFoundError{Kind: objkind.Entitlement, Name: entitlement}
	}
	// The GE's options in force, defaults and warnings as Resolve settles
	// them (no request: nothing to refuse).
	rs := &resolver{ix: ix, ge: ge}
	if err := rs.settle(); err != nil {
		return nil, err
	}
	out := &EntitlementSiteLoads{Entitlement: ge.Name, Policy: rs.policy, Scope: rs.scope,
		Threshold: f.Settings.LoadThresholdForSite, UsesPreferredSites: ge.UsePreferredSites && rs.scope == ScopeAny,
		IgnoreHighLoad: rs.ignoreHighLoad, Sites: []SiteLoadEntry{}, Warnings: rs.d.Warnings}
	pools := ix.poolsOf(ge)
	for _, name := range ix.siteNames {
		avail := available(get(pools.sites(), name), nil)
		load := ix.aggregateLoad(avail, rs.policy)
		above := aboveThreshold(load, out.Threshold)
		out.Sites = append(out.Sites, SiteLoadEntry{Site: name, Pools: len(avail), Load: load, AboveThreshold: above,
			Skipped: out.UsesPreferredSites && out.IgnoreHighLoad && above})
	}
	return out, nil
}

// aboveThreshold reports whether a site load is strictly above
// pae-LoadThresholdForSite, exactly: the test that makes a preferred-site
// search skip a site. No load is never above.
func aboveThreshold(load *big.Rat, threshold int) bool {
	return load != nil && load.Cmp(big.NewRat(int64(threshold), 1)) > 0
}
