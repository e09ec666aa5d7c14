// Package impact answers "if I make this change, whose sessions land
// somewhere else, and where?": for every (user, entitlement) pair the
// federation entitles, from each connecting point, it resolves the request
// before and after a change with broker.Resolve and reports what moves
// (docs/impact.md).
//
// Users whose decision inputs are identical are resolved once per
// equivalence class and counted; a request whose inputs are the same
// before and after is counted as unchanged without being resolved. The
// package is pure: it imports the broker and plain Go, no LDAP, no cobra.
package impact

import (
	"fmt"
	"reflect"
	"runtime"
	"sort"
	"sync"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/internal/fold"
	"github.com/cpactl/cpactl/internal/objkind"
)

// ConnectingPoint is where the users connect: a Connection Server, or a pod
// (as if through a Connection Server of that pod without tags).
type ConnectingPoint struct {
	ConnectionServer string `json:"connection_server,omitempty"`
	Pod              string `json:"pod"`
	Site             string `json:"site"`
}

// Options say which requests to compare.
type Options struct {
	// Points are the connecting points; each must exist, and its pod be
	// online, before and after (DefaultPoints picks them).
	Points []ConnectingPoint
	// Offline are the what-if offline pods of the "after" state, passed
	// with every request (broker.Request.OfflinePods).
	Offline []string
	// Entitlements, Users and Groups filter the requests: only these GEs,
	// only these users, only the members (directly or through nested
	// groups) of these groups, in either state. Empty: no filter.
	Entitlements, Users, Groups []string
	// Seed seeds every random order, as resolve's --seed.
	Seed int64
	// observe, when set (by tests), sees every request resolved, moved or
	// not, as a Move.
	observe func(Move)
	// Progress, when set, is told of the work as it goes: each stage as
	// it starts (what is done, the unit counted, how many there are), and
	// returns what counts the units done (called from several goroutines).
	// The stages: the entitlements whose users are put in classes, then
	// the requests compared (counted or resolved).
	Progress func(what, unit string, total int64) func(n int64)
	// full, set by tests, resolves without probes (probe.go): the full
	// comparison the probes must agree with.
	full bool
}

// Result is one side of a request: the outcome and where it lands.
type Result struct {
	Outcome broker.Outcome `json:"outcome"`
	Site    string         `json:"site"`
	Pod     string         `json:"pod"`
	Pool    string         `json:"pool"`
	Farm    string         `json:"farm"`
	Host    string         `json:"host"`
	Machine string         `json:"machine"`
	Session string         `json:"session"`
	Reason  string         `json:"reason"`
}

// OutcomeAbsent is the outcome of a request in a state where its user or
// entitlement does not exist (a what-if that deletes or adds one).
const OutcomeAbsent broker.Outcome = "ABSENT"

// same reports whether two results keep the placement: the same outcome,
// site, pod, pool, farm, host, machine and session.
func (r Result) same(o Result) bool {
	r.Reason, o.Reason = "", ""
	return r == o
}

// TraceLine is one numbered step of a decision's trace.
type TraceLine struct {
	Number  int    `json:"number"` // 1-based, as resolve numbers the trace
	Step    string `json:"step"`
	Message string `json:"message"`
}

// Difference is the first trace step where before and after differ, the
// echo of the request (steps "request", which name the what-ifs) left
// out; each side in its own trace's numbering, nil when that trace has no
// more steps.
type Difference struct {
	Before *TraceLine `json:"before"`
	After  *TraceLine `json:"after"`
}

// Move is one request whose placement changes.
type Move struct {
	User             string     `json:"user"`
	Entitlement      string     `json:"entitlement"`
	ConnectionServer string     `json:"connection_server,omitempty"`
	Pod              string     `json:"connecting_pod"`
	Change           string     `json:"change"` // outcome, site or pod_or_pool
	Before           Result     `json:"before"`
	After            Result     `json:"after"`
	FirstDifference  Difference `json:"first_difference"`
	// Why says in a few words why it moves ("London's rank 1 changed
	// from São Paulo to New York", "pod lon-1 is offline"); the first
	// difference gives the broker's own step.
	Why string `json:"why"`
}

// Change kinds of a Move.
const (
	ChangeOutcome   = "outcome"
	ChangeSite      = "site"
	ChangePodOrPool = "pod_or_pool"
)

// Count is one cell of a from -> to tally.
type Count struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Requests int    `json:"requests"`
}

// Summary counts every request compared.
type Summary struct {
	Requests         int `json:"requests"`
	Unchanged        int `json:"unchanged"`
	ChangedOutcome   int `json:"changed_outcome"`
	ChangedSite      int `json:"changed_site"`
	ChangedPodOrPool int `json:"changed_pod_or_pool"`
	// Outcomes tallies the changes of outcome (PLACED -> NO_CAPACITY).
	Outcomes []Count `json:"outcomes"`
	// Sites is the from -> to matrix of sites of the requests that move
	// ("" is no placement: DENIED, NO_CAPACITY, ...), cells in name order.
	Sites []Count `json:"sites"`
	// Resolved says how many requests were resolved (one per equivalence
	// class and connecting point, before and after counted once, and one
	// per probe: probe.go); the rest were counted.
	Resolved int `json:"resolved"`
}

// Report is the answer of Run.
type Report struct {
	Points  []ConnectingPoint `json:"connecting_points"`
	Summary Summary           `json:"summary"`
	// Moves are the requests that move, by entitlement, user and
	// connecting point.
	Moves []Move `json:"moves"`
}

// DefaultPoints returns one connecting point for each pod online in both
// states, in name order (site is "" for every site): the pod's first
// untagged Connection Server by name, else the pod itself.
func DefaultPoints(before, after *broker.Federation, offline []string, site string) ([]ConnectingPoint, error) {
	b, a := podsState(before, nil), podsState(after, offline)
	if site != "" {
		if _, ok := b.sites[fold.Key(site)]; !ok {
			return nil, &broker.NotFoundError{Kind: objkind.Site, Name: site}
		}
	}
	var out []ConnectingPoint
	for _, p := range before.Pods {
		if b.f.Pods[b.pods[fold.Key(p.Name)]].Name != p.Name {
			continue
		}
		if site != "" && fold.Key(p.Site) != fold.Key(site) {
			continue
		}
		if !b.online(p.Name) || !a.online(p.Name) {
			continue
		}
		cp := ConnectingPoint{Pod: p.Name, Site: p.Site}
		if si, ok := b.sites[fold.Key(p.Site)]; ok {
			cp.Site = before.Sites[si].Name
		}
		var untagged []string
		for _, cs := range before.ConnectionServers {
			if fold.Key(cs.Pod) == fold.Key(p.Name) && len(cs.Tags) == 0 {
				untagged = append(untagged, cs.Name)
			}
		}
		if len(untagged) > 0 {
			sort.Slice(untagged, func(i, j int) bool { return nameLess(untagged[i], untagged[j]) })
			cp.ConnectionServer = untagged[0]
		}
		out = append(out, cp)
	}
	sort.SliceStable(out, func(i, j int) bool { return nameLess(out[i].Pod, out[j].Pod) })
	return out, nil
}

// online reports whether pod exists and is online in the state (stored or
// what-if).
func (s *state) online(pod string) bool {
	i, ok := s.pods[fold.Key(pod)]
	if !ok || !s.f.Pods[i].Online {
		return false
	}
	for _, p := range s.offline {
		if fold.Key(p) == fold.Key(pod) {
			return false
		}
	}
	return true
}

// Point resolves a Connection Server name to its connecting point, as the
// before state holds it.
func Point(before *broker.Federation, cs string) (ConnectingPoint, error) {
	for _, x := range before.ConnectionServers {
		if fold.Key(x.Name) != fold.Key(cs) {
			continue
		}
		cp := ConnectingPoint{ConnectionServer: x.Name, Pod: x.Pod}
		for _, p := range before.Pods {
			if fold.Key(p.Name) == fold.Key(x.Pod) {
				cp.Pod, cp.Site = p.Name, p.Site
				break
			}
		}
		return cp, nil
	}
	return ConnectingPoint{}, &broker.NotFoundError{Kind: objkind.ConnectionServer, Name: cs}
}

// nameLess is the broker's name order: case-insensitive, the exact spelling
// breaking ties.
func nameLess(a, b string) bool {
	if ka, kb := fold.Key(a), fold.Key(b); ka != kb {
		return ka < kb
	}
	return a < b
}

// Run compares every request before and after.
func Run(before, after *broker.Federation, opt Options) (*Report, error) {
	in := interner{}
	e := &engine{b: newState(before, nil, in), a: newState(after, opt.Offline, in), opt: opt}
	return e.run()
}

type engine struct {
	b, a *state
	opt  Options
	rep  Report
	only map[string]bool // the users the filters keep, nil for all
	// What reads the same in both states (docs/impact.md).
	ldSame, rdsSame, common, usersSame bool
	groupsSame                         bool            // every group record is the same in both states
	offline                            map[string]bool // folded what-if offline pods
	// Per point and state: the Connection Server (nil for a pod) and the
	// connecting site's index.
	points []point
}

type point struct {
	cp     ConnectingPoint
	cs     [2]*broker.ConnectionServer
	csList [2][]broker.ConnectionServer // the server alone, as a request's federation lists it (nil for a pod)
	site   [2]int
	csSame bool // the server and its pod's site are the same in both states
	prefs  bool // the connecting site's preferred list is the same in both states
}

func (e *engine) states() [2]*state { return [2]*state{e.b, e.a} }

func (e *engine) run() (*Report, error) {
	e.rep.Points = append([]ConnectingPoint{}, e.opt.Points...)
	if err := e.checkPoints(); err != nil {
		return nil, err
	}
	ges, err := e.entitlements()
	if err != nil {
		return nil, err
	}
	if e.only, err = e.userFilter(); err != nil {
		return nil, err
	}
	b, a := e.b.f, e.a.f
	e.ldSame = b.Settings.LoadThresholdForSite == a.Settings.LoadThresholdForSite
	sb, sa := b.Settings, a.Settings
	sb.LoadThresholdForSite, sa.LoadThresholdForSite = 0, 0
	sb.EnableSiteRedirection, sa.EnableSiteRedirection = false, false
	e.rdsSame = sb == sa
	e.offline = map[string]bool{}
	for _, p := range e.opt.Offline {
		e.offline[fold.Key(p)] = true
	}
	e.markOffline()
	e.common = reflect.DeepEqual(b.Pods, a.Pods) &&
		reflect.DeepEqual(e.b.noPreferred, e.a.noPreferred) &&
		b.Settings.EnableSiteRedirection == a.Settings.EnableSiteRedirection
	// Everything a user's part holds is the same in both states (the
	// user's part of every request is then the same before and after).
	e.usersSame = reflect.DeepEqual(b.Users, a.Users) && reflect.DeepEqual(b.Groups, a.Groups) &&
		reflect.DeepEqual(b.HomeSites, a.HomeSites) && reflect.DeepEqual(b.Sessions, a.Sessions) &&
		reflect.DeepEqual(b.Assignments, a.Assignments) && reflect.DeepEqual(b.Entitlements, a.Entitlements) &&
		reflect.DeepEqual(b.Pools, a.Pools) && reflect.DeepEqual(b.Farms, a.Farms)

	e.groupsSame = reflect.DeepEqual(b.Groups, a.Groups)

	// The look-ups built lazily are built now: the GEs then run in
	// parallel, reading the states only.
	for _, gk := range ges {
		e.b.ge(gk)
		e.a.ge(gk)
	}
	for _, st := range e.states() {
		for i := range st.f.Sites {
			st.sitesFor(i, true)
		}
	}
	// Two passes over the GEs, each on every processor: the classes of
	// each GE first, which count the requests, then the comparison.
	plans := make([]*gePlan, len(ges))
	grouped := e.stage("grouping users", "entitlements", int64(len(ges)))
	parallel(len(ges), func(i int) {
		plans[i] = e.planGE(ges[i])
		grouped(1)
	})
	total := 0
	for _, pl := range plans {
		total += pl.requests
	}
	compared := e.stage("comparing", "requests", int64(total))
	outs := make([]geOut, len(ges))
	parallel(len(ges), func(i int) {
		outs[i] = e.runGE(plans[i], compared)
		outs[i].order = e.sortMoves(&outs[i].moves)
		plans[i] = nil
	})

	outcomes, sites := map[[2]string]int{}, map[[2]string]int{}
	// Each GE's moves, by user and connecting pod (sorted), the GEs in
	// name order: by entitlement, user and connecting pod. Each GE's
	// part of the report starts at its offset.
	offsets := make([]int, len(outs)+1)
	s := &e.rep.Summary
	for i, o := range outs {
		if o.err != nil {
			return nil, o.err
		}
		offsets[i+1] = offsets[i] + len(o.order)
		s.Requests += o.sum.Requests
		s.Unchanged += o.sum.Unchanged
		s.ChangedOutcome += o.sum.ChangedOutcome
		s.ChangedSite += o.sum.ChangedSite
		s.ChangedPodOrPool += o.sum.ChangedPodOrPool
		s.Resolved += o.sum.Resolved
		for k, n := range o.outcomes {
			outcomes[k] += n
		}
		for k, n := range o.sites {
			sites[k] += n
		}
	}
	s.Outcomes, s.Sites = counts(outcomes), counts(sites)
	e.rep.Moves = make([]Move, offsets[len(outs)])
	parallel(len(outs), func(i int) {
		e.writeMoves(&outs[i], e.rep.Moves[offsets[i]:offsets[i+1]])
		outs[i].moves, outs[i].order = moveList{}, nil
	})
	return &e.rep, nil
}

// movedRequest is a request of one class through one point that moves:
// what each member's Move is made of (engine.move). The Moves themselves
// (about 400 bytes each, most of it the two Results) are made only when
// the report is assembled, straight into it: until then a member's move
// is a moveRef of 8 bytes, and the class's results are held once.
type movedRequest struct {
	c      *class
	point  int // index in engine.points
	change string
	res    [2]Result
	diff   Difference
	why    string
	ids    [2][]string // the representative's session IDs in each state (userPart.ids)
}

// moveRef is one member's move: its request (index in moveList.reqs) and
// the member (index in the class's members).
type moveRef struct{ req, member int32 }

// moveList holds one GE's moves: the requests that move (each made
// once, not copied as the list grows), and one moveRef per member of
// their classes, in the order found.
type moveList struct {
	reqs []*movedRequest
	refs []moveRef
}

// add records that the request of class c through point pi moves, for
// every member of c.
func (l *moveList) add(r *movedRequest) {
	l.reqs = append(l.reqs, r)
	for i := range r.c.members {
		l.refs = append(l.refs, moveRef{int32(len(l.reqs) - 1), int32(i)})
	}
}

// sortMoves returns the moves of l in report order: by user (folded),
// then connecting pod (name order), stably, each key folded once.
func (e *engine) sortMoves(l *moveList) []moveRef {
	type key struct {
		user, pod string
		r         moveRef
	}
	pods := make([]string, len(e.points))
	for i := range e.points {
		pods[i] = fold.Key(e.points[i].cp.Pod)
	}
	keys := make([]key, len(l.refs))
	for i, r := range l.refs {
		q := l.reqs[r.req]
		m := q.c.members[r.member]
		// The move's user is named as in the state before, when the
		// user is there (engine.move).
		user := ""
		if m[0] >= 0 {
			user = e.b.userKey[m[0]]
		} else {
			user = e.a.userKey[m[1]]
		}
		keys[i] = key{user, pods[q.point], r}
	}
	sort.SliceStable(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.user != b.user {
			return a.user < b.user
		}
		if a.pod != b.pod {
			return a.pod < b.pod
		}
		return e.points[l.reqs[a.r.req].point].cp.Pod < e.points[l.reqs[b.r.req].point].cp.Pod
	})
	order := make([]moveRef, len(keys))
	for i, k := range keys {
		order[i] = k.r
	}
	return order
}

// writeMoves makes the Moves of one GE, in report order, into dst.
func (e *engine) writeMoves(o *geOut, dst []Move) {
	tx := newTexts()
	for k, r := range o.order {
		q := o.moves.reqs[r.req]
		dst[k] = e.move(q.c, int(r.member), q.ids, o.ge, &e.points[q.point], q.change, q.res, q.diff, q.why, tx)
	}
}

// geOut is what the requests of one GE give.
type geOut struct {
	sum             Summary
	outcomes, sites map[[2]string]int
	moves           moveList
	order           []moveRef // the moves in report order (engine.sortMoves)
	ge              string    // the GE's name
	err             error
}

// gePlan is one GE's part of the work: its data in each state, what of
// it reads the same in both, and the classes of its users.
type gePlan struct {
	db, da         *geData
	geBase, geSame bool
	samePoints     int
	classes        []*class
	requests       int // the GE's requests: its users from every point
}

// planGE forms the classes of the GE folded gk.
func (e *engine) planGE(gk string) *gePlan {
	pl := &gePlan{db: e.b.ge(gk), da: e.a.ge(gk)}
	db, da := pl.db, pl.da
	// Everything of the GE reads the same, but for what only the site
	// search (steps 5-7) reads: the connecting site's preferred list and
	// pae-LoadThresholdForSite.
	pl.geBase = e.common && db != nil && da != nil && sameGE(db, da) && (e.rdsSame || !db.rds) && !e.offlinePools(db)
	pl.geSame = pl.geBase && (e.ldSame || !db.loadThr)
	// The points whose requests for this GE read the same in both states,
	// users aside.
	for pi := range e.points {
		if p := &e.points[pi]; pl.geSame && p.csSame && (p.prefs || !db.preferred) {
			pl.samePoints++
		}
	}
	pl.classes = e.classes(gk, db, da, e.only, pl.samePoints < len(e.points) || !e.usersSame)
	for _, c := range pl.classes {
		pl.requests += len(c.members) * len(e.points)
	}
	return pl
}

// parallel runs do(0) to do(n-1) on every processor.
func parallel(n int, do func(int)) {
	work := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), n)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				do(i)
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
}

// stage starts a stage of the progress (Options.Progress) and returns
// what counts its units.
func (e *engine) stage(what, unit string, total int64) func(int64) {
	if e.opt.Progress == nil {
		return func(int64) {}
	}
	return e.opt.Progress(what, unit, total)
}

// runGE compares the requests of one GE, counting them as compared.
func (e *engine) runGE(pl *gePlan, compared func(int64)) (out geOut) {
	out = geOut{outcomes: map[[2]string]int{}, sites: map[[2]string]int{}, ge: geName(pl.db, pl.da)}
	db, da, geBase, geSame, samePoints := pl.db, pl.da, pl.geBase, pl.geSame, pl.samePoints
	shared := e.sharedOffline(db, da)
	pr := e.newProber(db, da)
	defer func() { out.sum.Resolved += pr.resolved }()
	// Each class's requests are counted as compared once the next class
	// starts, the last once all are.
	done := 0
	defer func() { compared(int64(done)) }()
	for _, c := range pl.classes {
		compared(int64(done))
		n := len(c.members)
		done = n * len(e.points)
		both := c.ui[0] >= 0 && c.ui[1] >= 0
		offlineOwn := len(e.offline) > 0 && (e.offlineRecords(e.b, c.ui[0], db, shared) || e.offlineRecords(e.a, c.ui[1], da, shared))
		if samePoints == len(e.points) && e.usersSame && both && !offlineOwn {
			// Nothing this class reads differs: counted, not built.
			out.sum.Requests += n * len(e.points)
			out.sum.Unchanged += n * len(e.points)
			continue
		}
		parts := [2]*userPart{}
		if c.ui[0] >= 0 && db != nil {
			parts[0] = e.b.user(c.ui[0], db)
		}
		if c.ui[1] >= 0 && da != nil {
			parts[1] = e.a.user(c.ui[1], da)
		}
		userSame := parts[0] != nil && parts[1] != nil && (e.usersSame || parts[0].sameRecords(parts[1])) && !offlineOwn
		prefixSame := pr.prefixSame(parts, userSame)
		for pi := range e.points {
			p := &e.points[pi]
			out.sum.Requests += n
			if geSame && userSame && p.csSame && (p.prefs || !db.preferred) {
				out.sum.Unchanged += n
				continue
			}
			if prefixSame && p.csSame {
				// The search, which alone may differ, is the probe's.
				same, err := pr.unchanged(pi, parts[0])
				if err != nil {
					out.err = fmt.Errorf("%s via %s: %w", db.ge.Name, via(p.cp), err)
					return out
				}
				if same {
					out.sum.Unchanged += n
					continue
				}
			}
			// Only what the site search reads differs: a decision made
			// before the search (no "tiers" step) is the same after.
			searchOnly := (geBase && userSame || prefixSame) && p.csSame
			var res [2]Result
			var dec [2]*broker.Decision
			for si, st := range e.states() {
				d := db
				if si == 1 {
					d = da
				}
				if parts[si] == nil {
					res[si] = Result{Outcome: OutcomeAbsent}
					continue
				}
				if si == 1 && searchOnly && dec[0] != nil && !searched(dec[0]) {
					dec[1], res[1] = dec[0], res[0]
					continue
				}
				got, err := e.resolve(st, d, parts[si], p, si, pr.searches[si])
				if err != nil {
					out.err = fmt.Errorf("%s, %s via %s: %w", st.f.Users[c.ui[si]].Name, d.ge.Name, via(p.cp), err)
					return out
				}
				dec[si] = got
				res[si] = result(got)
			}
			out.sum.Resolved++
			if e.opt.observe != nil {
				diff := firstDifference(dec)
				for i := range c.members {
					e.opt.observe(e.move(c, i, partIDs(parts), geName(db, da), p, "", res, diff, "", nil))
				}
			}
			if res[0].same(res[1]) {
				out.sum.Unchanged += n
				continue
			}
			change := ChangePodOrPool
			switch {
			case res[0].Outcome != res[1].Outcome:
				change = ChangeOutcome
				out.sum.ChangedOutcome += n
				out.outcomes[[2]string{string(res[0].Outcome), string(res[1].Outcome)}] += n
			case res[0].Site != res[1].Site:
				change = ChangeSite
				out.sum.ChangedSite += n
			default:
				out.sum.ChangedPodOrPool += n
			}
			out.sites[[2]string{res[0].Site, res[1].Site}] += n
			diff := firstDifference(dec)
			why := e.why(dec, p, diff)
			out.moves.add(&movedRequest{c: c, point: pi, change: change, res: res, diff: diff, why: why, ids: partIDs(parts)})
		}
	}
	return out
}

// resolve resolves the request of user part u for GE data d through
// point p over state st (si: 0 before, 1 after), remembering its site
// search in searches (the GE's in that state; nil: none) for the other
// users: every per-request federation of one GE and state differs from
// another only in the user's part (state.federation), as
// broker.Searches requires.
func (e *engine) resolve(st *state, d *geData, u *userPart, p *point, si int, searches *broker.Searches) (*broker.Decision, error) {
	f := st.federation(d, u, p.csList[si], p.site[si])
	r := broker.Request{User: placeholder, Entitlement: d.ge.Name, Seed: e.opt.Seed, OfflinePods: st.offline}
	if p.cs[si] != nil {
		r.ConnectionServer = p.cs[si].Name
	} else {
		r.Pod = p.cp.Pod
	}
	// The trace is formatted as read (broker.Prepared.LazyTrace): impact
	// reads the steps' names of every decision (searched), and the texts
	// only of those that move, up to the first difference. The full
	// comparison, which the shortcuts are tested against, formats it.
	return broker.ResolveWith(f, r, broker.Prepared{Places: st.placesFor(p.site[si], d.preferred), Hosts: d.hostIx, Searches: searches, LazyTrace: !e.opt.full})
}

// offlinePools reports whether a what-if offline pod holds a pool of the
// GE or its backup. A what-if offline pod is read by a decision only
// through the pools, sessions and assignment on it (and the connecting
// pod, online on both sides): one that holds none of them changes the
// trace's texts (the request's echo, a pod skipped as offline rather than
// as having no pool of the GE) but never the outcome or the placement.
func (e *engine) offlinePools(d *geData) bool {
	for _, p := range d.pools {
		if e.offline[fold.Key(p.Pod)] {
			return true
		}
	}
	return false
}

// offlineRecords reports whether user ui has, among the records a request
// for GE data d reads, one on a what-if offline pod whose being offline
// may change the decision: a session of the GE or of its backup, an
// assignment for the GE, and for an application GE, when shared is set,
// a session of another GE.
//
// Without shared, an application GE's request reads such a session of
// another GE only to see whether it opens in it (broker.sharedSession):
// after the change it does not, its pod being offline; before, it did not
// either, as it would have had to run on a host of a farm of one of the
// GE's pools in that pod, and shared says whether the GE has a farm on a
// what-if offline pod (sharedOffline). The session is passed over in
// both states, only its trace line differs.
func (e *engine) offlineRecords(st *state, ui int, d *geData, shared bool) bool {
	if ui < 0 || d == nil {
		return false
	}
	for _, i := range st.userSessions[ui] {
		ek := st.sessionGE[i]
		own := ek == d.key || (d.backup != nil && ek == d.backupKey)
		if (own || (d.app && shared)) && st.sessionOffline[i] {
			return true
		}
	}
	for _, i := range st.userAssigned[ui] {
		if st.assignmentOffline[i] && fold.Key(st.f.Assignments[i].Entitlement) == d.key {
			return true
		}
	}
	return false
}

// markOffline marks, in each state, the sessions and the assignments on a
// what-if offline pod (offlineRecords reads them for every class).
func (e *engine) markOffline() {
	for _, st := range e.states() {
		st.sessionOffline = make([]bool, len(st.f.Sessions))
		st.assignmentOffline = make([]bool, len(st.f.Assignments))
		if len(e.offline) == 0 {
			continue
		}
		for i, x := range st.f.Sessions {
			st.sessionOffline[i] = e.offline[fold.Key(x.Pod)]
		}
		for i, a := range st.f.Assignments {
			st.assignmentOffline[i] = e.offline[fold.Key(a.Pod)]
		}
	}
}

// sharedOffline reports whether an application GE has, in either state, a
// farm-backed pool whose farm is on a what-if offline pod: a session on a
// host of that farm may open the GE's applications before the change.
func (e *engine) sharedOffline(db, da *geData) bool {
	for _, d := range []*geData{db, da} {
		if d == nil || !d.app {
			continue
		}
		for _, fm := range d.farms {
			if e.offline[fold.Key(fm.Pod)] {
				return true
			}
		}
	}
	return false
}

// searched reports whether a decision reached the site search (steps 5-7,
// or a backup's): every search traces its tiers first.
func searched(d *broker.Decision) bool {
	for _, t := range d.Trace {
		if t.Step == "tiers" || t.Step == "backup" {
			return true
		}
	}
	return false
}

// partIDs returns the session IDs of the parts (userPart.ids), nil for
// a part absent.
func partIDs(parts [2]*userPart) [2][]string {
	var ids [2][]string
	for si, p := range parts {
		if p != nil {
			ids[si] = p.ids
		}
	}
	return ids
}

// move is the row of one member of a class for GE ge: the class's
// results, with the member's name in their texts (repIDs: the session
// IDs of the class's representative in each state).
func (e *engine) move(c *class, i int, repIDs [2][]string, ge string, p *point, change string, res [2]Result, diff Difference, why string, tx *texts) Move {
	m := c.members[i]
	mv := Move{Entitlement: ge, ConnectionServer: p.cp.ConnectionServer, Pod: p.cp.Pod, Change: change}
	var reps [2]namer
	var rep [2]*namer
	for si, st := range e.states() {
		if m[si] < 0 {
			continue
		}
		name := st.f.Users[m[si]].Name
		if si == 0 || mv.User == "" {
			mv.User = name
		}
		// The member's session IDs: its own when the class is classed by
		// sessions, else the representative's (the member is it).
		ids := repIDs[si]
		if c.ids != nil {
			ids = c.ids[i][si]
		}
		reps[si] = namer{name: name, ids: ids, tx: tx}
		rep[si] = &reps[si]
	}
	mv.Before, mv.After = named(res[0], rep[0]), named(res[1], rep[1])
	mv.FirstDifference = Difference{Before: tx.named(diff.Before, rep[0]), After: tx.named(diff.After, rep[1])}
	mv.Why = why
	for _, r := range rep {
		if r != nil {
			mv.Why = r.Replace(mv.Why)
		}
	}
	mv.Why = tx.text(mv.Why)
	return mv
}

func via(cp ConnectingPoint) string {
	if cp.ConnectionServer != "" {
		return "connection server " + cp.ConnectionServer
	}
	return "pod " + cp.Pod
}

func geName(b, a *geData) string {
	if b != nil {
		return b.ge.Name
	}
	return a.ge.Name
}

// sameGE reports whether a GE reads the same of itself in both states.
func sameGE(b, a *geData) bool {
	return reflect.DeepEqual(b.ge, a.ge) && reflect.DeepEqual(b.backup, a.backup) &&
		reflect.DeepEqual(b.pools, a.pools) && reflect.DeepEqual(b.farms, a.farms) && reflect.DeepEqual(b.hosts, a.hosts)
}

// checkPoints validates the connecting points in both states.
func (e *engine) checkPoints() error {
	for _, cp := range e.opt.Points {
		p := point{cp: cp, site: [2]int{-1, -1}}
		for si, st := range e.states() {
			if cp.ConnectionServer != "" {
				i, ok := st.servers[fold.Key(cp.ConnectionServer)]
				if !ok {
					return &broker.NotFoundError{Kind: objkind.ConnectionServer, Name: cp.ConnectionServer}
				}
				cs := st.f.ConnectionServers[i]
				p.cs[si] = &cs
				p.csList[si] = []broker.ConnectionServer{cs}
				if fold.Key(cs.Pod) != fold.Key(cp.Pod) {
					return &broker.RequestError{Message: fmt.Sprintf("connection server %s is in pod %s before and %s after the change", cp.ConnectionServer, cp.Pod, cs.Pod)}
				}
			}
			pi, ok := st.pods[fold.Key(cp.Pod)]
			if !ok {
				return &broker.NotFoundError{Kind: objkind.Pod, Name: cp.Pod}
			}
			if !st.online(cp.Pod) {
				when := "before"
				if si == 1 {
					when = "after"
				}
				return &broker.RequestError{
					Message: fmt.Sprintf("cannot connect through %s: pod %s is offline %s the change", via(cp), cp.Pod, when),
					Hint:    "pick a connection server of a pod online before and after the change",
				}
			}
			si2, ok := st.sites[fold.Key(st.f.Pods[pi].Site)]
			if !ok {
				return &broker.RequestError{Message: fmt.Sprintf("the connecting pod %s names site %q, which does not exist", cp.Pod, st.f.Pods[pi].Site),
					Hint: "run `cpactl lint`"}
			}
			p.site[si] = si2
		}
		p.csSame = reflect.DeepEqual(p.cs[0], p.cs[1]) &&
			e.b.f.Sites[p.site[0]].Name == e.a.f.Sites[p.site[1]].Name
		p.prefs = reflect.DeepEqual(e.b.f.Sites[p.site[0]].PreferredSites, e.a.f.Sites[p.site[1]].PreferredSites)
		e.points = append(e.points, p)
	}
	return nil
}

// entitlements returns the folded names of the GEs compared: those of
// either state (or those named by the filter), in name order.
func (e *engine) entitlements() ([]string, error) {
	names := map[string]string{}
	for _, st := range e.states() {
		for _, g := range st.f.Entitlements {
			if _, ok := names[fold.Key(g.Name)]; !ok {
				names[fold.Key(g.Name)] = g.Name
			}
		}
	}
	if len(e.opt.Entitlements) > 0 {
		only := map[string]string{}
		for _, n := range e.opt.Entitlements {
			if _, ok := names[fold.Key(n)]; !ok {
				return nil, &broker.NotFoundError{Kind: objkind.Entitlement, Name: n}
			}
			only[fold.Key(n)] = names[fold.Key(n)]
		}
		names = only
	}
	keys := make([]string, 0, len(names))
	for k := range names {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return nameLess(names[keys[i]], names[keys[j]]) })
	return keys, nil
}

// userFilter returns the folded names of the users the filters keep, nil
// for every user.
func (e *engine) userFilter() (map[string]bool, error) {
	if len(e.opt.Users) == 0 && len(e.opt.Groups) == 0 {
		return nil, nil
	}
	only := map[string]bool{}
	for _, u := range e.opt.Users {
		_, inB := e.b.users[fold.Key(u)]
		_, inA := e.a.users[fold.Key(u)]
		if !inB && !inA {
			return nil, &broker.NotFoundError{Kind: objkind.User, Name: u}
		}
		only[fold.Key(u)] = true
	}
	for _, g := range e.opt.Groups {
		_, inB := e.b.groups[fold.Key(g)]
		_, inA := e.a.groups[fold.Key(g)]
		if !inB && !inA {
			return nil, &broker.NotFoundError{Kind: objkind.Group, Name: g}
		}
		for _, st := range e.states() {
			for _, ui := range st.within([]string{g}) {
				only[fold.Key(st.f.Users[ui].Name)] = true
			}
		}
	}
	return only, nil
}
