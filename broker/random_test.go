package broker

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// spreadFederation has a full connecting site Hub and six other sites with
// room, and a site Wide with five pods with room: every order under NONE is
// random.
func spreadFederation() *Federation {
	f := &Federation{
		Settings: DefaultSettings(),
		Sites:    []Site{{Name: "Hub"}},
		Pods:     []Pod{{Name: "hub-pod", Site: "Hub", Online: true}},
		ConnectionServers: []ConnectionServer{
			{Name: "hub-cs", Pod: "hub-pod"},
		},
		Entitlements: []Entitlement{{
			Name: "Desk", Type: TypeDesktop, Scope: ScopeAny, Policy: PolicyNone, Enabled: true,
			Members: []Member{{Kind: MemberUser, Name: "u"}},
			Pools:   []string{"hub-desk"},
		}},
		Pools: []Pool{{Name: "hub-desk", Pod: "hub-pod", Kind: KindDesktop, Capacity: 1, Sessions: 1, Enabled: true}},
		Users: []User{{Name: "u"}},
	}
	for _, s := range []string{"Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot"} {
		f.Sites = append(f.Sites, Site{Name: s})
		pod, pool := s+"-pod", s+"-desk"
		f.Pods = append(f.Pods, Pod{Name: pod, Site: s, Online: true})
		f.Pools = append(f.Pools, Pool{Name: pool, Pod: pod, Kind: KindDesktop, Capacity: 5, Enabled: true})
		f.Entitlements[0].Pools = append(f.Entitlements[0].Pools, pool)
	}
	f.Sites = append(f.Sites, Site{Name: "Wide"})
	for i := 1; i <= 5; i++ {
		pod, pool := fmt.Sprintf("wide-pod%d", i), fmt.Sprintf("wide-desk%d", i)
		f.Pods = append(f.Pods, Pod{Name: pod, Site: "Wide", Online: true})
		f.Pools = append(f.Pools, Pool{Name: pool, Pod: pod, Kind: KindDesktop, Capacity: 5, Enabled: true})
		f.Entitlements[0].Pools = append(f.Entitlements[0].Pools, pool)
	}
	f.ConnectionServers = append(f.ConnectionServers, ConnectionServer{Name: "wide-cs3", Pod: "wide-pod3"})
	return f
}

// remainingOrder is the random order of tier (d) a decision traced.
func remainingOrder(t *testing.T, seed int64) []string {
	t.Helper()
	f := spreadFederation()
	// Fill every site so that the search visits them all.
	for i := range f.Pools {
		f.Pools[i].Sessions = f.Pools[i].Capacity
	}
	d, err := Resolve(f, Request{User: "u", Entitlement: "Desk", ConnectionServer: "hub-cs", Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, d, OutcomeNoCapacity)
	var order []string
	for _, v := range d.SiteOrder {
		if v.Tier == TierRemaining {
			order = append(order, v.Site)
		}
	}
	return order
}

func TestRandomOrders(t *testing.T) {
	t.Run("NONE with two seeds gives two orders", func(t *testing.T) {
		a, b := remainingOrder(t, 1), remainingOrder(t, 2)
		if reflect.DeepEqual(a, b) {
			t.Fatalf("seeds 1 and 2 both give %v", a)
		}
		sorted := slices.Clone(a)
		slices.Sort(sorted)
		if !reflect.DeepEqual(sorted, []string{"Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Wide"}) {
			t.Fatalf("remaining sites %v", a)
		}
	})
	t.Run("NONE with one seed always gives the same order", func(t *testing.T) {
		first := remainingOrder(t, 7)
		for i := 0; i < 20; i++ {
			if got := remainingOrder(t, 7); !reflect.DeepEqual(got, first) {
				t.Fatalf("run %d: %v, then %v", i, first, got)
			}
		}
	})
	t.Run("the order does not depend on the order of the data", func(t *testing.T) {
		f := spreadFederation()
		for i := range f.Pools {
			f.Pools[i].Sessions = f.Pools[i].Capacity
		}
		g := spreadFederation()
		for i := range g.Pools {
			g.Pools[i].Sessions = g.Pools[i].Capacity
		}
		slices.Reverse(g.Sites)
		slices.Reverse(g.Pods)
		slices.Reverse(g.Pools)
		slices.Reverse(g.Entitlements[0].Pools)
		req := Request{User: "u", Entitlement: "Desk", ConnectionServer: "hub-cs", Seed: 3}
		d1, err1 := Resolve(f, req)
		d2, err2 := Resolve(g, req)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		j1, _ := json.Marshal(d1)
		j2, _ := json.Marshal(d2)
		if string(j1) != string(j2) {
			t.Fatalf("decisions differ:\n%s\n%s", j1, j2)
		}
	})
	t.Run("the trace lists the candidates of every random order", func(t *testing.T) {
		f := spreadFederation()
		for i := range f.Pools {
			f.Pools[i].Sessions = f.Pools[i].Capacity
		}
		d, _ := Resolve(f, Request{User: "u", Entitlement: "Desk", ConnectionServer: "hub-cs", Seed: 5})
		wantTrace(t, d, `remaining sites in random order (seed 5, label "remaining"): candidates Alpha, Bravo, Charlie, Delta, Echo, Foxtrot, Wide → order `)
		wantTrace(t, d, `pods of site Wide in random order (seed 5, label "Wide"): candidates wide-pod1, wide-pod2, wide-pod3, wide-pod4, wide-pod5 → order `)
	})
	t.Run("one random order never shifts another", func(t *testing.T) {
		// The remaining order is the same whether or not the starting site
		// drew a random pod order first.
		base := remainingOrder(t, 11)
		f := spreadFederation()
		for i := range f.Pools {
			f.Pools[i].Sessions = f.Pools[i].Capacity
		}
		f.Pods = append(f.Pods, Pod{Name: "hub-pod2", Site: "Hub", Online: true}, Pod{Name: "hub-pod3", Site: "Hub", Online: true})
		f.Pools = append(f.Pools, Pool{Name: "hub-2", Pod: "hub-pod2", Kind: KindDesktop, Capacity: 1, Sessions: 1, Enabled: true},
			Pool{Name: "hub-3", Pod: "hub-pod3", Kind: KindDesktop, Capacity: 1, Sessions: 1, Enabled: true})
		f.Entitlements[0].Pools = append(f.Entitlements[0].Pools, "hub-2", "hub-3")
		d, _ := Resolve(f, Request{User: "u", Entitlement: "Desk", ConnectionServer: "hub-cs", Seed: 11})
		wantTrace(t, d, `pods of site Hub in random order`)
		var got []string
		for _, v := range d.SiteOrder {
			if v.Tier == TierRemaining {
				got = append(got, v.Site)
			}
		}
		if !reflect.DeepEqual(got, base) {
			t.Fatalf("remaining order %v, without the Hub shuffle %v", got, base)
		}
	})
	t.Run("NONE within a site: the connecting pod first, then the others at random", func(t *testing.T) {
		f := spreadFederation()
		d, err := Resolve(f, Request{User: "u", Entitlement: "Desk", ConnectionServer: "wide-cs3", Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		wantPlaced(t, d, "Wide", "wide-pod3", "wide-desk3")
		pods := d.SiteOrder[0].Pods
		if pods[0].Pod != "wide-pod3" || !pods[0].Connecting {
			t.Fatalf("pods %+v", pods)
		}
		want := randomOrder(9, "Wide", []string{"wide-pod5", "wide-pod1", "wide-pod4", "wide-pod2"})
		var got []string
		for _, p := range pods[1:] {
			got = append(got, p.Pod)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("other pods %v, want %v", got, want)
		}
	})
	t.Run("NONE within a site: two seeds give two pod orders", func(t *testing.T) {
		order := func(seed int64) string {
			f := spreadFederation()
			for i := range f.Pools {
				f.Pools[i].Sessions = f.Pools[i].Capacity
			}
			d, _ := Resolve(f, Request{User: "u", Entitlement: "Desk", Pod: "wide-pod1", Seed: seed})
			var s string
			for _, p := range d.SiteOrder[0].Pods {
				s += p.Pod + " "
			}
			return s
		}
		if order(1) == order(2) {
			t.Fatalf("seeds 1 and 2 both give %s", order(1))
		}
		if first, again := order(4), order(4); first != again {
			t.Fatalf("seed 4 gives %s, then %s", first, again)
		}
	})
}

func TestRandomOrderIsPinned(t *testing.T) {
	// The generator is part of the contract (a snapshot and a live directory
	// must agree, and recorded traces must replay): PCG seeded with the seed
	// and the FNV-64a hash of the label, shuffling the names sorted by name.
	got := randomOrder(0, "remaining", []string{"c", "A", "b", "d", "e"})
	again := randomOrder(0, "remaining", []string{"e", "d", "c", "b", "A"})
	if !reflect.DeepEqual(got, again) {
		t.Fatalf("input order leaks: %v vs %v", got, again)
	}
	if want := []string{"d", "A", "e", "c", "b"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("seed 0, label remaining: %q, want %q", got, want)
	}
	if got, want := randomOrder(42, "UK", []string{"c", "A", "b", "d", "e"}), []string{"A", "d", "b", "c", "e"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("seed 42, label UK: %q, want %q", got, want)
	}
	if other := randomOrder(0, "UK", []string{"c", "A", "b", "d", "e"}); reflect.DeepEqual(other, got) {
		t.Fatalf("labels remaining and UK give the same order %v", got)
	}
}
