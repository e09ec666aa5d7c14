package broker

// Look-ups over a Federation. Names are matched case-insensitively with the
// same equivalence as strings.EqualFold, and every listing keeps the stored
// spelling.

import (
	"sort"

	"github.com/cpactl/cpactl/internal/fold"
)

// foldKey maps a name to a key shared by exactly the names strings.EqualFold
// accepts as equal (fold.Key).
func foldKey(s string) string { return fold.Key(s) }

// sortNames sorts names in the name order every listing, tie and random
// order of the broker uses: case-insensitive, exact spelling breaking ties
// (nameLess, shared with the host selection).
func sortNames(names []string) {
	sort.SliceStable(names, func(i, j int) bool { return nameLess(names[i], names[j]) })
}

// index holds a Federation's objects by folded name. When the data holds
// two objects of one kind whose names fold alike, the first one wins (lint
// reports such duplicates).
type index struct {
	f             *Federation
	sites         map[string]*Site
	pods          map[string]*Pod
	servers       map[string]*ConnectionServer
	ges           map[string]*Entitlement
	pools         map[string]*Pool
	farms         map[string]*Farm
	users         map[string]*User
	groups        map[string]*Group
	computers     map[string]*Computer
	farmHosts     map[string][]Host         // by folded farm name, name order
	siteNames     []string                  // every site, name order
	sitePods      map[string][]*Pod         // by folded site name, pods in name order
	offline       map[string]bool           // folded pod names: stored offline or what-if
	whatIfOffline []string                  // what-if offline pods, stored spelling
	gePools       map[*Entitlement]*gePools // poolsOf, computed once per GE
}

// newIndex indexes f. offlinePods are the what-if offline pods; they must
// exist (the caller checks).
func newIndex(f *Federation, offlinePods []string) *index {
	ix := &index{
		f:         f,
		sites:     map[string]*Site{},
		pods:      map[string]*Pod{},
		servers:   map[string]*ConnectionServer{},
		ges:       map[string]*Entitlement{},
		pools:     map[string]*Pool{},
		farms:     map[string]*Farm{},
		users:     map[string]*User{},
		groups:    map[string]*Group{},
		computers: map[string]*Computer{},
		farmHosts: map[string][]Host{},
		sitePods:  map[string][]*Pod{},
		offline:   map[string]bool{},
		gePools:   map[*Entitlement]*gePools{},
	}
	for i := range f.Sites {
		k := foldKey(f.Sites[i].Name)
		if _, dup := ix.sites[k]; !dup {
			ix.sites[k] = &f.Sites[i]
			ix.siteNames = append(ix.siteNames, f.Sites[i].Name)
		}
	}
	sortNames(ix.siteNames)
	for i := range f.Pods {
		p := &f.Pods[i]
		k := foldKey(p.Name)
		if _, dup := ix.pods[k]; dup {
			continue
		}
		ix.pods[k] = p
		sk := foldKey(p.Site)
		ix.sitePods[sk] = append(ix.sitePods[sk], p)
		if !p.Online {
			ix.offline[k] = true
		}
	}
	for _, pods := range ix.sitePods {
		sort.SliceStable(pods, func(i, j int) bool { return nameLess(pods[i].Name, pods[j].Name) })
	}
	for _, name := range offlinePods {
		if p := ix.pod(name); p != nil {
			ix.offline[foldKey(p.Name)] = true
			if !fold.Contains(ix.whatIfOffline, p.Name) {
				ix.whatIfOffline = append(ix.whatIfOffline, p.Name)
			}
		}
	}
	for i := range f.ConnectionServers {
		putFirst(ix.servers, f.ConnectionServers[i].Name, &f.ConnectionServers[i])
	}
	for i := range f.Entitlements {
		putFirst(ix.ges, f.Entitlements[i].Name, &f.Entitlements[i])
	}
	for i := range f.Pools {
		putFirst(ix.pools, f.Pools[i].Name, &f.Pools[i])
	}
	for i := range f.Farms {
		putFirst(ix.farms, f.Farms[i].Name, &f.Farms[i])
	}
	for i := range f.Users {
		putFirst(ix.users, f.Users[i].Name, &f.Users[i])
	}
	for i := range f.Groups {
		putFirst(ix.groups, f.Groups[i].Name, &f.Groups[i])
	}
	for i := range f.Computers {
		putFirst(ix.computers, f.Computers[i].Name, &f.Computers[i])
	}
	for _, h := range f.Hosts {
		k := foldKey(h.Farm)
		ix.farmHosts[k] = append(ix.farmHosts[k], h)
	}
	for _, hosts := range ix.farmHosts {
		sort.SliceStable(hosts, func(i, j int) bool { return nameLess(hosts[i].Name, hosts[j].Name) })
	}
	return ix
}

// putFirst stores v under name unless a name folding alike is already there.
func putFirst[T any](m map[string]*T, name string, v *T) {
	k := foldKey(name)
	if _, dup := m[k]; !dup {
		m[k] = v
	}
}

// Look-ups by name, case-insensitive; nil (or empty) when absent.

func (ix *index) site(name string) *Site               { return ix.sites[foldKey(name)] }
func (ix *index) pod(name string) *Pod                 { return ix.pods[foldKey(name)] }
func (ix *index) server(name string) *ConnectionServer { return ix.servers[foldKey(name)] }
func (ix *index) entitlement(name string) *Entitlement { return ix.ges[foldKey(name)] }
func (ix *index) pool(name string) *Pool               { return ix.pools[foldKey(name)] }
func (ix *index) farm(name string) *Farm               { return ix.farms[foldKey(name)] }
func (ix *index) user(name string) *User               { return ix.users[foldKey(name)] }
func (ix *index) group(name string) *Group             { return ix.groups[foldKey(name)] }
func (ix *index) computer(name string) *Computer       { return ix.computers[foldKey(name)] }
func (ix *index) hostsOf(farm string) []Host           { return ix.farmHosts[foldKey(farm)] }
func (ix *index) podsOf(site string) []*Pod            { return ix.sitePods[foldKey(site)] }
func (ix *index) isOffline(pod string) bool            { return ix.offline[foldKey(pod)] }
