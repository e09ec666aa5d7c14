package broker

// Availability and load (docs/resolve.md, "Loads").
//
// Loads are exact rational numbers: no integer division, no rounding, and
// every comparison (orderings, ties, the "strictly greater than
// pae-LoadThresholdForSite" test) is made on exact values. Only output
// rounds, to two decimals (FormatLoad).

import (
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/cpactl/cpactl/internal/fold"
)

// unlimitedSessionsPerHost is what a farm's "unlimited" (0) max sessions per
// host counts as under the SESSION policy.
const unlimitedSessionsPerHost = 150

// poolUnavailable says why pool p takes no part in any load, capacity or
// candidate list, or returns "" when it is available: an offline or unknown
// pod, a disabled pool, or a pool that can hold no session (capacity 0, a
// farm that does not exist or has no enabled host).
func (ix *index) poolUnavailable(p *Pool) string {
	pod := ix.pod(p.Pod)
	switch {
	case !p.Enabled:
		return "pool is disabled"
	case pod == nil:
		return fmt.Sprintf("pod %q does not exist", p.Pod)
	case ix.isOffline(pod.Name):
		return fmt.Sprintf("pod %s is offline", pod.Name)
	}
	if !p.Kind.FarmBacked() {
		if p.Capacity <= 0 {
			return "capacity 0: the pool can hold no session"
		}
		return ""
	}
	farm := ix.farm(p.Farm)
	if farm == nil {
		return fmt.Sprintf("farm %q does not exist", p.Farm)
	}
	if !hasEnabledHost(ix.hostsOf(farm.Name)) {
		return fmt.Sprintf("farm %s has no enabled host", farm.Name)
	}
	return ""
}

// hasEnabledHost reports whether a host of the list is enabled.
func hasEnabledHost(hosts []Host) bool {
	for _, h := range hosts {
		if h.Enabled {
			return true
		}
	}
	return false
}

// poolFigures are one available pool's load figures under one policy.
type poolFigures struct {
	// load is the pool load: sessions*100/capacity for a desktop pool;
	// for a farm-backed pool the mean load index of the farm's enabled
	// hosts (LOAD) or sessions*100/(hosts*max sessions per host) (SESSION).
	load *big.Rat
	// sessions and capacity are the SESSION policy's totals: a desktop
	// pool's sessions and machines, a farm's enabled hosts' sessions and
	// their session limits (unlimited counting as 150).
	sessions, capacity int64
	// farm is the folded name of the farm serving the pool, "" for a
	// desktop pool: pools sharing a farm share its figures.
	farm string
}

// figures computes the load figures of available pool p under policy, which
// must be LOAD or SESSION.
func (ix *index) figures(p *Pool, policy Policy) poolFigures {
	if !p.Kind.FarmBacked() {
		return poolFigures{
			load:     big.NewRat(int64(p.Sessions)*100, int64(p.Capacity)),
			sessions: int64(p.Sessions),
			capacity: int64(p.Capacity),
		}
	}
	farm := ix.farm(p.Farm)
	perHost := int64(farm.MaxSessionsPerHost)
	if perHost <= 0 {
		perHost = unlimitedSessionsPerHost
	}
	fig := poolFigures{farm: foldKey(farm.Name)}
	var indexSum, indexed int64
	for _, h := range ix.hostsOf(farm.Name) {
		if !h.Enabled {
			continue
		}
		fig.capacity += perHost
		fig.sessions += int64(h.Sessions)
		if h.LoadIndex >= 0 { // -1: load balancing disabled, left out of the mean
			indexSum += int64(h.LoadIndex)
			indexed++
		}
	}
	switch {
	case policy == PolicySession:
		fig.load = big.NewRat(fig.sessions*100, fig.capacity)
	case indexed == 0:
		fig.load = new(big.Rat)
	default:
		fig.load = big.NewRat(indexSum, indexed)
	}
	return fig
}

// aggregateLoad is the load of a pod or a site over the given available
// pools: the mean pool load (LOAD), or total sessions over total capacity
// times 100 (SESSION). Under SESSION a farm shared by several of the pools
// is counted once, since its sessions are one set of sessions. nil when
// pools is empty (nothing left: no load).
func (ix *index) aggregateLoad(pools []*Pool, policy Policy) *big.Rat {
	if len(pools) == 0 || !policyHasLoad(policy) {
		return nil
	}
	if policy == PolicyLoad {
		sum := new(big.Rat)
		for _, p := range pools {
			sum.Add(sum, ix.figures(p, policy).load)
		}
		return sum.Quo(sum, big.NewRat(int64(len(pools)), 1))
	}
	sessions, capacity := ix.totals(pools)
	return big.NewRat(sessions*100, capacity)
}

// policyHasLoad reports whether policy defines loads (LOAD and SESSION do;
// NONE orders at random).
func policyHasLoad(p Policy) bool { return p == PolicyLoad || p == PolicySession }

// FormatLoad renders a load rounded to two decimals ("33.33"), or "-" when
// there is none.
func FormatLoad(load *big.Rat) string {
	if load == nil {
		return "-"
	}
	return load.FloatString(2)
}

// loadValue is a load as output shows it: rounded to two decimals, nil when
// there is none.
func loadValue(load *big.Rat) *float64 {
	if load == nil {
		return nil
	}
	v, err := strconv.ParseFloat(load.FloatString(2), 64)
	if err != nil {
		return nil
	}
	return &v
}

// podLoad is the load of a pod for ge under policy: over ge's available
// pools in that pod, the mean pool load (LOAD) or total sessions over total
// capacity times 100 (SESSION); nil when nothing is left, or under NONE.
func (ix *index) podLoad(ge *Entitlement, pod string, policy Policy) *big.Rat {
	return ix.aggregateLoad(available(get(ix.poolsOf(ge).pods(), pod), nil), policy)
}

// gePool is one pool associated with a global entitlement, with why it is
// unavailable ("" when available).
type gePool struct {
	name string // as listed by the entitlement, or the pool's stored name
	pool *Pool  // nil when the pool does not exist
	why  string
	pod  string // folded name of the pool's pod, "" when unknown
	site string // folded name of that pod's site, "" when unknown
}

// entitlementPools lists the pools associated with ge in name order, each
// with why it is unavailable for ge: the reasons of poolUnavailable, plus a
// pool that cannot serve this entitlement (a desktop pool in an application
// entitlement or the reverse, a floating pool in a dedicated entitlement or
// the reverse: data lint reports).
func (ix *index) entitlementPools(ge *Entitlement) []gePool {
	return ix.poolsOf(ge).all
}

// gePools are the pools of one GE, whole and grouped by pod and by site
// (folded names), each list in name order. The groups are made when
// first asked for (a request that ends before the site search, or has
// it remembered, asks only for the whole list).
type gePools struct {
	all    []gePool
	byPod  map[string][]gePool
	bySite map[string][]gePool
}

// pods returns the pools by folded pod name.
func (g *gePools) pods() map[string][]gePool {
	g.group()
	return g.byPod
}

// sites returns the pools by folded site name.
func (g *gePools) sites() map[string][]gePool {
	g.group()
	return g.bySite
}

func (g *gePools) group() {
	if g.byPod != nil {
		return
	}
	g.byPod, g.bySite = map[string][]gePool{}, map[string][]gePool{}
	for _, gp := range g.all {
		if gp.pod != "" {
			g.byPod[gp.pod] = append(g.byPod[gp.pod], gp)
			g.bySite[gp.site] = append(g.bySite[gp.site], gp)
		}
	}
}

// poolsOf lists and groups ge's pools, once per index.
func (ix *index) poolsOf(ge *Entitlement) *gePools {
	if cached, ok := ix.gePools[ge]; ok {
		return cached
	}
	out := make([]gePool, 0, len(ge.Pools))
	// The names seen, folded; a few are compared with strings.EqualFold
	// (which accepts exactly the names that fold alike) rather than put
	// in a map.
	var seen map[string]bool
	if len(ge.Pools) > scanned {
		seen = map[string]bool{}
	}
	for i, name := range ge.Pools {
		if seen != nil {
			k := foldKey(name)
			if seen[k] {
				continue
			}
			seen[k] = true
		} else if fold.Contains(ge.Pools[:i], name) {
			continue
		}
		p := ix.pool(name)
		if p == nil {
			out = append(out, gePool{name: name, why: fmt.Sprintf("pool %q does not exist", name)})
			continue
		}
		gp := gePool{name: p.Name, pool: p, why: ix.poolUnfit(ge, p)}
		if pod := ix.pod(p.Pod); pod != nil {
			gp.pod, gp.site = foldKey(pod.Name), foldKey(pod.Site)
		}
		out = append(out, gp)
	}
	slices.SortStableFunc(out, func(a, b gePool) int {
		switch {
		case nameLess(a.name, b.name):
			return -1
		case nameLess(b.name, a.name):
			return 1
		}
		return 0
	})
	g := &gePools{all: out}
	ix.gePools[ge] = g
	return g
}

// poolUnfit says why pool p cannot take ge's sessions, or "": a kind
// mismatch (poolMismatch) or unavailability (poolUnavailable).
func (ix *index) poolUnfit(ge *Entitlement, p *Pool) string {
	if why := poolMismatch(ge, p); why != "" {
		return why
	}
	return ix.poolUnavailable(p)
}

// poolMismatch says why a pool of this kind cannot serve ge, or "".
func poolMismatch(ge *Entitlement, p *Pool) string {
	app := strings.EqualFold(string(ge.Type), string(TypeApplication))
	switch {
	case app && p.Kind != KindApplication:
		return fmt.Sprintf("a %s pool cannot serve an application entitlement", p.Kind)
	case !app && p.Kind == KindApplication:
		return "an application pool cannot serve a desktop entitlement"
	case !app && ge.Dedicated && (p.Kind != KindDesktop || !p.Dedicated):
		return "a floating pool cannot serve a dedicated entitlement"
	case !app && !ge.Dedicated && p.Kind == KindDesktop && p.Dedicated:
		return "a dedicated pool cannot serve a floating entitlement"
	}
	return ""
}

// available keeps the available pools of a list.
func available(list []gePool, keep func(gePool) bool) []*Pool {
	var out []*Pool
	for _, gp := range list {
		if gp.pool != nil && gp.why == "" && (keep == nil || keep(gp)) {
			out = append(out, gp.pool)
		}
	}
	return out
}
