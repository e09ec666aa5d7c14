package impact

// One state of the federation (before or after), indexed once, and the
// per-request federation built from it: what broker.Resolve reads for one
// request, and nothing more (docs/impact.md).

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/internal/fold"
	"github.com/cpactl/cpactl/internal/nesting"
)

// placeholder names the user in every per-request federation: the decision
// is computed once for a class of users and the placeholder replaced by
// each member's name in the texts shown. No directory name holds a NUL.
const placeholder = "\x00user\x00"

// state is one federation with its look-ups. Names are matched as the
// broker matches them (fold.Key); when two objects of a kind share a name
// the first wins, as in the broker's index.
type state struct {
	f        *broker.Federation
	sites    map[string]int
	pods     map[string]int
	servers  map[string]int
	ges      map[string]int
	pools    map[string]int
	farms    map[string]int
	users    map[string]int
	groups   map[string]int
	hosts    map[string][]int // folded farm name -> hosts, in federation order
	rows     map[string][]int // folded user or group name -> its home-site rows (user rows under "u:")
	sessions map[string][]int // folded user name -> its sessions
	assigned map[string][]int // folded user name -> its assignments
	// Downward, for the entitled pairs: the users and the groups that are
	// immediate members of each group.
	groupUsers  map[string][]int
	groupGroups map[string][]string
	// groupSet is each user's immediate groups, interned: users with the
	// same list (exactly, in any order) share the number in both states.
	groupSet []int32
	// userKey and sessionGE are the folded names of each user and of each
	// session's GE, computed once.
	userKey, sessionGE []string
	// By user index, what the maps by folded name give for the user's
	// name, looked up once: its sessions and assignments (sessions,
	// assigned), and whether it has home-site rows of its own.
	userSessions, userAssigned [][]int
	userRows                   []bool
	// sessionOffline and assignmentOffline mark the sessions and the
	// assignments on a what-if offline pod (engine.markOffline).
	sessionOffline, assignmentOffline []bool
	// noPreferred is f.Sites with every preferred list left out;
	// withPreferred[i] keeps site i's (built when first asked for).
	noPreferred   []broker.Site
	withPreferred map[int][]broker.Site
	// places indexes the sites of each per-request federation with the
	// pods and the offline pods, once: noPreferred under -1, the sites of
	// withPreferred[i] under i (broker.ResolveWith).
	places  map[int]*broker.Places
	offline []string // what-if offline pods, passed with every request
	geCache map[string]*geData
}

// interner numbers group lists; shared by both states.
type interner map[string]int32

func (in interner) id(groups []string) int32 {
	sorted := append([]string(nil), groups...)
	sort.Strings(sorted)
	k := strings.Join(sorted, "\x00")
	if id, ok := in[k]; ok {
		return id
	}
	id := int32(len(in))
	in[k] = id
	return id
}

func index[T any](list []T, name func(T) string) map[string]int {
	m := make(map[string]int, len(list))
	for i := range list {
		k := fold.Key(name(list[i]))
		if _, dup := m[k]; !dup {
			m[k] = i
		}
	}
	return m
}

func newState(f *broker.Federation, offline []string, in interner) *state {
	s := &state{f: f, offline: offline,
		sites:   index(f.Sites, func(x broker.Site) string { return x.Name }),
		pods:    index(f.Pods, func(x broker.Pod) string { return x.Name }),
		servers: index(f.ConnectionServers, func(x broker.ConnectionServer) string { return x.Name }),
		ges:     index(f.Entitlements, func(x broker.Entitlement) string { return x.Name }),
		pools:   index(f.Pools, func(x broker.Pool) string { return x.Name }),
		farms:   index(f.Farms, func(x broker.Farm) string { return x.Name }),
		users:   index(f.Users, func(x broker.User) string { return x.Name }),
		groups:  index(f.Groups, func(x broker.Group) string { return x.Name }),
		hosts:   map[string][]int{}, rows: map[string][]int{}, sessions: map[string][]int{}, assigned: map[string][]int{},
		groupUsers: map[string][]int{}, groupGroups: map[string][]string{},
		withPreferred: map[int][]broker.Site{}, places: map[int]*broker.Places{}, geCache: map[string]*geData{},
	}
	for i, h := range f.Hosts {
		k := fold.Key(h.Farm)
		s.hosts[k] = append(s.hosts[k], i)
	}
	for i, r := range f.HomeSites {
		switch {
		case r.User != "":
			k := "u:" + fold.Key(r.User)
			s.rows[k] = append(s.rows[k], i)
		case r.Group != "":
			k := fold.Key(r.Group)
			s.rows[k] = append(s.rows[k], i)
		}
	}
	s.sessionGE = make([]string, len(f.Sessions))
	for i, x := range f.Sessions {
		s.sessionGE[i] = fold.Key(x.Entitlement)
		k := fold.Key(x.User)
		s.sessions[k] = append(s.sessions[k], i)
	}
	for i, a := range f.Assignments {
		k := fold.Key(a.User)
		s.assigned[k] = append(s.assigned[k], i)
	}
	s.groupSet = make([]int32, len(f.Users))
	s.userKey = make([]string, len(f.Users))
	s.userSessions, s.userAssigned, s.userRows = make([][]int, len(f.Users)), make([][]int, len(f.Users)), make([]bool, len(f.Users))
	for i, u := range f.Users {
		s.groupSet[i] = in.id(u.Groups)
		s.userKey[i] = fold.Key(u.Name)
		k := s.userKey[i]
		s.userSessions[i], s.userAssigned[i], s.userRows[i] = s.sessions[k], s.assigned[k], len(s.rows["u:"+k]) > 0
		if s.users[s.userKey[i]] != i {
			continue // a second user of that name: the broker sees the first
		}
		for _, g := range u.Groups {
			k := fold.Key(g)
			s.groupUsers[k] = append(s.groupUsers[k], i)
		}
	}
	for i, g := range f.Groups {
		if s.groups[fold.Key(g.Name)] != i {
			continue
		}
		for _, p := range g.Groups {
			k := fold.Key(p)
			s.groupGroups[k] = append(s.groupGroups[k], g.Name)
		}
	}
	s.noPreferred = make([]broker.Site, len(f.Sites))
	for i, x := range f.Sites {
		s.noPreferred[i] = broker.Site{Name: x.Name}
	}
	s.places[-1] = broker.NewPlaces(s.noPreferred, f.Pods, offline)
	return s
}

// podsState is the part of a state that says which pods are online and
// where (DefaultPoints): the federation, its sites and pods by folded
// name, and the what-if offline pods.
func podsState(f *broker.Federation, offline []string) *state {
	return &state{f: f, offline: offline,
		sites: index(f.Sites, func(x broker.Site) string { return x.Name }),
		pods:  index(f.Pods, func(x broker.Pod) string { return x.Name }),
	}
}

// sitesFor returns the sites as a request through connecting site i sees
// them: only that site's preferred list is ever read (docs/resolve.md step
// 5, tier c), and only when the GE or its backup uses preferred sites.
func (s *state) sitesFor(i int, preferred bool) []broker.Site {
	if !preferred || i < 0 {
		return s.noPreferred
	}
	if l, ok := s.withPreferred[i]; ok {
		return l
	}
	l := append([]broker.Site(nil), s.noPreferred...)
	l[i].PreferredSites = s.f.Sites[i].PreferredSites
	s.withPreferred[i] = l
	s.places[i] = broker.NewPlaces(l, s.f.Pods, s.offline)
	return l
}

// placesFor returns the index of the sites sitesFor(i, preferred) returns,
// with the pods and the offline pods.
func (s *state) placesFor(i int, preferred bool) *broker.Places {
	if !preferred || i < 0 {
		return s.places[-1]
	}
	return s.places[i]
}

// geData is what every request for one GE reads of the GE: its record (and
// its backup's), their pools, those pools' farms and the farms' hosts.
type geData struct {
	ge        broker.Entitlement // Members: the group members only (a user member is the user's part)
	backup    *broker.Entitlement
	direct    map[string]bool // folded names of the users that are direct members
	preferred bool            // the GE or its backup reads the connecting site's preferred list
	loadThr   bool            // ... reads pae-LoadThresholdForSite
	rds       bool            // ... has a farm-backed pool: the pae-RDS* values are read
	app       bool            // an application GE: the user's sessions of other GEs are read
	ges       []broker.Entitlement
	pools     []broker.Pool
	farms     []broker.Farm
	hosts     []broker.Host
	hostIx    *broker.Hosts   // hosts indexed once (broker.ResolveWith)
	key       string          // the GE's folded name
	backupKey string          // the backup's, when it has one
	poolKeys  map[string]bool // folded names of the pools above
	farmKeys  map[string]bool
}

// usesPreferred reports whether a GE's search reads the connecting site's
// preferred sites: Use Preferred Sites with scope ANY (the default and any
// unknown scope are ANY).
func usesPreferred(ge *broker.Entitlement) bool {
	sc := broker.Scope(strings.ToUpper(string(ge.Scope)))
	return ge.UsePreferredSites && sc != broker.ScopeSite && sc != broker.ScopeLocal
}

// ge returns the GE data for the folded GE name k, nil when the state has
// no such GE.
func (s *state) ge(k string) *geData {
	if d, ok := s.geCache[k]; ok {
		return d
	}
	i, ok := s.ges[k]
	if !ok {
		s.geCache[k] = nil
		return nil
	}
	g := s.f.Entitlements[i]
	d := &geData{ge: g, direct: map[string]bool{}, poolKeys: map[string]bool{}, farmKeys: map[string]bool{}}
	d.ge.Members = nil
	for _, m := range g.Members {
		if strings.EqualFold(string(m.Kind), string(broker.MemberUser)) {
			d.direct[fold.Key(m.Name)] = true
			continue
		}
		d.ge.Members = append(d.ge.Members, m)
	}
	d.ges = []broker.Entitlement{d.ge}
	d.key = fold.Key(g.Name)
	d.preferred = usesPreferred(&g)
	d.loadThr = d.preferred
	d.app = broker.EntitlementType(strings.ToUpper(string(g.Type))) == broker.TypeApplication
	poolNames := g.Pools
	if g.Backup != "" {
		if j, ok := s.ges[fold.Key(g.Backup)]; ok && fold.Key(s.f.Entitlements[j].Name) != fold.Key(g.Name) {
			b := s.f.Entitlements[j]
			d.backup = &b
			d.backupKey = fold.Key(b.Name)
			d.ges = append(d.ges, b)
			d.preferred = d.preferred || usesPreferred(&b)
			d.loadThr = d.preferred
			poolNames = append(append([]string(nil), poolNames...), b.Pools...)
		}
	}
	for _, name := range poolNames {
		s.addPool(name, &d.pools, &d.farms, d.poolKeys, d.farmKeys, &d.hosts)
	}
	for _, p := range d.pools {
		if p.Kind.FarmBacked() {
			d.rds = true
		}
	}
	d.hostIx = broker.NewHosts(d.hosts)
	s.geCache[k] = d
	return d
}

// addPool adds the pool named name (once), its farm and, when hosts is not
// nil, the farm's hosts.
func (s *state) addPool(name string, pools *[]broker.Pool, farms *[]broker.Farm, poolKeys, farmKeys map[string]bool, hosts *[]broker.Host) {
	pi, ok := s.pools[fold.Key(name)]
	if !ok || poolKeys[fold.Key(s.f.Pools[pi].Name)] {
		return
	}
	p := s.f.Pools[pi]
	poolKeys[fold.Key(p.Name)] = true
	*pools = append(*pools, p)
	fi, ok := s.farms[fold.Key(p.Farm)]
	if p.Farm == "" || !ok || farmKeys[fold.Key(s.f.Farms[fi].Name)] {
		return
	}
	fm := s.f.Farms[fi]
	farmKeys[fold.Key(fm.Name)] = true
	*farms = append(*farms, fm)
	if hosts != nil {
		for _, h := range s.hosts[fold.Key(fm.Name)] {
			*hosts = append(*hosts, s.f.Hosts[h])
		}
	}
}

// userPart is what one request reads of its user: the user (named by the
// placeholder) with its immediate groups, the groups up the nesting, the
// home-site rows of the user and its immediate groups, the sessions the
// decision looks at, with their entitlements and pools, and the user's
// assignments for the GE.
type userPart struct {
	direct      bool
	users       []broker.User
	groups      []broker.Group
	rows        []broker.HomeSite
	sessions    []broker.Session
	ges         []broker.Entitlement // the sessions' entitlements not among the GE's
	pools       []broker.Pool        // the sessions' pools not among the GE's
	farms       []broker.Farm
	assignments []broker.Assignment
	// ids are the real IDs of the sessions, by rank, when the sessions are
	// named by placeholders (sessionPlaceholder); nil when they keep their
	// IDs (an empty ID, or two IDs alike but for case).
	ids []string
	// The lists of its requests' federation for GE data assembled
	// (assemble), made once.
	assembled    *geData
	entitlements []broker.Entitlement
	allPools     []broker.Pool
	allFarms     []broker.Farm
}

// sessionPlaceholder names the session of rank i (in name order of the
// user's session IDs): placeholders sort as the IDs they stand for, so
// every order the broker takes by ID is the same.
func sessionPlaceholder(i int) string { return fmt.Sprintf("\x00session%06d\x00", i) }

// placeholdSessions names the part's sessions by placeholders, when it
// can.
func (p *userPart) placeholdSessions() {
	if len(p.sessions) == 0 {
		return
	}
	seen := map[string]string{}
	var ids []string
	for _, x := range p.sessions {
		k := fold.Key(x.ID)
		if x.ID == "" {
			return
		}
		if prev, ok := seen[k]; ok {
			if prev != x.ID {
				return // alike but for case: the broker breaks the tie by pod
			}
			continue
		}
		seen[k] = x.ID
		ids = append(ids, x.ID)
	}
	sort.Slice(ids, func(i, j int) bool { return nameLess(ids[i], ids[j]) })
	rank := make(map[string]int, len(ids))
	for i, id := range ids {
		rank[id] = i
	}
	for i := range p.sessions {
		p.sessions[i].ID = sessionPlaceholder(rank[p.sessions[i].ID])
	}
	p.ids = ids
}

// user builds the part of user index ui for GE data d.
func (s *state) user(ui int, d *geData) *userPart {
	u := s.f.Users[ui]
	k := fold.Key(u.Name)
	p := &userPart{direct: d.direct[k], users: []broker.User{{Name: placeholder, Groups: u.Groups}}}

	// Groups up the nesting (each once), as the broker walks them.
	once := nesting.Once(fold.Key)
	nesting.Up(u.Groups, func(name string) []string {
		if gi, ok := s.groups[fold.Key(name)]; ok {
			return s.f.Groups[gi].Groups
		}
		return nil
	}, func(name string) bool {
		if !once(name) {
			return false
		}
		if gi, ok := s.groups[fold.Key(name)]; ok {
			p.groups = append(p.groups, s.f.Groups[gi])
		}
		return true
	}, nil)

	// Home-site rows of the user and its immediate groups, in the
	// federation's order.
	var idx []int
	idx = append(idx, s.rows["u:"+k]...)
	seen := map[string]bool{}
	for _, g := range u.Groups {
		if gk := fold.Key(g); !seen[gk] {
			seen[gk] = true
			idx = append(idx, s.rows[gk]...)
		}
	}
	sort.Ints(idx)
	for _, i := range idx {
		r := s.f.HomeSites[i]
		if r.User != "" {
			r.User = placeholder
		}
		p.rows = append(p.rows, r)
	}

	// Sessions: of the GE and its backup; for an application GE, every
	// session of the user (it may open in one of another GE).
	geKeys := map[string]bool{fold.Key(d.ge.Name): true}
	if d.backup != nil {
		geKeys[fold.Key(d.backup.Name)] = true
	}
	var poolKeys, farmKeys map[string]bool
	for _, i := range s.sessions[k] {
		if poolKeys == nil {
			poolKeys, farmKeys = map[string]bool{}, map[string]bool{}
			for k := range d.poolKeys {
				poolKeys[k] = true
			}
			for k := range d.farmKeys {
				farmKeys[k] = true
			}
		}
		x := s.f.Sessions[i]
		ek := fold.Key(x.Entitlement)
		if !geKeys[ek] && !d.app {
			continue
		}
		x.User = placeholder
		p.sessions = append(p.sessions, x)
		if gi, ok := s.ges[ek]; ok && !geKeys[fold.Key(s.f.Entitlements[gi].Name)] {
			g := s.f.Entitlements[gi]
			geKeys[fold.Key(g.Name)] = true
			g.Members, g.Pools = nil, nil
			p.ges = append(p.ges, g)
		}
		s.addPool(x.Pool, &p.pools, &p.farms, poolKeys, farmKeys, nil)
	}
	p.placeholdSessions()
	for _, i := range s.assigned[k] {
		a := s.f.Assignments[i]
		if strings.EqualFold(a.Entitlement, d.ge.Name) {
			a.User = placeholder
			p.assignments = append(p.assignments, a)
		}
	}
	return p
}

// groupRows encodes the home-site rows of user ui's immediate groups, in
// the federation's order, as the user's part holds them.
func (s *state) groupRows(ui int) string {
	var idx []int
	seen := map[string]bool{}
	for _, g := range s.f.Users[ui].Groups {
		if gk := fold.Key(g); !seen[gk] {
			seen[gk] = true
			idx = append(idx, s.rows[gk]...)
		}
	}
	sort.Ints(idx)
	var b strings.Builder
	for _, i := range idx {
		r := s.f.HomeSites[i]
		b.WriteString(r.Group + "\x00" + r.Entitlement + "\x00" + r.Site + "\x01")
	}
	return b.String()
}

// federation assembles the federation of one request. The lists that
// hold the user's records besides the GE's (the entitlements, and the
// pools and farms when its sessions add some) are made once per user
// part and shared by its requests from every point (Resolve reads f
// only).
func (s *state) federation(d *geData, u *userPart, cs []broker.ConnectionServer, site int) *broker.Federation {
	if u.assembled != d {
		u.assemble(d)
	}
	return &broker.Federation{
		Settings:          s.f.Settings,
		Sites:             s.sitesFor(site, d.preferred),
		Pods:              s.f.Pods,
		ConnectionServers: cs,
		Pools:             u.allPools,
		Farms:             u.allFarms,
		Hosts:             d.hosts,
		Users:             u.users,
		Groups:            u.groups,
		HomeSites:         u.rows,
		Sessions:          u.sessions,
		Assignments:       u.assignments,
		Entitlements:      u.entitlements,
	}
}

// sameRecords reports whether two parts hold the same records (the
// lists assembled from them aside).
func (u *userPart) sameRecords(o *userPart) bool {
	a, b := *u, *o
	a.assembled, a.entitlements, a.allPools, a.allFarms = nil, nil, nil, nil
	b.assembled, b.entitlements, b.allPools, b.allFarms = nil, nil, nil, nil
	return reflect.DeepEqual(a, b)
}

// assemble makes the lists of the part's requests for GE data d that
// hold its records besides the GE's (federation).
func (u *userPart) assemble(d *geData) {
	ge := d.ge
	if u.direct {
		ge.Members = append(append([]broker.Member(nil), ge.Members...), broker.Member{Kind: broker.MemberUser, Name: placeholder})
	}
	u.assembled = d
	u.entitlements = append(append([]broker.Entitlement{ge}, d.ges[1:]...), u.ges...)
	u.allPools, u.allFarms = d.pools, d.farms
	if len(u.pools) > 0 {
		u.allPools = append(append([]broker.Pool(nil), d.pools...), u.pools...)
		u.allFarms = append(append([]broker.Farm(nil), d.farms...), u.farms...)
	}
}
