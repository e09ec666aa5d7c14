package broker

// The loads the broker sees for one GE (`cpactl loads`): the figures
// resolve orders sites, pods and pools by, for every site at once.

import (
	"math/big"
	"strings"

	"github.com/cpactl/cpactl/internal/objkind"
)

// LoadsReport is the loads of one GE's pools, pods and sites under the
// GE's own policy. Its JSON field names are a stable contract (pinned by
// cmd/cpactl/testdata/script/loads.txtar).
type LoadsReport struct {
	Entitlement string `json:"entitlement"` // the GE's stored name
	Policy      Policy `json:"policy"`      // as applied: NONE when unset or unknown
	Scope       Scope  `json:"scope"`       // as applied: ANY when unset or unknown
	// Threshold is pae-LoadThresholdForSite.
	Threshold int `json:"threshold"`
	// SkipsHighLoad says whether a preferred-site search of this GE skips
	// a preferred site whose load is above the threshold (Use Preferred
	// Sites, Ignore Preferred Sites with High Load, scope ANY and a LOAD
	// or SESSION policy).
	SkipsHighLoad bool `json:"skips_high_load"`
	// Sites lists every site, by name.
	Sites    []SiteFigures `json:"sites"`
	Warnings []string      `json:"warnings"`
	WhatIf   []WhatIf      `json:"what_if"` // [] when none
}

// SiteFigures is one site's load for the GE: over its available pools in
// every online pod.
type SiteFigures struct {
	Site string `json:"site"`
	// Load is rounded to two decimals; null under NONE or without an
	// available pool.
	Load *float64 `json:"load"`
	// Sessions and Capacity are the SESSION policy's totals over the
	// available pools (a farm shared by several pools counted once).
	Sessions int64 `json:"sessions"`
	Capacity int64 `json:"capacity"`
	// AboveThreshold: the load is strictly above pae-LoadThresholdForSite.
	AboveThreshold bool `json:"above_threshold"`
	// PreferredSkip: a preferred-site search of this GE skips the site
	// (SkipsHighLoad and AboveThreshold).
	PreferredSkip bool         `json:"preferred_skip"`
	Pods          []PodFigures `json:"pods"` // the pods holding a pool of the GE, by name
}

// PodFigures is one pod's load for the GE.
type PodFigures struct {
	Pod            string        `json:"pod"`
	Online         bool          `json:"online"` // what-if offline pods are not
	Load           *float64      `json:"load"`
	Sessions       int64         `json:"sessions"`
	Capacity       int64         `json:"capacity"`
	AboveThreshold bool          `json:"above_threshold"`
	Pools          []PoolFigures `json:"pools"` // by name
}

// PoolFigures is one pool of the GE.
type PoolFigures struct {
	Pool     string   `json:"pool"`
	Kind     PoolKind `json:"kind"`
	Farm     string   `json:"farm"` // "" for a desktop pool
	Load     *float64 `json:"load"` // null under NONE or when unavailable
	Sessions int64    `json:"sessions"`
	Capacity int64    `json:"capacity"`
	// Unavailable says why the pool takes no session and counts in no
	// load ("" when available).
	Unavailable string `json:"unavailable"`
}

// Loads computes the loads of entitlement's pools, pods and sites, with
// offlinePods treated as offline, as resolve's search sees them under the
// GE's policy (docs/resolve.md "Loads"). A site's load is over every
// online pod of the site (scope ANY; under LOCAL or SITE a request sees
// its own pod's or site's share). Cost: O(sites + pods + pools + hosts of
// the GE's farms).
func Loads(f *Federation, entitlement string, offlinePods []string, whatIf []WhatIf) (*LoadsReport, error) {
	ix := newIndex(f, offlinePods)
	ge := ix.entitlement(entitlement)
	if ge == nil {
		return nil, &NotFoundError{Kind: objkind.Entitlement, Name: entitlement}
	}
	for _, p := range offlinePods {
		if ix.pod(p) == nil {
			return nil, &NotFoundError{Kind: objkind.Pod, Name: p}
		}
	}
	policy, warning := policyOf(ge)
	scope := Scope(strings.ToUpper(string(ge.Scope)))
	if scope != ScopeSite && scope != ScopeLocal {
		scope = ScopeAny
	}
	r := &LoadsReport{Entitlement: ge.Name, Policy: policy, Scope: scope, Threshold: f.Settings.LoadThresholdForSite,
		SkipsHighLoad: ge.UsePreferredSites && ge.IgnoreHighLoad && policyHasLoad(policy) && scope == ScopeAny,
		Sites:         []SiteFigures{}, Warnings: []string{}, WhatIf: append([]WhatIf{}, whatIf...)}
	if warning != "" {
		r.Warnings = append(r.Warnings, warning)
	}
	limit := big.NewRat(int64(r.Threshold), 1)
	above := func(load *big.Rat) bool { return load != nil && load.Cmp(limit) > 0 }
	pools := ix.poolsOf(ge)
	for _, name := range ix.siteNames {
		site := ix.site(name)
		list := get(pools.sites(), site.Name)
		sl := SiteFigures{Site: site.Name, Pods: []PodFigures{}}
		sl.Sessions, sl.Capacity = ix.totals(available(list, nil))
		load := ix.aggregateLoad(available(list, nil), policy)
		sl.Load, sl.AboveThreshold = loadValue(load), above(load)
		sl.PreferredSkip = r.SkipsHighLoad && sl.AboveThreshold
		for _, pod := range get(ix.sitePods, site.Name) {
			podPools := get(pools.pods(), pod.Name)
			if len(podPools) == 0 {
				continue
			}
			pl := PodFigures{Pod: pod.Name, Online: !ix.isOffline(pod.Name), Pools: []PoolFigures{}}
			pl.Sessions, pl.Capacity = ix.totals(available(podPools, nil))
			load := ix.aggregateLoad(available(podPools, nil), policy)
			pl.Load, pl.AboveThreshold = loadValue(load), above(load)
			for _, gp := range podPools {
				pl.Pools = append(pl.Pools, ix.poolFiguresOf(gp, policy))
			}
			sl.Pods = append(sl.Pods, pl)
		}
		r.Sites = append(r.Sites, sl)
	}
	return r, nil
}

// totals are the SESSION policy's sessions and capacity over available
// pools, a shared farm counted once.
func (ix *index) totals(pools []*Pool) (sessions, capacity int64) {
	seenFarm := map[string]bool{}
	for _, p := range pools {
		fig := ix.figures(p, PolicySession)
		if fig.farm != "" {
			if seenFarm[fig.farm] {
				continue
			}
			seenFarm[fig.farm] = true
		}
		sessions += fig.sessions
		capacity += fig.capacity
	}
	return sessions, capacity
}

// poolFiguresOf is one pool's line: its figures when available, else why not
// (and a desktop pool's stored counters).
func (ix *index) poolFiguresOf(gp gePool, policy Policy) PoolFigures {
	p := gp.pool
	pl := PoolFigures{Pool: gp.name, Unavailable: gp.why}
	if p == nil {
		return pl
	}
	pl.Kind, pl.Farm = p.Kind, p.Farm
	if gp.why != "" {
		if !p.Kind.FarmBacked() {
			pl.Sessions, pl.Capacity = int64(p.Sessions), int64(p.Capacity)
		}
		return pl
	}
	fig := ix.figures(p, PolicySession)
	pl.Sessions, pl.Capacity = fig.sessions, fig.capacity
	if policyHasLoad(policy) {
		pl.Load = loadValue(ix.figures(p, policy).load)
	}
	return pl
}
