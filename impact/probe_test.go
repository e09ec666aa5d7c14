package impact

import (
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/ldapschema"
)

// fixture reads one of the fixtures as a federation.
func fixture(t *testing.T, name string) *broker.Federation {
	t.Helper()
	f, err := os.Open("../fixtures/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	snap, err := snapshot.ReadSnapshot(f)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := directory.NewStore(snap, ldapschema.DefaultBase).Federation()
	if err != nil {
		t.Fatal(err)
	}
	return whole.Federation
}

// whatIfs are the changes the probe test makes to a fixture: each pod
// online taken offline, each site's preferred list reversed (and
// emptied), the threshold lowered, each desktop pool filled.
func whatIfs(f *broker.Federation) []struct {
	what    string
	after   *broker.Federation
	offline []string
} {
	type change = struct {
		what    string
		after   *broker.Federation
		offline []string
	}
	var out []change
	for _, p := range f.Pods {
		if p.Online {
			out = append(out, change{"offline " + p.Name, f, []string{p.Name}})
		}
	}
	for i, s := range f.Sites {
		a := clone(f)
		slices.Reverse(a.Sites[i].PreferredSites)
		out = append(out, change{"preferred " + s.Name + " reversed", a, nil})
		a = clone(f)
		a.Sites[i].PreferredSites = nil
		out = append(out, change{"preferred " + s.Name + " emptied", a, nil})
	}
	a := clone(f)
	a.Settings.LoadThresholdForSite = 1
	out = append(out, change{"threshold 1", a, nil})
	for i, p := range f.Pools {
		if p.Kind == broker.KindDesktop && p.Capacity > 0 {
			a := clone(f)
			a.Pools[i].Sessions = p.Capacity
			out = append(out, change{"pool " + p.Name + " full", a, nil})
		}
	}
	return out
}

// TestProbesAgreeWithFullComparison: the probes (probe.go) count as
// unchanged only requests that the full comparison, resolving every class
// before and after, finds unchanged: the same summary and the same moves,
// on the fixtures with every pod offline in turn, preferred lists changed,
// the threshold and pools, and on random federations and changes.
func TestProbesAgreeWithFullComparison(t *testing.T) {
	saved := 0
	compare := func(name string, before, after *broker.Federation, offline []string, seed int64) {
		t.Helper()
		points, err := DefaultPoints(before, after, offline, "")
		if err != nil || len(points) == 0 {
			return // no pod online on both sides
		}
		opt := Options{Points: points, Offline: offline, Seed: seed}
		fast, err := Run(before, after, opt)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		opt.full = true
		full, err := Run(before, after, opt)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		saved += full.Summary.Resolved - fast.Summary.Resolved
		fs, ws := fast.Summary, full.Summary
		fs.Resolved, ws.Resolved = 0, 0
		if !reflect.DeepEqual(fs, ws) {
			t.Errorf("%s: summary with probes %+v, full %+v", name, fs, ws)
		}
		if !reflect.DeepEqual(fast.Moves, full.Moves) {
			t.Errorf("%s: %d moves with probes, %d in full; first with probes %+v", name, len(fast.Moves), len(full.Moves), first(fast.Moves))
		}
	}
	for _, fx := range []string{"demo.ldif", "seed-000.ldif", "resolve-seed-000.ldif", "resolve-seed-000-scenario-2.ldif", "broker-complete.ldif"} {
		f := fixture(t, fx)
		for _, c := range whatIfs(f) {
			compare(fx+": "+c.what, f, c.after, c.offline, 0)
		}
	}
	seeds := 400
	if testing.Short() {
		seeds = 50
	}
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 29))
		before := randomFederation(r)
		after, offline, what := randomChange(r, before)
		compare("random "+what, before, after, offline, int64(seed%3))
	}
	if saved <= 0 {
		t.Errorf("the probes saved no resolution (%d)", saved)
	}
	t.Logf("the probes saved %d resolutions", saved)
}

func first(m []Move) any {
	if len(m) == 0 {
		return nil
	}
	return m[0]
}

// TestProbeSharedSessionOnAFarmInAnotherPod: an application GE's pool on
// a pod taken offline, whose farm is in another pod (data lint reports),
// shares the user's session of another GE on that farm before and not
// after, while the search (the probe's) places alike: the request moves,
// although nothing of the user is on the offline pod.
func TestProbeSharedSessionOnAFarmInAnotherPod(t *testing.T) {
	f := &broker.Federation{Settings: broker.DefaultSettings(),
		Sites: []broker.Site{{Name: "S"}},
		Pods:  []broker.Pod{{Name: "P1", Site: "S", Online: true}, {Name: "P2", Site: "S", Online: true}, {Name: "P3", Site: "S", Online: true}},
		Farms: []broker.Farm{{Name: "F", Pod: "P3"}, {Name: "F2", Pod: "P1"}},
		Hosts: []broker.Host{{Name: "H1", Farm: "F", Enabled: true, Features: broker.AllFeatures()}, {Name: "H2", Farm: "F2", Enabled: true, Features: broker.AllFeatures()}},
		Pools: []broker.Pool{
			{Name: "app-pool", Kind: broker.KindApplication, Pod: "P2", Farm: "F", Enabled: true},
			{Name: "q", Kind: broker.KindApplication, Pod: "P1", Farm: "F2", Enabled: true},
			{Name: "other-pool", Kind: broker.KindApplication, Pod: "P3", Farm: "F", Enabled: true},
		},
		Groups: []broker.Group{{Name: "g"}},
		Users:  []broker.User{{Name: "u", Groups: []string{"g"}}},
		Entitlements: []broker.Entitlement{
			{Name: "Apps", Type: broker.TypeApplication, Enabled: true, Members: []broker.Member{{Kind: broker.MemberGroup, Name: "g"}}, Pools: []string{"q", "app-pool"}},
			{Name: "Other", Type: broker.TypeApplication, Enabled: true, Members: []broker.Member{{Kind: broker.MemberGroup, Name: "g"}}, Pools: []string{"other-pool"}},
		},
		Sessions: []broker.Session{{ID: "s1", User: "u", Entitlement: "Other", Pod: "P3", Pool: "other-pool", Host: "H1", State: broker.StateConnected}},
	}
	points := []ConnectingPoint{{Pod: "P1", Site: "S"}}
	rep, err := Run(f, f, Options{Points: points, Offline: []string{"P2"}, Entitlements: []string{"Apps"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Moves) != 1 || rep.Moves[0].Before.Outcome != broker.OutcomeReconnect || rep.Moves[0].After.Pool != "q" {
		t.Fatalf("moves %+v, want u's RECONNECT (shared) -> PLACED in q", rep.Moves)
	}
}

// TestSharedSessionOnAnOfflineFarmPod: an application GE's pool whose farm
// is on a pod taken offline (the pool itself in another pod; data lint
// reports) opens the user's session of another GE on that farm before,
// and not after: the request moves, although no pool of the GE is on the
// offline pod and the user has no session of the GE.
func TestSharedSessionOnAnOfflineFarmPod(t *testing.T) {
	f := &broker.Federation{Settings: broker.DefaultSettings(),
		Sites: []broker.Site{{Name: "S"}},
		Pods:  []broker.Pod{{Name: "P1", Site: "S", Online: true}, {Name: "P2", Site: "S", Online: true}, {Name: "O", Site: "S", Online: true}},
		Farms: []broker.Farm{{Name: "F", Pod: "O"}},
		Hosts: []broker.Host{{Name: "H", Farm: "F", Enabled: true, Features: broker.AllFeatures()}},
		Pools: []broker.Pool{
			{Name: "p", Kind: broker.KindApplication, Pod: "P2", Farm: "F", Enabled: true},
			{Name: "p2", Kind: broker.KindApplication, Pod: "O", Farm: "F", Enabled: true},
		},
		Groups: []broker.Group{{Name: "g"}},
		Users:  []broker.User{{Name: "u", Groups: []string{"g"}}},
		Entitlements: []broker.Entitlement{
			{Name: "Apps", Type: broker.TypeApplication, Enabled: true, Members: []broker.Member{{Kind: broker.MemberGroup, Name: "g"}}, Pools: []string{"p"}},
			{Name: "Other", Type: broker.TypeApplication, Enabled: true, Members: []broker.Member{{Kind: broker.MemberGroup, Name: "g"}}, Pools: []string{"p2"}},
		},
		Sessions: []broker.Session{{ID: "s1", User: "u", Entitlement: "Other", Pod: "O", Pool: "p2", Host: "H", State: broker.StateConnected}},
	}
	rep, err := Run(f, f, Options{Points: []ConnectingPoint{{Pod: "P1", Site: "S"}}, Offline: []string{"O"}, Entitlements: []string{"Apps"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Moves) != 1 || rep.Moves[0].Before.Outcome != broker.OutcomeReconnect || rep.Moves[0].After.Outcome != broker.OutcomePlaced {
		t.Fatalf("moves %+v, want u's RECONNECT (shared, on O) -> PLACED in p", rep.Moves)
	}
}
