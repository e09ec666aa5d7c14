package impact

import (
	"bytes"
	"slices"
	"sync"
	"testing"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/generate"
	"github.com/cpactl/cpactl/internal/fold"
	"github.com/cpactl/cpactl/ldapschema"
)

// generated is a federation of the CPA maximum's topology (15 sites, 50
// pods) with k times 400 users, and their groups, sessions, home sites
// and assignments in the maximum's proportions.
func generated(t *testing.T, k int) *broker.Federation {
	t.Helper()
	cfg, err := generate.Preset("cpa-max")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Seed = 5
	cfg.Entitlements, cfg.Pools, cfg.Farms, cfg.Hosts = 60, 240, 40, 200
	cfg.Users, cfg.Groups, cfg.Computers = 400*k, 40*k, 20*k
	cfg.Sessions, cfg.HomeSites, cfg.Assignments = 2000*k, 24*k, 160*k
	var buf bytes.Buffer
	if _, err := generate.Write(&buf, cfg); err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.ReadSnapshot(&buf)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := directory.NewStore(snap, ldapschema.DefaultBase).Federation()
	if err != nil {
		t.Fatal(err)
	}
	return whole.Federation
}

// TestImpactWorkGrowsWithTheChange: the requests impact resolves are
// those a change may move, not the federation's: counted by the engine
// (Summary.Resolved: one per class and point, before and after, and one
// per probe), deterministic for a generated federation, as the users
// double. (Before the probes, an offline pod resolved one request in
// eight, on the first of these federations.)
//
//   - A preferred-site change resolves only requests through the pods of
//     the site whose list changed.
//   - An offline pod resolves at most a fixed share of the requests, and
//     twice the users cost at most about twice the resolutions: a pass
//     over users per user (quadratic) would cost four times.
func TestImpactWorkGrowsWithTheChange(t *testing.T) {
	if testing.Short() {
		t.Skip("generates two federations")
	}
	var offlineResolved []int
	for _, k := range []int{1, 2} {
		f := generated(t, k)
		// The preferred list of the first site with two or more, reversed.
		after := clone(f)
		site := -1
		for i, s := range after.Sites {
			if len(s.PreferredSites) >= 2 {
				site = i
				slices.Reverse(after.Sites[i].PreferredSites)
				break
			}
		}
		points, err := DefaultPoints(f, after, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		elsewhere := 0
		rep, err := Run(f, after, Options{Points: points, observe: func(m Move) {
			mu.Lock()
			defer mu.Unlock()
			for _, p := range f.Pods {
				if p.Name == m.Pod && fold.Key(p.Site) != fold.Key(f.Sites[site].Name) {
					elsewhere++
				}
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		if elsewhere > 0 {
			t.Errorf("%d users: %d requests resolved through pods outside %s, whose preferred list changed", 400*k, elsewhere, f.Sites[site].Name)
		}
		t.Logf("%d users, preferred %s: %d requests, %d resolved, %d move", 400*k, f.Sites[site].Name,
			rep.Summary.Requests, rep.Summary.Resolved, len(rep.Moves))

		// The online pod with the most sessions.
		sessions := map[string]int{}
		for _, x := range f.Sessions {
			sessions[x.Pod]++
		}
		var offline []string
		for _, p := range f.Pods {
			if p.Online && (offline == nil || sessions[p.Name] > sessions[offline[0]]) {
				offline = []string{p.Name}
			}
		}
		points, err = DefaultPoints(f, f, offline, "")
		if err != nil {
			t.Fatal(err)
		}
		rep, err = Run(f, f, Options{Points: points, Offline: offline})
		if err != nil {
			t.Fatal(err)
		}
		s := rep.Summary
		t.Logf("%d users, offline %s: %d requests, %d resolved, %d move", 400*k, offline[0], s.Requests, s.Resolved, len(rep.Moves))
		if s.Resolved*20 > s.Requests {
			t.Errorf("%d users, offline %s: %d of %d requests resolved, more than 1 in 20", 400*k, offline[0], s.Resolved, s.Requests)
		}
		offlineResolved = append(offlineResolved, s.Resolved)
	}
	for i := 1; i < len(offlineResolved); i++ {
		if offlineResolved[i]*10 > offlineResolved[i-1]*26 {
			t.Errorf("twice the users, %d then %d resolutions for an offline pod: more than 2.6 times", offlineResolved[i-1], offlineResolved[i])
		}
	}
}
