package broker

// Look-ups over a Federation. Names are matched case-insensitively with the
// same equivalence as strings.EqualFold, and every listing keeps the stored
// spelling.

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cpactl/cpactl/internal/fold"
)

// foldKey maps a name to a key shared by exactly the names strings.EqualFold
// accepts as equal (fold.Key).
func foldKey(s string) string { return fold.Key(s) }

// get is m[foldKey(name)], without building the key of an ASCII name.
func get[V any](m map[string]V, name string) V { return fold.Lookup(m, name) }

// sortNames sorts names in the name order every listing, tie and random
// order of the broker uses: case-insensitive, exact spelling breaking ties
// (nameLess, shared with the host selection).
func sortNames(names []string) {
	sortByName(names, func(s string) string { return s })
}

// sortByName sorts list stably in name order of name(x) (nameLess), each
// name's lower-case key computed once rather than per comparison: a stable
// sort's result is fixed by the order and the input, so it is the order
// sort.SliceStable with nameLess gives.
func sortByName[T any](list []T, name func(T) string) {
	if len(list) < 2 {
		return
	}
	type keyed struct {
		lower, name string
		v           T
	}
	ks := make([]keyed, len(list))
	for i, v := range list {
		n := name(v)
		ks[i] = keyed{strings.ToLower(n), n, v}
	}
	sort.SliceStable(ks, func(i, j int) bool {
		if ks[i].lower != ks[j].lower {
			return ks[i].lower < ks[j].lower
		}
		return ks[i].name < ks[j].name
	})
	for i := range ks {
		list[i] = ks[i].v
	}
}

// index holds a Federation's objects by folded name. When the data holds
// two objects of one kind whose names fold alike, the first one wins (lint
// reports such duplicates).
type index struct {
	f *Federation
	*places
	servers   byName[ConnectionServer]
	ges       byName[Entitlement]
	pools     byName[Pool]
	farms     byName[Farm]
	users     byName[User]
	groups    byName[Group]
	computers byName[Computer]
	farmHosts map[string][]Host         // by folded farm name, name order
	gePools   map[*Entitlement]*gePools // poolsOf, computed once per GE
}

// places is the part of an index built from the sites, the pods and the
// what-if offline pods alone; it is only read once built.
type places struct {
	sites         map[string]*Site
	pods          map[string]*Pod
	siteNames     []string          // every site, name order
	sitePods      map[string][]*Pod // by folded site name, pods in name order
	offline       map[string]bool   // folded pod names: stored offline or what-if
	whatIfOffline []string          // what-if offline pods, stored spelling
	// By the stored spelling of every site and pod name, what the look-ups
	// by folded name give for it: most names looked up are spelled as
	// stored, and folding one allocates.
	exactSites map[string]*Site
	exactPods  map[string]exactPod
	// What the echo of every request says of the offline pods
	// (describeRequest), in name order: each pod offline, stored or
	// what-if, once; the pods stored offline; the pods online but
	// offline by request; and the trace line that names the last two,
	// "" when both are empty.
	offlineNames, storedOffline, whatIfOfflineOnline []string
	offlineLine                                      string
}

// exactPod is a pod as looked up by a stored spelling of its name.
type exactPod struct {
	pod     *Pod
	offline bool
}

// Prepared holds indexes built once for many ResolveWith calls. Each part
// is used only by a call over a federation that holds the very slices it
// indexes; a nil part, or one that does not fit, is built by the call.
type Prepared struct {
	Places *Places
	Hosts  *Hosts
	// Searches, when set, remembers the site searches of the calls given
	// it (see Searches for what they must have in common); it is used
	// only when Places and Hosts are set and fit.
	Searches *Searches
	// LazyTrace leaves the trace's messages to be formatted as they are
	// read: Trace[i].Message may then be a format, and only
	// Decision.TraceMessage (or SameTraceStep) gives the text. For a
	// caller that reads the trace of few of its decisions (impact reads
	// the steps' names of each, and the texts of those that move).
	LazyTrace bool
}

// Hosts is the index of a list of hosts by farm, built once for many
// ResolveWith calls over federations that hold that very list. It is only
// read: it may be shared by concurrent calls. Neither it nor the list may
// be modified once built.
type Hosts struct {
	hosts     []Host
	farmHosts map[string][]Host
}

// NewHosts indexes hosts by farm.
func NewHosts(hosts []Host) *Hosts {
	return &Hosts{hosts: hosts, farmHosts: indexHosts(hosts)}
}

// indexHosts lists hosts by folded farm name, each farm's in name order.
func indexHosts(hosts []Host) map[string][]Host {
	m := map[string][]Host{}
	for _, h := range hosts {
		k := foldKey(h.Farm)
		m[k] = append(m[k], h)
	}
	for _, l := range m {
		sortByName(l, func(h Host) string { return h.Name })
	}
	return m
}

// Places is the index of a list of sites and a list of pods with the
// what-if offline pods, built once for many ResolveWith calls over
// federations that hold those very lists (the same slices, as when many
// small federations are assembled around one list of sites and pods). It
// is only read: it may be shared by concurrent calls. Neither it nor the
// lists it indexes may be modified once built.
type Places struct {
	sites   []Site
	pods    []Pod
	offline []string
	p       *places
}

// NewPlaces indexes sites and pods with the what-if offline pods
// offlinePods (as Request.OfflinePods).
func NewPlaces(sites []Site, pods []Pod, offlinePods []string) *Places {
	return &Places{sites: sites, pods: pods, offline: slices.Clone(offlinePods), p: newPlaces(sites, pods, offlinePods)}
}

// fits reports whether pl indexes f's very sites and pods with the what-if
// offline pods offlinePods.
func (pl *Places) fits(f *Federation, offlinePods []string) bool {
	return pl != nil && sameSlice(pl.sites, f.Sites) && sameSlice(pl.pods, f.Pods) && slices.Equal(pl.offline, offlinePods)
}

// sameSlice reports whether a and b are the same slice: the same length
// and, when not empty, the same first element.
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

func newPlaces(sites []Site, pods []Pod, offlinePods []string) *places {
	pl := &places{
		sites:    make(map[string]*Site, len(sites)),
		pods:     make(map[string]*Pod, len(pods)),
		sitePods: make(map[string][]*Pod, len(sites)),
		offline:  map[string]bool{},
	}
	for i := range sites {
		k := foldKey(sites[i].Name)
		if _, dup := pl.sites[k]; !dup {
			pl.sites[k] = &sites[i]
			pl.siteNames = append(pl.siteNames, sites[i].Name)
		}
	}
	sortNames(pl.siteNames)
	for i := range pods {
		p := &pods[i]
		k := foldKey(p.Name)
		if _, dup := pl.pods[k]; dup {
			continue
		}
		pl.pods[k] = p
		sk := foldKey(p.Site)
		pl.sitePods[sk] = append(pl.sitePods[sk], p)
		if !p.Online {
			pl.offline[k] = true
		}
	}
	for _, l := range pl.sitePods {
		sortByName(l, func(p *Pod) string { return p.Name })
	}
	for _, name := range offlinePods {
		if p := pl.pods[foldKey(name)]; p != nil {
			pl.offline[foldKey(p.Name)] = true
			if !fold.Contains(pl.whatIfOffline, p.Name) {
				pl.whatIfOffline = append(pl.whatIfOffline, p.Name)
			}
		}
	}
	pl.exactSites = make(map[string]*Site, len(sites))
	for i := range sites {
		pl.exactSites[sites[i].Name] = pl.sites[foldKey(sites[i].Name)]
	}
	pl.exactPods = make(map[string]exactPod, len(pods))
	for i := range pods {
		k := foldKey(pods[i].Name)
		pl.exactPods[pods[i].Name] = exactPod{pod: pl.pods[k], offline: pl.offline[k]}
	}
	for _, p := range pods {
		if pl.exactPods[p.Name].offline && !fold.Contains(pl.offlineNames, p.Name) {
			pl.offlineNames = append(pl.offlineNames, p.Name)
		}
		switch {
		case !p.Online:
			pl.storedOffline = append(pl.storedOffline, p.Name)
		case fold.Contains(pl.whatIfOffline, p.Name):
			pl.whatIfOfflineOnline = append(pl.whatIfOfflineOnline, p.Name)
		}
	}
	sortNames(pl.offlineNames)
	sortNames(pl.storedOffline)
	sortNames(pl.whatIfOfflineOnline)
	if len(pl.storedOffline)+len(pl.whatIfOfflineOnline) > 0 {
		pl.offlineLine = fmt.Sprintf("offline pods: %s stored offline; %s offline by request (what-if)", listOrNone(pl.storedOffline), listOrNone(pl.whatIfOfflineOnline))
	}
	return pl
}

// newIndex indexes f. offlinePods are the what-if offline pods; they must
// exist (the caller checks).
func newIndex(f *Federation, offlinePods []string) *index {
	return indexWith(f, offlinePods, Prepared{})
}

// indexWith is newIndex, with the parts of pre used rather than built again
// when they index f's very slices (and, for the places, those offline
// pods).
func indexWith(f *Federation, offlinePods []string, pre Prepared) *index {
	ix := &index{
		f:         f,
		servers:   newByName(f.ConnectionServers, func(x *ConnectionServer) string { return x.Name }),
		ges:       newByName(f.Entitlements, func(x *Entitlement) string { return x.Name }),
		pools:     newByName(f.Pools, func(x *Pool) string { return x.Name }),
		farms:     newByName(f.Farms, func(x *Farm) string { return x.Name }),
		users:     newByName(f.Users, func(x *User) string { return x.Name }),
		groups:    newByName(f.Groups, func(x *Group) string { return x.Name }),
		computers: newByName(f.Computers, func(x *Computer) string { return x.Name }),
		gePools:   map[*Entitlement]*gePools{},
	}
	if pl := pre.Places; pl.fits(f, offlinePods) {
		ix.places = pl.p
	} else {
		ix.places = newPlaces(f.Sites, f.Pods, offlinePods)
	}
	if hs := pre.Hosts; hs != nil && sameSlice(hs.hosts, f.Hosts) {
		ix.farmHosts = hs.farmHosts
	} else {
		ix.farmHosts = indexHosts(f.Hosts)
	}
	return ix
}

// byName finds the records of one kind by name, case-insensitively; of
// two whose names fold alike the first wins. A few records (a federation
// assembled for one request, as impact resolves them by the million,
// holds one user, a few groups, pools and farms) are scanned in order
// with strings.EqualFold, which accepts exactly the names fold.Key maps
// alike; more are put in a map by folded name.
type byName[T any] struct {
	list []T // the records, when scanned
	name func(*T) string
	m    map[string]*T // by folded name, when there are more
}

// scanned is the most records a byName scans rather than maps.
const scanned = 8

func newByName[T any](list []T, name func(*T) string) byName[T] {
	if len(list) <= scanned {
		return byName[T]{list: list, name: name}
	}
	m := make(map[string]*T, len(list))
	for i := range list {
		k := foldKey(name(&list[i]))
		if _, dup := m[k]; !dup {
			m[k] = &list[i]
		}
	}
	return byName[T]{m: m}
}

// get returns the record named name, nil when there is none.
func (b *byName[T]) get(name string) *T {
	if b.m != nil {
		return get(b.m, name)
	}
	for i := range b.list {
		if n := b.name(&b.list[i]); n == name || strings.EqualFold(n, name) {
			return &b.list[i]
		}
	}
	return nil
}

// Look-ups by name, case-insensitive; nil (or empty) when absent.

func (ix *index) site(name string) *Site {
	if s, ok := ix.exactSites[name]; ok {
		return s
	}
	return get(ix.sites, name)
}

func (ix *index) pod(name string) *Pod {
	if p, ok := ix.exactPods[name]; ok {
		return p.pod
	}
	return get(ix.pods, name)
}

func (ix *index) server(name string) *ConnectionServer { return ix.servers.get(name) }
func (ix *index) entitlement(name string) *Entitlement { return ix.ges.get(name) }
func (ix *index) pool(name string) *Pool               { return ix.pools.get(name) }
func (ix *index) farm(name string) *Farm               { return ix.farms.get(name) }
func (ix *index) user(name string) *User               { return ix.users.get(name) }
func (ix *index) group(name string) *Group             { return ix.groups.get(name) }
func (ix *index) computer(name string) *Computer       { return ix.computers.get(name) }
func (ix *index) hostsOf(farm string) []Host           { return get(ix.farmHosts, farm) }
func (ix *index) podsOf(site string) []*Pod            { return get(ix.sitePods, site) }

func (ix *index) isOffline(pod string) bool {
	if p, ok := ix.exactPods[pod]; ok {
		return p.offline
	}
	return get(ix.offline, pod)
}
