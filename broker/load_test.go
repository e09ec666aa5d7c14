package broker

import (
	"fmt"
	"math/big"
	"testing"
)

// The entry points below ask the load rules about one named object; the
// resolver asks the index directly (podLoad, resolver.siteLoad).

// PoolAvailability reports whether the named pool takes part in loads,
// capacity tests and candidate lists (docs/resolve.md, "Loads"), and why not: offline pods
// (stored as offline or listed in offlinePods), disabled pools and pools
// that can hold no session (capacity 0, a farm with no enabled host) are left
// out. A pool that does not exist is reported as unavailable.
func PoolAvailability(f *Federation, pool string, offlinePods []string) (available bool, why string) {
	ix := newIndex(f, offlinePods)
	p := ix.pool(pool)
	if p == nil {
		return false, fmt.Sprintf("pool %q does not exist", pool)
	}
	why = ix.poolUnavailable(p)
	return why == "", why
}

// PoolLoad returns the load of the named pool under policy (docs/resolve.md, "Loads"):
// desktop pools sessions*100/capacity; farm-backed pools the mean load index
// of the farm's enabled hosts, hosts at -1 left out, 0 when none is left
// (LOAD), or sessions*100/(hosts*max sessions per host) over the enabled
// hosts, unlimited counting as 150 (SESSION). It returns nil when the pool
// is not available (see PoolAvailability) or the policy is NONE, which
// defines no load.
func PoolLoad(f *Federation, pool string, policy Policy, offlinePods []string) *big.Rat {
	ix := newIndex(f, offlinePods)
	p := ix.pool(pool)
	if p == nil || !policyHasLoad(policy) || ix.poolUnavailable(p) != "" {
		return nil
	}
	return ix.figures(p, policy).load
}

// PodLoad returns the load of a pod for the named global entitlement under
// policy: over the entitlement's available pools in that pod, the mean pool
// load (LOAD) or total sessions over total capacity times 100 (SESSION). It
// returns nil when the pod has no available pool of the entitlement (nothing
// left: no load), when the entitlement does not exist, or under NONE.
func PodLoad(f *Federation, entitlement, pod string, policy Policy, offlinePods []string) *big.Rat {
	ix := newIndex(f, offlinePods)
	ge := ix.entitlement(entitlement)
	if ge == nil {
		return nil
	}
	return ix.podLoad(ge, pod, policy)
}

// SiteLoad returns the load of a site for the named global entitlement under
// policy, computed like PodLoad over the entitlement's available pools in
// the site's online pods. This is the load compared with
// pae-LoadThresholdForSite when Ignore Preferred Sites with High Load
// applies. nil when the site has no available pool of the entitlement, when
// the entitlement does not exist, or under NONE.
func SiteLoad(f *Federation, entitlement, site string, policy Policy, offlinePods []string) *big.Rat {
	ix := newIndex(f, offlinePods)
	ge := ix.entitlement(entitlement)
	if ge == nil {
		return nil
	}
	return ix.siteLoad(ge, site, policy)
}

// siteLoad is SiteLoad over an index.
func (ix *index) siteLoad(ge *Entitlement, site string, policy Policy) *big.Rat {
	return ix.aggregateLoad(available(ix.poolsOf(ge).sites()[foldKey(site)], nil), policy)
}

// loadFederation: GE "G" with pods p1 (site S) and p2 (site S) and p3 (site
// T). p1: desktop pool d1 (1 of 3) and RDS pool r1 on farm F1; p2: desktop
// pool d2 (5 of 10); p3: application pool a3 on farm F3.
func loadFederation() *Federation {
	return &Federation{
		Sites: []Site{{Name: "S"}, {Name: "T"}},
		Pods: []Pod{
			{Name: "p1", Site: "S", Online: true},
			{Name: "p2", Site: "S", Online: true},
			{Name: "p3", Site: "T", Online: true},
		},
		Entitlements: []Entitlement{{Name: "G", Pools: []string{"d1", "r1", "d2"}}},
		Pools: []Pool{
			{Name: "d1", Pod: "p1", Kind: KindDesktop, Capacity: 3, Sessions: 1, Enabled: true},
			{Name: "r1", Pod: "p1", Kind: KindRDSDesktop, Farm: "F1", Enabled: true},
			{Name: "r1b", Pod: "p1", Kind: KindRDSDesktop, Farm: "F1", Enabled: true},
			{Name: "d2", Pod: "p2", Kind: KindDesktop, Capacity: 10, Sessions: 5, Enabled: true},
			{Name: "a3", Pod: "p3", Kind: KindApplication, Farm: "F3", Enabled: true},
			{Name: "off", Pod: "p2", Kind: KindDesktop, Capacity: 10, Enabled: false},
			{Name: "zero", Pod: "p2", Kind: KindDesktop, Capacity: 0, Enabled: true},
		},
		Farms: []Farm{{Name: "F1", Pod: "p1", MaxSessionsPerHost: 50}, {Name: "F3", Pod: "p3"}, {Name: "F0", Pod: "p3"}},
		Hosts: []Host{
			{Name: "h1", Farm: "F1", LoadIndex: 10, Sessions: 5, Enabled: true},
			{Name: "h2", Farm: "F1", LoadIndex: 20, Sessions: 10, Enabled: true},
			{Name: "h3", Farm: "F1", LoadIndex: -1, Sessions: 0, Enabled: true},
			{Name: "h4", Farm: "F1", LoadIndex: 90, Sessions: 40, Enabled: false},
			{Name: "h5", Farm: "F3", LoadIndex: -1, Sessions: 30, Enabled: true},
			{Name: "h6", Farm: "F3", LoadIndex: -1, Sessions: 0, Enabled: true},
			{Name: "h7", Farm: "F0", LoadIndex: 5, Enabled: false},
		},
	}
}

func rat(a, b int64) *big.Rat { return big.NewRat(a, b) }

func TestLoads(t *testing.T) {
	f := loadFederation()
	f.Pools = append(f.Pools, Pool{Name: "r0", Pod: "p3", Kind: KindRDSDesktop, Farm: "F0", Enabled: true})
	cases := []struct {
		name string
		got  *big.Rat
		want *big.Rat // nil: no load
	}{
		{"desktop pool: sessions*100/capacity, exact", PoolLoad(f, "d1", PolicyLoad, nil), rat(100, 3)},
		{"desktop pool: the same under SESSION", PoolLoad(f, "D1", PolicySession, nil), rat(100, 3)},
		{"farm pool LOAD: mean load index of enabled hosts, -1 left out", PoolLoad(f, "r1", PolicyLoad, nil), rat(15, 1)},
		{"farm pool LOAD: every host at -1 gives 0", PoolLoad(f, "a3", PolicyLoad, nil), rat(0, 1)},
		{"farm pool SESSION: sessions*100/(hosts*max) over enabled hosts", PoolLoad(f, "r1", PolicySession, nil), rat(1500, 150)},
		{"farm pool SESSION: unlimited counts as 150", PoolLoad(f, "a3", PolicySession, nil), rat(3000, 300)},
		{"NONE defines no load", PoolLoad(f, "d1", PolicyNone, nil), nil},
		{"a disabled pool has no load", PoolLoad(f, "off", PolicyLoad, nil), nil},
		{"a pool of capacity 0 has no load", PoolLoad(f, "zero", PolicyLoad, nil), nil},
		{"a farm with no enabled host has no load", PoolLoad(f, "r0", PolicyLoad, nil), nil},
		{"a pool on an offline pod has no load", PoolLoad(f, "d1", PolicyLoad, []string{"p1"}), nil},
		{"an unknown pool has no load", PoolLoad(f, "nope", PolicyLoad, nil), nil},
		{"pod LOAD: mean pool load", PodLoad(f, "G", "p1", PolicyLoad, nil), rat(100+45, 2*3)}, // (100/3 + 15) / 2
		{"pod SESSION: total sessions over total capacity", PodLoad(f, "G", "p1", PolicySession, nil), rat((1+15)*100, 3+150)},
		{"pod load counts only the GE's available pools", PodLoad(f, "G", "p2", PolicyLoad, nil), rat(50, 1)},
		{"a pod without the GE's pools has no load", PodLoad(f, "G", "p3", PolicyLoad, nil), nil},
		{"site LOAD: mean over the site's pools", SiteLoad(f, "G", "S", PolicyLoad, nil), rat(100+45+150, 3*3)}, // (100/3 + 15 + 50) / 3
		{"site SESSION: totals over the site", SiteLoad(f, "G", "s", PolicySession, nil), rat((1+15+5)*100, 3+150+10)},
		{"site load leaves offline pods out", SiteLoad(f, "G", "S", PolicySession, []string{"p1"}), rat(50, 1)},
		{"a site with nothing left has no load", SiteLoad(f, "G", "S", PolicySession, []string{"p1", "p2"}), nil},
		{"an unknown GE has no load", SiteLoad(f, "X", "S", PolicySession, nil), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			switch {
			case tc.want == nil && tc.got != nil:
				t.Fatalf("load %s, want none", tc.got.RatString())
			case tc.want != nil && (tc.got == nil || tc.got.Cmp(tc.want) != 0):
				t.Fatalf("load %v, want %s", tc.got, tc.want.RatString())
			}
		})
	}
}

func TestLoadsSharedFarm(t *testing.T) {
	f := loadFederation()
	ge := &f.Entitlements[0]
	ge.Pools = []string{"r1", "r1b"}
	// Pools sharing a farm share its figures; under SESSION the farm counts
	// once, under LOAD the mean over the two pools is the farm's load.
	if got := PoolLoad(f, "r1b", PolicySession, nil); got.Cmp(PoolLoad(f, "r1", PolicySession, nil)) != 0 {
		t.Fatalf("shared farm pools differ: %s", got.RatString())
	}
	if got := PodLoad(f, "G", "p1", PolicySession, nil); got.Cmp(rat(15*100, 150)) != 0 {
		t.Fatalf("SESSION pod load %s, want 10", got.RatString())
	}
	ge.Pools = []string{"r1", "r1b", "d1"}
	if got := PodLoad(f, "G", "p1", PolicySession, nil); got.Cmp(rat(16*100, 153)) != 0 {
		t.Fatalf("SESSION pod load %s, want 1600/153: the shared farm counted once", got.RatString())
	}
	if got := PodLoad(f, "G", "p1", PolicyLoad, nil); got.Cmp(rat(3*15+3*15+100, 3*3)) != 0 { // (15 + 15 + 100/3) / 3
		t.Fatalf("LOAD pod load %s", got.RatString())
	}
}

func TestPoolAvailability(t *testing.T) {
	f := loadFederation()
	f.Pods[2].Online = false
	cases := []struct {
		pool, why string
		offline   []string
	}{
		{pool: "d1"},
		{pool: "off", why: "pool is disabled"},
		{pool: "zero", why: "capacity 0: the pool can hold no session"},
		{pool: "a3", why: "pod p3 is offline"},
		{pool: "d2", why: "pod p2 is offline", offline: []string{"P2"}},
		{pool: "nope", why: `pool "nope" does not exist`},
	}
	for _, tc := range cases {
		ok, why := PoolAvailability(f, tc.pool, tc.offline)
		if ok != (tc.why == "") || why != tc.why {
			t.Errorf("%s: available %t %q, want %q", tc.pool, ok, why, tc.why)
		}
	}
	f.Pods[2].Online = true
	f.Pools = append(f.Pools, Pool{Name: "r0", Pod: "p3", Kind: KindRDSDesktop, Farm: "F0", Enabled: true},
		Pool{Name: "rx", Pod: "p3", Kind: KindRDSDesktop, Farm: "nofarm", Enabled: true})
	if _, why := PoolAvailability(f, "r0", nil); why != "farm F0 has no enabled host" {
		t.Errorf("r0: %q", why)
	}
	if _, why := PoolAvailability(f, "rx", nil); why != `farm "nofarm" does not exist` {
		t.Errorf("rx: %q", why)
	}
}

func TestFormatLoad(t *testing.T) {
	for _, tc := range []struct {
		load *big.Rat
		want string
	}{
		{rat(200, 3), "66.67"},
		{rat(100, 3), "33.33"},
		{rat(98001, 1000), "98.00"},
		{rat(1, 200), "0.01"}, // 0.005 rounds half away from zero
		{rat(50, 1), "50.00"},
		{nil, "-"},
	} {
		if got := FormatLoad(tc.load); got != tc.want {
			t.Errorf("FormatLoad(%v) = %s, want %s", tc.load, got, tc.want)
		}
	}
	if v := loadValue(rat(200, 3)); v == nil || *v != 66.67 {
		t.Errorf("loadValue(200/3) = %v", v)
	}
	if v := loadValue(nil); v != nil {
		t.Errorf("loadValue(nil) = %v", *v)
	}
}
