package broker

// Steps 5-7 of the broker search: the site tiers, the search within a site,
// and NO_CAPACITY.

import (
	"fmt"
	"math/big"
	"sort"
	"strings"
)

// searchSites runs steps 5-7 and returns the decision (search: through
// the caller's Searches, when it gives one).
func (rs *resolver) searchSites() *Decision {
	rs.visited = map[string]bool{}
	rs.warnUnfitPools()

	start, startWhy := rs.site, "the connecting site (no home site applies)"
	if rs.homeSite != nil {
		start, startWhy = rs.homeSite, "the home site"
	}
	if rs.ge.IgnoreHighLoad && rs.ignoreHighLoad && !rs.ge.UsePreferredSites {
		rs.trace("tiers", "Ignore Preferred Sites with High Load has no effect: %s does not use preferred sites", rs.ge.Name)
	}

	if rs.scope != ScopeAny {
		rs.trace("tiers", "scope %s; the search never leaves the connecting site %s", rs.scopeWords(), rs.site.Name)
		if rs.ge.UsePreferredSites {
			rs.trace("tiers", "Use Preferred Sites has no effect: preferred sites apply only to scope ANY (All Sites), and %s has scope %s", rs.ge.Name, rs.scope)
		}
		tier := TierStarting
		if rs.homeSite != nil && !strings.EqualFold(rs.homeSite.Name, rs.site.Name) {
			reason := fmt.Sprintf("the home site is outside the scope, %s", rs.scopeWords())
			rs.d.SiteOrder = append(rs.d.SiteOrder, SiteVisit{
				Site: rs.homeSite.Name, Tier: TierStarting, Skipped: true, SkipReason: reason,
				Load: loadValue(rs.siteLoad(rs.homeSite)), Pods: []PodVisit{},
			})
			rs.trace("tiers", "starting site %s (the home site) is outside the scope %s: reported, not searched", rs.homeSite.Name, rs.scope)
			tier = TierConnecting
		}
		if d := rs.searchSite(rs.site, tier, nil); d != nil {
			return d
		}
		return rs.noCapacity()
	}

	// Scope ANY, tier by tier; a site is searched at most once.
	connecting := "the connecting site " + rs.site.Name
	if start == rs.site {
		connecting += " (the starting site itself)"
	}
	rs.trace("tiers", "scope ANY: (a) starting site %s, %s; (b) %s; (c) %s; (d) every other site with an available pool, %s",
		start.Name, startWhy, connecting, rs.preferredPlan(), rs.remainingPlan())
	if d := rs.searchSite(start, TierStarting, nil); d != nil {
		return d
	}
	if !get(rs.visited, rs.site.Name) {
		if d := rs.searchSite(rs.site, TierConnecting, nil); d != nil {
			return d
		}
	}
	if rs.ge.UsePreferredSites {
		if d := rs.searchPreferred(); d != nil {
			return d
		}
	}
	if d := rs.searchRemaining(); d != nil {
		return d
	}
	return rs.noCapacity()
}

// preferredPlan describes tier (c).
func (rs *resolver) preferredPlan() string {
	if !rs.ge.UsePreferredSites {
		return fmt.Sprintf("no preferred sites (%s does not use them)", rs.ge.Name)
	}
	if len(rs.site.PreferredSites) == 0 {
		return fmt.Sprintf("the preferred sites of %s: none configured", rs.site.Name)
	}
	s := fmt.Sprintf("the preferred sites of %s in rank order: %s", rs.site.Name, strings.Join(rs.site.PreferredSites, ", "))
	if rs.ignoreHighLoad {
		s += fmt.Sprintf(", skipping any whose load is above pae-LoadThresholdForSite %d", rs.ix.f.Settings.LoadThresholdForSite)
	}
	return s
}

// remainingPlan describes tier (d)'s order.
func (rs *resolver) remainingPlan() string {
	if policyHasLoad(rs.policy) {
		return fmt.Sprintf("least loaded first (%s; ties by name)", rs.policy)
	}
	return fmt.Sprintf("in seeded random order (NONE; seed %d, label %q)", rs.req.Seed, remainingLabel)
}

// searchPreferred is tier (c): the connecting site's preferred sites in rank
// order (the connecting site's list even when the search started at a home
// site), skipping a site whose load is strictly greater than
// pae-LoadThresholdForSite when Ignore Preferred Sites with High Load
// applies. A site skipped for load is not marked searched: tier (d) may
// still take it.
func (rs *resolver) searchPreferred() *Decision {
	if len(rs.site.PreferredSites) == 0 {
		rs.trace("tiers", "connecting site %s has no preferred sites", rs.site.Name)
		return nil
	}
	threshold := rs.ix.f.Settings.LoadThresholdForSite
	// A site listed twice (data lint reports) is considered once: a site
	// skipped for load is not searched, so visited does not catch it.
	considered := map[string]int{} // folded name -> first rank
	for rank, name := range rs.site.PreferredSites {
		site := rs.ix.site(name)
		if site == nil {
			rs.warn("preferred site %q (rank %d) of %s does not exist; skipped", name, rank+1, rs.site.Name)
			continue
		}
		if first, dup := considered[foldKey(site.Name)]; dup {
			rs.trace("tiers", "preferred site %s (rank %d) is listed again: already considered at rank %d", name, rank+1, first)
			continue
		}
		considered[foldKey(site.Name)] = rank + 1
		if get(rs.visited, site.Name) {
			rs.trace("tiers", "preferred site %s (rank %d) already searched", site.Name, rank+1)
			continue
		}
		var th *int
		if rs.ignoreHighLoad {
			load := rs.siteLoad(site)
			t := threshold
			th = &t
			if aboveThreshold(load, threshold) {
				reason := fmt.Sprintf("load %s above pae-LoadThresholdForSite %d (Ignore Preferred Sites with High Load)", FormatLoad(load), threshold)
				rs.d.SiteOrder = append(rs.d.SiteOrder, SiteVisit{
					Site: site.Name, Tier: TierPreferred, Skipped: true, SkipReason: reason,
					Load: loadValue(load), Threshold: th, Pods: []PodVisit{},
				})
				rs.trace("tiers", "preferred site %s (rank %d) skipped: %s (exactly %s); it stays a candidate for the remaining sites",
					site.Name, rank+1, reason, load.RatString())
				continue
			}
			if load != nil {
				rs.trace("tiers", "preferred site %s (rank %d): load %s is not above pae-LoadThresholdForSite %d (exactly %s): searched",
					site.Name, rank+1, FormatLoad(load), threshold, load.RatString())
			}
		}
		if d := rs.searchSite(site, TierPreferred, th); d != nil {
			return d
		}
	}
	return nil
}

// searchRemaining is tier (d): every site not yet searched that has an
// available pool of the GE, least loaded first under LOAD or SESSION (ties
// by name), in seeded random order under NONE.
func (rs *resolver) searchRemaining() *Decision {
	var cands, empty []string
	for _, name := range rs.ix.siteNames {
		if get(rs.visited, name) {
			continue
		}
		if rs.siteLoadPools(rs.ix.site(name)) == nil {
			empty = append(empty, name)
			continue
		}
		cands = append(cands, name)
	}
	if len(empty) > 0 {
		rs.trace("tiers", "not candidates for the remaining sites (no available pool of %s): %s", rs.ge.Name, strings.Join(empty, ", "))
	}
	if len(cands) == 0 {
		rs.trace("tiers", "no remaining site has an available pool of %s", rs.ge.Name)
		return nil
	}
	var order []string
	if policyHasLoad(rs.policy) {
		items := make([]loaded, len(cands))
		for i, name := range cands {
			items[i] = loaded{name: name, load: rs.siteLoad(rs.ix.site(name))}
		}
		sortLoaded(items)
		for _, it := range items {
			order = append(order, it.name)
		}
		rs.trace("tiers", "remaining sites, least loaded first (%s): %s", rs.policy, renderLoaded(items))
		for _, t := range tieNotes(items, "sites") {
			rs.trace("tiers", "%s", t)
		}
	} else {
		order = randomOrder(rs.req.Seed, remainingLabel, cands)
		rs.trace("random", "remaining sites in random order (seed %d, label %q): candidates %s → order %s",
			rs.req.Seed, remainingLabel, strings.Join(sortedCopy(cands), ", "), strings.Join(order, ", "))
	}
	for _, name := range order {
		if d := rs.searchSite(rs.ix.site(name), TierRemaining, nil); d != nil {
			return d
		}
	}
	return nil
}

// siteLoadPools returns the GE's available pools in site within the scope,
// or nil.
func (rs *resolver) siteLoadPools(site *Site) []*Pool {
	return available(get(rs.ix.poolsOf(rs.ge).sites(), site.Name), func(gp gePool) bool {
		return rs.inScope(rs.ix.pods[gp.pod])
	})
}

// siteLoad is the load of site under the GE's policy, over its available
// pools within the scope; nil under NONE or when it has none.
func (rs *resolver) siteLoad(site *Site) *big.Rat {
	return rs.ix.aggregateLoad(rs.siteLoadPools(site), rs.policy)
}

// podPools splits the GE's pools in pod into available ones and the others.
func (rs *resolver) podPools(pod *Pod) (avail []*Pool, other []gePool) {
	for _, gp := range get(rs.ix.poolsOf(rs.ge).pods(), pod.Name) {
		if gp.why == "" {
			avail = append(avail, gp.pool)
		} else {
			other = append(other, gp)
		}
	}
	return avail, other
}

// loaded is a candidate with its load, for ordering by load.
type loaded struct {
	name       string
	load       *big.Rat
	connecting bool // the connecting pod wins ties (pods only)
}

// sortLoaded orders least loaded first; ties: the connecting pod, then name.
// Loads compare exactly.
func sortLoaded(items []loaded) {
	sort.SliceStable(items, func(i, j int) bool {
		if c := items[i].load.Cmp(items[j].load); c != 0 {
			return c < 0
		}
		if items[i].connecting != items[j].connecting {
			return items[i].connecting
		}
		return nameLess(items[i].name, items[j].name)
	})
}

// renderLoaded lists items with their loads.
func renderLoaded(items []loaded) string {
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = fmt.Sprintf("%s %s", it.name, FormatLoad(it.load))
	}
	return strings.Join(parts, ", ")
}

// tieNotes explains how exact ties in a sorted list were broken.
func tieNotes(items []loaded, what string) []string {
	var notes []string
	for i := 1; i < len(items); i++ {
		a, b := items[i-1], items[i]
		if a.load.Cmp(b.load) != 0 {
			continue
		}
		by := "name"
		if a.connecting {
			by = "the connecting pod first"
		}
		notes = append(notes, fmt.Sprintf("%s %s and %s tie at exactly %s: %s goes first (%s)", what, a.name, b.name, a.load.RatString(), a.name, by))
	}
	return notes
}

// placed is the pool that takes the session.
type placed struct {
	pool *Pool
	farm *Farm
	sel  *HostSelection
}

// searchSite searches one site (step 6) and appends its visit to the site
// order. It returns the decision when a pool takes the session, nil to go
// on. threshold is set when the site's load was compared with
// pae-LoadThresholdForSite.
func (rs *resolver) searchSite(site *Site, tier Tier, threshold *int) *Decision {
	rs.visited[foldKey(site.Name)] = true
	v := SiteVisit{Site: site.Name, Tier: tier, Load: loadValue(rs.siteLoad(site)), Threshold: threshold, Pods: []PodVisit{}}

	// The candidate pods: in scope, online, holding an available pool.
	var cands []*Pod
	var skipped []PodVisit
	for _, pod := range rs.ix.podsOf(site.Name) {
		pv := PodVisit{Pod: pod.Name, Connecting: rs.isConnecting(pod), Status: StatusSkipped, Pools: []PoolVisit{}}
		avail, other := rs.podPools(pod)
		switch {
		case !rs.inScope(pod):
			pv.SkipReason = fmt.Sprintf("outside the scope (%s)", rs.scopeWords())
		case rs.ix.isOffline(pod.Name):
			pv.SkipReason = "pod is offline"
			pv.Pools = rs.unavailableVisits(other)
		case len(avail) == 0:
			pv.SkipReason = fmt.Sprintf("no available pool of %s", rs.ge.Name)
			pv.Pools = rs.unavailableVisits(other)
		default:
			cands = append(cands, pod)
			continue
		}
		skipped = append(skipped, pv)
	}
	for _, pv := range skipped {
		rs.trace("pod", "site %s, pod %s skipped: %s", site.Name, pv.Pod, pv.SkipReason)
	}
	if len(cands) == 0 {
		v.Skipped = true
		v.SkipReason = fmt.Sprintf("no online pod in scope with an available pool of %s", rs.ge.Name)
		v.Pods = skipped
		rs.d.SiteOrder = append(rs.d.SiteOrder, v)
		rs.trace("site", "site %s (%s): skipped, %s", site.Name, tier, v.SkipReason)
		return nil
	}
	v.Searched = true
	if policyHasLoad(rs.policy) {
		rs.trace("site", "site %s (%s): searched, load %s", site.Name, tier, FormatLoad(rs.siteLoad(site)))
	} else {
		rs.trace("site", "site %s (%s): searched", site.Name, tier)
	}

	order := rs.orderPods(site, cands, &v)
	var found *placed
	var foundPod *Pod
	for _, pod := range order {
		if found != nil {
			v.Pods = append(v.Pods, PodVisit{Pod: pod.Name, Connecting: rs.isConnecting(pod), Status: StatusNotReached,
				Load: loadValue(rs.ix.podLoad(rs.ge, pod.Name, rs.policy)), Pools: []PoolVisit{}})
			continue
		}
		pv, p := rs.searchPod(pod)
		v.Pods = append(v.Pods, pv)
		if p != nil {
			found, foundPod = p, pod
		}
	}
	v.Pods = append(v.Pods, skipped...)
	rs.d.SiteOrder = append(rs.d.SiteOrder, v)
	if found == nil {
		return nil
	}
	return rs.place(site, tier, foundPod, found)
}

// isConnecting reports whether pod is the connecting pod.
func (rs *resolver) isConnecting(pod *Pod) bool { return strings.EqualFold(pod.Name, rs.pod.Name) }

// orderPods orders a site's candidate pods: under NONE the connecting pod
// first, then the others in seeded random order labelled with the site's
// name; under LOAD or SESSION least loaded first, ties the connecting pod
// then name.
func (rs *resolver) orderPods(site *Site, cands []*Pod, v *SiteVisit) []*Pod {
	byName := map[string]*Pod{}
	for _, p := range cands {
		byName[foldKey(p.Name)] = p
	}
	var order []*Pod
	if !policyHasLoad(rs.policy) {
		var others []string
		for _, p := range cands {
			if rs.isConnecting(p) {
				order = append(order, p)
			} else {
				others = append(others, p.Name)
			}
		}
		shuffled := randomOrder(rs.req.Seed, site.Name, others)
		for _, name := range shuffled {
			order = append(order, get(byName, name))
		}
		v.PodOrder = fmt.Sprintf("connecting pod first when in this site, then random (seed %d, label %q)", rs.req.Seed, site.Name)
		if len(others) > 0 {
			rs.trace("random", "pods of site %s in random order (seed %d, label %q): candidates %s → order %s",
				site.Name, rs.req.Seed, site.Name, strings.Join(sortedCopy(others), ", "), strings.Join(shuffled, ", "))
		}
		rs.trace("site", "site %s: pods in order %s (NONE: connecting pod first, then random)", site.Name, podNames(order))
		return order
	}
	items := make([]loaded, len(cands))
	for i, p := range cands {
		items[i] = loaded{name: p.Name, load: rs.ix.podLoad(rs.ge, p.Name, rs.policy), connecting: rs.isConnecting(p)}
	}
	sortLoaded(items)
	for _, it := range items {
		order = append(order, get(byName, it.name))
	}
	v.PodOrder = fmt.Sprintf("least loaded first (%s); ties: the connecting pod, then name", rs.policy)
	rs.trace("site", "site %s: pods least loaded first (%s): %s", site.Name, rs.policy, renderLoaded(items))
	for _, t := range tieNotes(items, "pods") {
		rs.trace("site", "%s", t)
	}
	return order
}

// podNames lists pods' names.
func podNames(pods []*Pod) string {
	names := make([]string, len(pods))
	for i, p := range pods {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// unavailableVisits lists unavailable pools.
func (rs *resolver) unavailableVisits(other []gePool) []PoolVisit {
	out := []PoolVisit{}
	for _, gp := range other {
		pv := PoolVisit{Pool: gp.name, Status: StatusUnavailable, Detail: gp.why}
		if gp.pool != nil {
			pv.Kind = gp.pool.Kind
			if gp.pool.Kind.FarmBacked() {
				pv.Farm = gp.pool.Farm
			}
		}
		out = append(out, pv)
	}
	return out
}

// searchPod tries the GE's available pools of pod in order (NONE: by name;
// LOAD or SESSION: least loaded first, ties by name) and returns the pod's
// visit and the pool that takes the session, if any.
func (rs *resolver) searchPod(pod *Pod) (PodVisit, *placed) {
	pv := PodVisit{Pod: pod.Name, Connecting: rs.isConnecting(pod), Status: StatusSearched,
		Load: loadValue(rs.ix.podLoad(rs.ge, pod.Name, rs.policy)), Pools: []PoolVisit{}}
	avail, other := rs.podPools(pod) // avail is in name order
	if policyHasLoad(rs.policy) {
		items := make([]loaded, len(avail))
		byName := map[string]*Pool{}
		for i, p := range avail {
			items[i] = loaded{name: p.Name, load: rs.ix.figures(p, rs.policy).load}
			byName[foldKey(p.Name)] = p
		}
		sortLoaded(items)
		for i, it := range items {
			avail[i] = byName[foldKey(it.name)]
		}
		rs.trace("pod", "pod %s (load %s): pools least loaded first (%s): %s", pod.Name, FormatLoad(rs.ix.podLoad(rs.ge, pod.Name, rs.policy)), rs.policy, renderLoaded(items))
		for _, t := range tieNotes(items, "pools") {
			rs.trace("pod", "%s", t)
		}
	} else {
		names := make([]string, len(avail))
		for i, p := range avail {
			names[i] = p.Name
		}
		rs.trace("pod", "pod %s: pools in name order: %s", pod.Name, strings.Join(names, ", "))
	}
	var found *placed
	for _, p := range avail {
		visit := PoolVisit{Pool: p.Name, Kind: p.Kind}
		if policyHasLoad(rs.policy) {
			visit.Load = loadValue(rs.ix.figures(p, rs.policy).load)
		}
		if p.Kind.FarmBacked() {
			visit.Farm = rs.ix.farm(p.Farm).Name
		}
		if found != nil {
			visit.Status, visit.Detail = StatusNotTried, "a pool earlier in the order took the session"
			pv.Pools = append(pv.Pools, visit)
			continue
		}
		found = rs.tryPool(p, &visit)
		pv.Pools = append(pv.Pools, visit)
		rs.trace("pod", "pool %s: %s", p.Name, visit.Detail)
	}
	pv.Pools = append(pv.Pools, rs.unavailableVisits(other)...)
	for _, gp := range other {
		rs.trace("pod", "pool %s unavailable: %s", gp.name, gp.why)
	}
	return pv, found
}

// tryPool applies the capacity test of step 6 to an available pool: a
// floating desktop pool has room while sessions < capacity, a dedicated one
// while assigned < capacity; a farm-backed pool when its farm yields a host
// (docs/storm.md).
func (rs *resolver) tryPool(p *Pool, visit *PoolVisit) *placed {
	if !p.Kind.FarmBacked() {
		used, what := p.Sessions, "sessions"
		if p.Dedicated {
			used, what = p.Assigned, "assigned machines"
		}
		if used < p.Capacity {
			visit.Status = StatusPlaced
			visit.Detail = fmt.Sprintf("room: %s %d of capacity %d", what, used, p.Capacity)
			return &placed{pool: p}
		}
		visit.Status = StatusFull
		visit.Detail = fmt.Sprintf("full: %s %d of capacity %d", what, used, p.Capacity)
		return nil
	}
	farm := rs.ix.farm(p.Farm)
	hosts := rs.ix.hostsOf(farm.Name)
	t, sources := ThresholdsFor(rs.ix.f.Settings, rs.ix.pod(farm.Pod))
	rs.trace("thresholds", "farm %s of pod %s: %s", farm.Name, farm.Pod, sources.String(t))
	for _, h := range hosts {
		if ht := hostPolicy(*farm, h); ht != nil {
			rs.trace("thresholds", "host %s: load index threshold %s (%s), connecting session threshold %s (%s)", h.Name,
				offWord(ht.LoadIndexThreshold), ht.LoadIndexSource, offWord(ht.ConnectingSessionThreshold), ht.ConnectingSessionSource)
		}
	}
	sel := SelectHost(*farm, hosts, HostRequest{Protocol: rs.protocol, Unauthenticated: rs.req.Unauthenticated}, t)
	visit.HostSelection = &sel
	if sel.Chosen == "" {
		var refusals []string
		for _, h := range sel.Hosts {
			if !h.Candidate {
				refusals = append(refusals, fmt.Sprintf("%s %s", h.Host, h.Refused))
			}
		}
		visit.Status = StatusNoHost
		visit.Detail = fmt.Sprintf("farm %s yields no host for the request (%s)", farm.Name, strings.Join(refusals, "; "))
		return nil
	}
	visit.Status = StatusPlaced
	visit.Detail = fmt.Sprintf("farm %s: host %s from bucket %d (eligible: %s)", farm.Name, sel.Chosen, sel.Bucket, strings.Join(sel.Eligible, ", "))
	return &placed{pool: p, farm: farm, sel: &sel}
}

// place builds the PLACED decision.
func (rs *resolver) place(site *Site, tier Tier, pod *Pod, p *placed) *Decision {
	pl := &Placement{Site: site.Name, Pod: pod.Name, Pool: p.pool.Name, BecomesAssignment: rs.dedicated}
	where := fmt.Sprintf("pool %s on pod %s of site %s", p.pool.Name, pod.Name, site.Name)
	if p.farm != nil {
		pl.Farm, pl.Host, pl.EligibleHosts, pl.HostSelection = p.farm.Name, p.sel.Chosen, p.sel.Eligible, p.sel
		where += fmt.Sprintf(", host %s of farm %s", p.sel.Chosen, p.farm.Name)
		if p.sel.Bucket == 1 && len(p.sel.Eligible) > 1 {
			rs.trace("host", "bucket 1 shares sessions by rotation: any of %s may serve, depending on the broker's rotation position (not stored); %s is the first by name",
				strings.Join(p.sel.Eligible, ", "), p.sel.Chosen)
		}
	}
	rs.d.Placement = pl
	if rs.dedicated {
		rs.trace("assignment", "pod %s would become %s's pod assignment for %s", pod.Name, rs.user.Name, rs.ge.Name)
	}
	suffix := ""
	if rs.dedicated {
		suffix = ", which becomes the user's pod assignment"
	}
	return rs.finish(OutcomePlaced, "new session in %s, the first pool with room, found in %s%s", where, rs.tierWords(site, tier), suffix)
}

// tierWords describes where a site stands in the search.
func (rs *resolver) tierWords(site *Site, tier Tier) string {
	switch tier {
	case TierStarting:
		if rs.homeSite != nil && strings.EqualFold(rs.homeSite.Name, site.Name) {
			return "the home site (starting site)"
		}
		return "the connecting site (starting site)"
	case TierConnecting:
		return "the connecting site"
	case TierPreferred:
		for i, s := range rs.site.PreferredSites {
			if strings.EqualFold(s, site.Name) {
				return fmt.Sprintf("preferred site %d of %s", i+1, rs.site.Name)
			}
		}
		return "a preferred site"
	}
	return "the remaining sites"
}

// noCapacity is step 7: nothing in any tier took the session.
func (rs *resolver) noCapacity() *Decision {
	var items []string
	for _, v := range rs.d.SiteOrder {
		if v.Skipped {
			items = append(items, fmt.Sprintf("site %s skipped (%s)", v.Site, v.SkipReason))
			continue
		}
		for _, pv := range v.Pods {
			if pv.Status == StatusSkipped && rs.inScope(rs.ix.pod(pv.Pod)) {
				items = append(items, fmt.Sprintf("pod %s skipped (%s)", pv.Pod, pv.SkipReason))
			}
			for _, pool := range pv.Pools {
				switch pool.Status {
				case StatusFull:
					items = append(items, fmt.Sprintf("pool %s full", pool.Pool))
				case StatusNoHost:
					items = append(items, fmt.Sprintf("pool %s: no RDS host can take the session", pool.Pool))
				}
			}
		}
	}
	if len(items) == 0 {
		return rs.finish(OutcomeNoCapacity, "nothing in scope can take the session: no site in scope has an available pool of %s", rs.ge.Name)
	}
	return rs.finish(OutcomeNoCapacity, "nothing in scope can take the session: %s", strings.Join(items, "; "))
}

// warnUnfitPools warns about pools of the GE that cannot serve it whatever
// the load: missing pools, pools on unknown pods, pools of the wrong kind.
func (rs *resolver) warnUnfitPools() {
	if len(rs.ge.Pools) == 0 {
		rs.warn("entitlement %s has no associated pool", rs.ge.Name)
	}
	for _, gp := range rs.ix.entitlementPools(rs.ge) {
		switch {
		case gp.pool == nil:
			rs.warn("entitlement %s lists pool %q, which does not exist; ignored", rs.ge.Name, gp.name)
		case rs.ix.pod(gp.pool.Pod) == nil:
			rs.warn("pool %s of %s is on pod %q, which does not exist; ignored", gp.name, rs.ge.Name, gp.pool.Pod)
		case poolMismatch(rs.ge, gp.pool) != "":
			rs.warn("pool %s of %s: %s; ignored", gp.name, rs.ge.Name, gp.why)
		}
	}
}

// offWord renders a host-side threshold, 0 being off.
func offWord(v int) string {
	if v == 0 {
		return "off"
	}
	return fmt.Sprint(v)
}
