package impact

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/internal/fold"
)

// randomFederation builds a small federation with every feature the
// broker reads: sites with preferred lists, pods (some offline),
// Connection Servers with tags, desktop and farm-backed pools, farms and
// hosts, GEs of every kind with backups, users in nested groups (cycles
// included), home-site rows, sessions and assignments.
func pickOf[T any](r *rand.Rand, l []T) T { return l[r.IntN(len(l))] }

func randomFederation(r *rand.Rand) *broker.Federation {
	pick := func(l []string) string { return pickOf(r, l) }
	f := &broker.Federation{Settings: broker.DefaultSettings()}
	f.Settings.LoadThresholdForSite = 40 + r.IntN(60)
	f.Settings.EnableSiteRedirection = r.IntN(4) == 0
	nSites := 2 + r.IntN(3)
	var sites []string
	for i := range nSites {
		sites = append(sites, fmt.Sprintf("site%d", i))
	}
	for _, s := range sites {
		var pref []string
		for _, o := range r.Perm(nSites) {
			if sites[o] != s && r.IntN(2) == 0 {
				pref = append(pref, sites[o])
			}
		}
		f.Sites = append(f.Sites, broker.Site{Name: s, PreferredSites: pref})
	}
	var pods []string
	for i := range 2 + r.IntN(4) {
		p := fmt.Sprintf("pod%d", i)
		pods = append(pods, p)
		site := sites[i%nSites]
		f.Pods = append(f.Pods, broker.Pod{Name: p, Site: site, Online: i < 2 || r.IntN(5) > 0})
		for j := range 1 + r.IntN(2) {
			var tags []string
			if r.IntN(3) == 0 {
				tags = []string{pick([]string{"internal", "dmz"})}
			}
			f.ConnectionServers = append(f.ConnectionServers, broker.ConnectionServer{Name: fmt.Sprintf("%s-cs%d", p, j), Pod: p, Tags: tags})
		}
	}
	var farms []string
	for i := range r.IntN(3) {
		fm := fmt.Sprintf("farm%d", i)
		farms = append(farms, fm)
		f.Farms = append(f.Farms, broker.Farm{Name: fm, Pod: pick(pods), MaxSessionsPerHost: r.IntN(3) * 5})
		for j := range 1 + r.IntN(3) {
			feat := broker.AllFeatures()
			feat.PCoIP = r.IntN(4) > 0
			f.Hosts = append(f.Hosts, broker.Host{Name: fmt.Sprintf("%s-h%d", fm, j), Farm: fm, LoadIndex: r.IntN(40) - 1,
				Sessions: r.IntN(12), Connecting: r.IntN(25), Features: feat, Enabled: r.IntN(6) > 0})
		}
	}
	var pools []string
	for i := range 2 + r.IntN(5) {
		p := broker.Pool{Name: fmt.Sprintf("pool%d", i), Pod: pick(pods), Enabled: r.IntN(8) > 0}
		switch {
		case len(farms) > 0 && r.IntN(3) == 0:
			p.Kind, p.Farm = pickOf(r, []broker.PoolKind{broker.KindApplication, broker.KindRDSDesktop}), pick(farms)
			for _, fm := range f.Farms {
				if fm.Name == p.Farm && r.IntN(5) > 0 { // now and then a farm in another pod (lint reports it)
					p.Pod = fm.Pod
				}
			}
		default:
			p.Kind, p.Dedicated = broker.KindDesktop, r.IntN(3) == 0
			p.Capacity = r.IntN(6)
			p.Sessions, p.Assigned = r.IntN(6), r.IntN(6)
		}
		pools = append(pools, p.Name)
		f.Pools = append(f.Pools, p)
	}
	var groups []string
	for i := range 2 + r.IntN(4) {
		groups = append(groups, fmt.Sprintf("group%d", i))
	}
	for i, g := range groups {
		var up []string
		for j := i + 1; j < len(groups); j++ {
			if r.IntN(3) == 0 {
				up = append(up, groups[j])
			}
		}
		if r.IntN(8) == 0 {
			up = append(up, groups[0]) // a cycle, now and then
		}
		f.Groups = append(f.Groups, broker.Group{Name: g, Groups: up})
	}
	var users []string
	for i := range 3 + r.IntN(8) {
		u := fmt.Sprintf("user%d", i)
		users = append(users, u)
		var gs []string
		for range r.IntN(3) {
			gs = append(gs, pick(groups))
		}
		f.Users = append(f.Users, broker.User{Name: u, Groups: gs})
	}
	var ges []string
	nGE := 2 + r.IntN(4)
	for i := range nGE {
		ges = append(ges, fmt.Sprintf("GE %d", i))
	}
	for i, name := range ges {
		g := broker.Entitlement{Name: name, Enabled: r.IntN(10) > 0,
			Type:              pickOf(r, []broker.EntitlementType{broker.TypeDesktop, broker.TypeDesktop, broker.TypeApplication}),
			Scope:             pickOf(r, []broker.Scope{broker.ScopeAny, broker.ScopeAny, broker.ScopeSite, broker.ScopeLocal}),
			Policy:            pickOf(r, []broker.Policy{broker.PolicyNone, broker.PolicyLoad, broker.PolicySession}),
			UseHomeSite:       r.IntN(2) == 0,
			RequireHomeSite:   r.IntN(5) == 0,
			UsePreferredSites: r.IntN(3) > 0,
			IgnoreHighLoad:    r.IntN(2) == 0,
			AutoClean:         r.IntN(2) == 0,
		}
		g.Dedicated = g.Type == broker.TypeDesktop && r.IntN(3) == 0
		g.MultipleSessionsPerUser = r.IntN(5) == 0
		g.RequireHomeSite = g.RequireHomeSite && g.UseHomeSite
		if r.IntN(6) == 0 {
			g.Tags = []string{"internal"}
		}
		for range 1 + r.IntN(2) {
			g.Members = append(g.Members, broker.Member{Kind: broker.MemberGroup, Name: pick(groups)})
		}
		if r.IntN(3) == 0 {
			g.Members = append(g.Members, broker.Member{Kind: broker.MemberUser, Name: pick(users)})
		}
		for range 1 + r.IntN(3) {
			g.Pools = append(g.Pools, pick(pools))
		}
		if i > 0 && r.IntN(4) == 0 && !g.Dedicated && g.Type == broker.TypeDesktop {
			g.Backup = ges[0]
		}
		f.Entitlements = append(f.Entitlements, g)
	}
	for range r.IntN(8) {
		h := broker.HomeSite{Site: pick(sites)}
		if r.IntN(2) == 0 {
			h.User = pick(users)
		} else {
			h.Group = pick(groups)
		}
		if r.IntN(2) == 0 {
			h.Entitlement = pick(ges)
		}
		f.HomeSites = append(f.HomeSites, h)
	}
	for i := range r.IntN(8) {
		p := pick(pools)
		var pod, host string
		for _, x := range f.Pools {
			if x.Name == p {
				pod = x.Pod
				for _, h := range f.Hosts {
					if h.Farm == x.Farm {
						host = h.Name
					}
				}
			}
		}
		f.Sessions = append(f.Sessions, broker.Session{ID: fmt.Sprintf("s%d", i), User: pick(users), Entitlement: pick(ges),
			Pod: pod, Pool: p, Host: host, State: pickOf(r, []broker.SessionState{broker.StateConnected, broker.StateDisconnected})})
	}
	// Users alike in their sessions: copies of sessions for other users,
	// with IDs that sort otherwise.
	for i, n := 0, len(f.Sessions); i < n && i < 4; i++ {
		x := f.Sessions[r.IntN(n)]
		x.User, x.ID = pick(users), fmt.Sprintf("z%d-%s", i, x.ID)
		f.Sessions = append(f.Sessions, x)
	}
	for range r.IntN(3) {
		f.Assignments = append(f.Assignments, broker.Assignment{User: pick(users), Entitlement: pick(ges), Pod: pick(pods)})
	}
	return f
}

// clone deep-copies the parts of a federation a change edits.
func clone(f *broker.Federation) *broker.Federation {
	c := *f
	c.Sites = append([]broker.Site(nil), f.Sites...)
	for i := range c.Sites {
		c.Sites[i].PreferredSites = append([]string(nil), f.Sites[i].PreferredSites...)
	}
	c.Pods = append([]broker.Pod(nil), f.Pods...)
	c.Pools = append([]broker.Pool(nil), f.Pools...)
	c.Hosts = append([]broker.Host(nil), f.Hosts...)
	c.Users = append([]broker.User(nil), f.Users...)
	for i := range c.Users {
		c.Users[i].Groups = append([]string(nil), f.Users[i].Groups...)
	}
	c.Entitlements = append([]broker.Entitlement(nil), f.Entitlements...)
	c.HomeSites = append([]broker.HomeSite(nil), f.HomeSites...)
	c.Sessions = append([]broker.Session(nil), f.Sessions...)
	return &c
}

// randomChange returns the federation after one random change, and the
// what-if offline pods.
func randomChange(r *rand.Rand, f *broker.Federation) (*broker.Federation, []string, string) {
	a := clone(f)
	switch r.IntN(12) {
	case 10, 11:
		// A pod offline, with a preferred list changed, now and then.
		p := a.Pods[r.IntN(len(a.Pods))].Name
		if r.IntN(2) == 0 {
			i := r.IntN(len(a.Sites))
			pref := a.Sites[i].PreferredSites
			for x, y := 0, len(pref)-1; x < y; x, y = x+1, y-1 {
				pref[x], pref[y] = pref[y], pref[x]
			}
			return a, []string{p}, "offline " + p + ", preferred " + a.Sites[i].Name
		}
		return f, []string{p}, "offline " + p
	case 0:
		i := r.IntN(len(a.Sites))
		p := append([]string(nil), a.Sites[i].PreferredSites...)
		r.Shuffle(len(p), func(x, y int) { p[x], p[y] = p[y], p[x] })
		if len(p) > 0 && r.IntN(2) == 0 {
			p = p[1:]
		}
		a.Sites[i].PreferredSites = p
		return a, nil, "preferred " + a.Sites[i].Name
	case 1:
		a.Settings.LoadThresholdForSite = r.IntN(101)
		return a, nil, "threshold"
	case 2:
		p := a.Pods[r.IntN(len(a.Pods))].Name
		return f, []string{p}, "offline " + p
	case 3:
		i := r.IntN(len(a.Pools))
		a.Pools[i].Sessions, a.Pools[i].Capacity = r.IntN(6), r.IntN(6)
		return a, nil, "pool " + a.Pools[i].Name
	case 4:
		if len(a.Hosts) > 0 {
			i := r.IntN(len(a.Hosts))
			a.Hosts[i].LoadIndex, a.Hosts[i].Connecting = r.IntN(40), r.IntN(25)
			return a, nil, "host " + a.Hosts[i].Name
		}
		return a, nil, "nothing"
	case 5:
		i := r.IntN(len(a.Users))
		a.Users[i].Groups = append(a.Users[i].Groups, a.Groups[r.IntN(len(a.Groups))].Name)
		return a, nil, "groups of " + a.Users[i].Name
	case 6:
		i := r.IntN(len(a.Entitlements))
		a.Entitlements[i].UsePreferredSites = !a.Entitlements[i].UsePreferredSites
		a.Entitlements[i].Enabled = r.IntN(4) > 0
		return a, nil, "entitlement " + a.Entitlements[i].Name
	case 7:
		a.HomeSites = append(a.HomeSites, broker.HomeSite{Group: a.Groups[r.IntN(len(a.Groups))].Name, Site: a.Sites[r.IntN(len(a.Sites))].Name})
		return a, nil, "home site"
	case 8:
		a.Settings.EnableSiteRedirection = !a.Settings.EnableSiteRedirection
		return a, nil, "redirection"
	default:
		i := r.IntN(len(a.Pods))
		a.Pods[i].Online = !a.Pods[i].Online
		return a, nil, "pod " + a.Pods[i].Name
	}
}

type reqKey struct{ user, ge, pod string }

// TestImpactEqualsResolvingEachRequest: for random federations and a
// random change, impact reports exactly the requests whose own Resolve
// (over the whole federation, before and after) differs, with the same
// results and the same first differing trace step; and it counts every
// entitled request.
func TestImpactEqualsResolvingEachRequest(t *testing.T) {
	seeds := 500
	if testing.Short() {
		seeds = 60
	}
	resolved, requests, moves, checked := 0, 0, 0, 0
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 13))
		before := randomFederation(r)
		after, offline, what := randomChange(r, before)
		points, err := DefaultPoints(before, after, offline, "")
		if err != nil {
			t.Fatal(err)
		}
		seen := map[reqKey]Move{}
		var mu sync.Mutex
		rep, err := Run(before, after, Options{Points: points, Offline: offline, Seed: int64(seed % 3),
			observe: func(m Move) { mu.Lock(); seen[reqKey{m.User, m.Entitlement, m.Pod}] = m; mu.Unlock() }})
		if err != nil {
			t.Fatalf("seed %d (%s): %v", seed, what, err)
		}
		got := map[reqKey]Move{}
		for i, m := range rep.Moves {
			got[reqKey{m.User, m.Entitlement, m.Pod}] = m
			// The report's order: by entitlement (name order), then user
			// (folded), then connecting pod (name order).
			if i == 0 {
				continue
			}
			p := rep.Moves[i-1]
			var inOrder bool
			switch {
			case fold.Key(p.Entitlement) != fold.Key(m.Entitlement):
				inOrder = nameLess(p.Entitlement, m.Entitlement)
			case fold.Key(p.User) != fold.Key(m.User):
				inOrder = fold.Key(p.User) < fold.Key(m.User)
			default:
				inOrder = !nameLess(m.Pod, p.Pod)
			}
			if !inOrder {
				t.Errorf("seed %d (%s): move %d (%s, %s via %s) comes after (%s, %s via %s)", seed, what, i, m.Entitlement, m.User, m.Pod, p.Entitlement, p.User, p.Pod)
			}
		}
		// One by one, over the whole federation.
		want := map[reqKey]Move{}
		n := 0
		for _, ge := range before.Entitlements {
			for _, u := range before.Users {
				for _, cp := range points {
					var dec [2]*broker.Decision
					entitled := false
					for si, f := range []*broker.Federation{before, after} {
						req := broker.Request{User: u.Name, Entitlement: ge.Name, ConnectionServer: cp.ConnectionServer, Seed: int64(seed % 3)}
						if cp.ConnectionServer == "" {
							req.Pod = cp.Pod
						}
						if si == 1 {
							req.OfflinePods = offline
						}
						d, err := broker.Resolve(f, req)
						if err != nil {
							t.Fatalf("seed %d: %+v: %v", seed, req, err)
						}
						dec[si] = d
						for _, c := range d.Checks {
							if c.Check == "membership" && c.Passed {
								entitled = true
							}
						}
					}
					if !entitled {
						continue
					}
					n++
					b, a := result(dec[0]), result(dec[1])
					k := reqKey{u.Name, ge.Name, cp.Pod}
					if m, ok := seen[k]; ok && (m.Before != b || m.After != a) {
						t.Errorf("seed %d (%s): %v resolved by impact as %+v -> %+v, one by one %+v -> %+v", seed, what, k, m.Before, m.After, b, a)
					}
					if b.same(a) {
						continue
					}
					want[reqKey{u.Name, ge.Name, cp.Pod}] = Move{Before: b, After: a, FirstDifference: firstDifference(dec)}
				}
			}
		}
		requests += n
		moves += len(want)
		checked += len(seen)
		resolved += rep.Summary.Resolved
		if rep.Summary.Requests != n {
			t.Fatalf("seed %d (%s): %d requests counted, %d entitled", seed, what, rep.Summary.Requests, n)
		}
		moved := rep.Summary.ChangedOutcome + rep.Summary.ChangedSite + rep.Summary.ChangedPodOrPool
		if moved != len(rep.Moves) || rep.Summary.Unchanged+moved != n {
			t.Fatalf("seed %d (%s): summary %+v does not add up to %d requests and %d moves", seed, what, rep.Summary, n, len(rep.Moves))
		}
		if len(got) != len(want) {
			t.Errorf("seed %d (%s): impact moves %d requests, resolving each moves %d:\n got  %v\n want %v", seed, what, len(got), len(want), keys(got), keys(want))
			continue
		}
		for k, w := range want {
			g, ok := got[k]
			switch {
			case !ok:
				t.Errorf("seed %d (%s): %v moves (%+v -> %+v), impact does not say so", seed, what, k, w.Before, w.After)
			case g.Before != w.Before || g.After != w.After:
				t.Errorf("seed %d (%s): %v: impact %+v -> %+v, resolve %+v -> %+v", seed, what, k, g.Before, g.After, w.Before, w.After)
			case diffText(g.FirstDifference) != diffText(w.FirstDifference):
				t.Errorf("seed %d (%s): %v: first difference %s, resolve %s", seed, what, k, diffText(g.FirstDifference), diffText(w.FirstDifference))
			}
		}
	}
	t.Logf("%d seeds: %d requests, %d moved; impact resolved %d (before and after) for %d of them", seeds, requests, moves, resolved, checked)
}

func keys(m map[reqKey]Move) []reqKey {
	var out []reqKey
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i]) < fmt.Sprint(out[j]) })
	return out
}

func diffText(d Difference) string {
	line := func(l *TraceLine) string {
		if l == nil {
			return "(none)"
		}
		return fmt.Sprintf("%d. [%s] %s", l.Number, l.Step, l.Message)
	}
	return line(d.Before) + " / " + line(d.After)
}
