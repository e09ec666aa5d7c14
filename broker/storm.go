package broker

// Logon storm simulation (docs/storm.md step 4).
//
// SimulateStorm replays a burst of near-simultaneous requests on one farm.
// Load indexes stay as stored (hosts sample them every 30 s, so during a
// storm they are stale); each placement adds 1 to the chosen host's
// connecting sessions and sessions, which moves hosts between buckets and
// eventually makes them refuse logons.
//
// The obvious implementation re-runs classifyHosts for every request, which
// costs O(hosts log hosts) per placement. This one keeps the classification
// incrementally so a placement costs O(log hosts) (amortized):
//
//   - only the placed host's counters change, and counters only grow, so
//     step 1 refusals and "connecting >= CST" are monotone: a host never
//     comes back once it leaves the candidates or bucket-1/2 material;
//   - bucket 1 is exactly the default-feature candidates under CST (set A)
//     whose load index is below LIT or at most v, v being the load index of
//     the MIN-th lowest host of A (all of A when A holds fewer than MIN).
//     A only shrinks, so v only grows: hosts join bucket 1 by whole load
//     index groups, each group once, found with a Fenwick tree counting A's
//     hosts per distinct load index;
//   - bucket-1 rotation ("first bucket-1 host whose name sorts after the
//     last one served") is a successor query on a Fenwick tree of name ranks;
//   - buckets 2 and 3 are indexed min-heaps keyed by (connecting sessions,
//     load index, name), and the naive comparison is a cursor over the
//     candidates sorted by (load index, name), whose keys never change.
//
// storm_test.go checks, on many random farms, that every placement and
// every bucket change equals the reference (classifyHosts per request).

import (
	"math"
	"sort"
)

// StormReport is the outcome of SimulateStorm. Its JSON field names are a
// stable contract.
type StormReport struct {
	Farm    string      `json:"farm"`
	Request HostRequest `json:"request"`
	// Requests is the size of the burst.
	Requests int `json:"requests"`
	// Placed and Unplaced count the requests that found a host or none.
	Placed   int `json:"placed"`
	Unplaced int `json:"unplaced"`
	// FirstUnplaced is the number (1-based) of the first request that found
	// no host; 0 when every request was placed.
	FirstUnplaced int `json:"first_unplaced"`
	// Thresholds are the bucket thresholds the burst was replayed with.
	Thresholds Thresholds `json:"thresholds"`
	// ServedBy counts the placements each bucket served.
	ServedBy BucketCounts `json:"served_by"`
	// Hosts lists every host of the farm in name order.
	Hosts []StormHost `json:"hosts"`
	// Naive is the same burst placed on the candidate with the lowest load
	// index, as if there were no buckets.
	Naive NaiveStorm `json:"naive"`
	// WhatIf lists the what-ifs in force ([] when none): data laid over
	// the directory, and the --lit, --cst and --min overrides.
	WhatIf []WhatIf `json:"what_if"`
}

// BucketCounts counts placements per serving bucket.
type BucketCounts struct {
	Bucket1 int `json:"bucket_1"`
	Bucket2 int `json:"bucket_2"`
	Bucket3 int `json:"bucket_3"`
}

// StormHost is one host's part in a storm.
type StormHost struct {
	Host string `json:"host"`
	// Placed counts the requests the host took.
	Placed int `json:"placed"`
	// SharePercent is Placed as a percentage of all placed requests,
	// rounded to two decimals.
	SharePercent float64 `json:"share_percent"`
	// LoadIndex is the (stale) load index the whole burst saw.
	LoadIndex int `json:"load_index"`
	// InitialBucket and FinalBucket are the host's bucket before the first
	// request and after the last (0: not a candidate).
	InitialBucket int `json:"initial_bucket"`
	FinalBucket   int `json:"final_bucket"`
	// FinalSessions and FinalConnecting are the host's counters after the
	// burst.
	FinalSessions   int `json:"final_sessions"`
	FinalConnecting int `json:"final_connecting"`
	// Refused says why the host takes no more sessions after the burst, ""
	// when it still would.
	Refused string `json:"refused,omitempty"`
	// BucketChanges lists the host's moves between buckets, in order.
	BucketChanges []BucketChange `json:"bucket_changes"`
	// HostThresholds are the host-side thresholds in force with their
	// sources, given when the host's policy (ADMX) sets one; absent, the
	// farm's apply.
	HostThresholds *HostThresholds `json:"host_thresholds,omitempty"`
}

// BucketChange is one move of a host between buckets during a storm.
type BucketChange struct {
	// Request is the number (1-based) of the request whose placement caused
	// the move; the host is in bucket To from the next request on.
	Request int    `json:"request"`
	From    int    `json:"from"`
	To      int    `json:"to"` // 0: the host stopped being a candidate
	Why     string `json:"why"`
}

// NaiveStorm is the burst placed naively: each request on the candidate
// with the lowest load index, ties by name, step 1 still applying.
type NaiveStorm struct {
	// Placed and Unplaced count the requests that found a host or none.
	Placed   int `json:"placed"`
	Unplaced int `json:"unplaced"`
	// FirstUnplaced is the number (1-based) of the first request that found
	// no host; 0 when every request was placed.
	FirstUnplaced int `json:"first_unplaced"`
	// Hosts lists every host of the farm in name order.
	Hosts []NaiveHost `json:"hosts"`
}

// NaiveHost is one host's part in the naive placement.
type NaiveHost struct {
	Host string `json:"host"`
	// Placed counts the requests the host took.
	Placed int `json:"placed"`
	// SharePercent is Placed as a percentage of all placed requests,
	// rounded to two decimals.
	SharePercent float64 `json:"share_percent"`
}

// SimulateStorm replays requests near-simultaneous requests req on farm
// (docs/storm.md step 4) with bucket thresholds t, and the same burst placed
// naively. hosts are taken as in SelectHost; they are not modified.
func SimulateStorm(farm Farm, hosts []Host, req HostRequest, t Thresholds, requests int) StormReport {
	return simulateStorm(farm, hosts, req, t, requests, nil)
}

// simulateStorm is SimulateStorm with an observer told of every placement
// (request number, host index in name order); the tests use it.
func simulateStorm(farm Farm, hosts []Host, req HostRequest, t Thresholds, requests int, observe func(request, host int)) StormReport {
	if requests < 0 {
		requests = 0
	}
	fh := farmHosts(farm, hosts)
	sim := newStormSim(farm, fh, req, t)
	rec := newStormRecorder(farm, fh, req, t, requests, sim.bucket)
	for n := 1; n <= requests; n++ {
		host, bucket := sim.place(n, rec)
		if host < 0 {
			// Counters only grow, so a farm with no candidate left stays
			// without one: the rest of the burst finds no host either.
			rec.unplaced(n, requests-n+1)
			break
		}
		rec.placed(host, bucket)
		if observe != nil {
			observe(n, host)
		}
	}
	rec.finish(sim.hosts, sim.bucket)
	rec.report.Naive = naiveStorm(farm, fh, req, requests)
	return rec.report
}

// stormRecorder builds a StormReport from the events of a simulation. The
// fast simulator and the test's reference simulator share it, so their
// reports compare field by field.
type stormRecorder struct {
	farm   Farm
	req    HostRequest
	report StormReport
}

func newStormRecorder(farm Farm, hosts []Host, req HostRequest, t Thresholds, requests int, buckets []int) *stormRecorder {
	r := &stormRecorder{farm: farm, req: req}
	r.report = StormReport{
		Farm:       farm.Name,
		Request:    req,
		Requests:   requests,
		Thresholds: t,
		Hosts:      make([]StormHost, len(hosts)),
		WhatIf:     []WhatIf{},
	}
	for i, h := range hosts {
		r.report.Hosts[i] = StormHost{
			Host:           h.Name,
			LoadIndex:      h.LoadIndex,
			InitialBucket:  buckets[i],
			BucketChanges:  []BucketChange{},
			HostThresholds: hostPolicy(farm, h),
		}
	}
	return r
}

// placed records one placement on host (name-order index) from bucket.
func (r *stormRecorder) placed(host, bucket int) {
	r.report.Placed++
	r.report.Hosts[host].Placed++
	switch bucket {
	case 1:
		r.report.ServedBy.Bucket1++
	case 2:
		r.report.ServedBy.Bucket2++
	case 3:
		r.report.ServedBy.Bucket3++
	}
}

// unplaced records count requests from request number n on that found no
// host.
func (r *stormRecorder) unplaced(n, count int) {
	if r.report.FirstUnplaced == 0 {
		r.report.FirstUnplaced = n
	}
	r.report.Unplaced += count
}

// change records a host's move between buckets after request n, explained
// with the host's state and the effective LIT after that request.
func (r *stormRecorder) change(n int, h Host, host, from, to int, effLIT int) {
	c := BucketChange{Request: n, From: from, To: to,
		Why: bucketWhy(h, refusal(r.farm, h, r.req), to, r.report.Thresholds, effLIT)}
	r.report.Hosts[host].BucketChanges = append(r.report.Hosts[host].BucketChanges, c)
}

// finish records the hosts' final state and the shares.
func (r *stormRecorder) finish(hosts []Host, buckets []int) {
	for i, h := range hosts {
		sh := &r.report.Hosts[i]
		sh.FinalBucket = buckets[i]
		sh.FinalSessions = h.Sessions
		sh.FinalConnecting = h.Connecting
		sh.Refused = refusal(r.farm, h, r.req)
		sh.SharePercent = sharePercent(sh.Placed, r.report.Placed)
	}
}

// sharePercent is part as a percentage of whole, rounded to two decimals.
func sharePercent(part, whole int) float64 {
	if whole == 0 {
		return 0
	}
	return math.Round(float64(part)*10000/float64(whole)) / 100
}

// naiveStorm places the burst the naive way. The load indexes are stale and
// never change, so the candidate with the lowest load index stays the
// lowest until step 1 refuses it: a cursor over the initial candidates in
// (load index, name) order finds every choice in O(1) amortized.
func naiveStorm(farm Farm, fh []Host, req HostRequest, requests int) NaiveStorm {
	hosts := append([]Host(nil), fh...)
	ns := NaiveStorm{Hosts: make([]NaiveHost, len(hosts))}
	var order []int
	for i, h := range hosts {
		ns.Hosts[i].Host = h.Name
		if refusal(farm, h, req) == "" {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool {
		return loadKey(hosts[order[a]].LoadIndex) < loadKey(hosts[order[b]].LoadIndex)
	})
	cursor := 0
	for n := 1; n <= requests; n++ {
		for cursor < len(order) && refusal(farm, hosts[order[cursor]], req) != "" {
			cursor++
		}
		if cursor == len(order) {
			ns.FirstUnplaced = n
			ns.Unplaced = requests - n + 1
			break
		}
		i := order[cursor]
		hosts[i].Connecting++
		hosts[i].Sessions++
		ns.Hosts[i].Placed++
		ns.Placed++
	}
	for i := range ns.Hosts {
		ns.Hosts[i].SharePercent = sharePercent(ns.Hosts[i].Placed, ns.Placed)
	}
	return ns
}

// stormSim is the incremental classification of a farm during a storm.
// Hosts are identified by their index in name order (their name rank).
type stormSim struct {
	farm  Farm
	req   HostRequest
	t     Thresholds
	hosts []Host // name order; counters advance with each placement

	bucket []int  // 0 (not a candidate) or 1..3
	inA    []bool // default-feature candidate with connecting < CST

	// Load index groups of the hosts initially in A: distinct load index
	// keys in ascending order, each host's group, each group's hosts.
	group        []int
	groupKey     []int
	groupMembers [][]int
	lastBelow    int     // highest group below the configured LIT, -1 none
	cut          int     // groups <= cut are in bucket 1 (while in A)
	inAPerGroup  fenwick // hosts of A per group

	b1     fenwick // bucket 1 membership by name rank
	b1n    int     // bucket 1 size
	last   int     // name rank of the last bucket-1 host served, -1 none
	b2, b3 hostHeap
}

func newStormSim(farm Farm, hosts []Host, req HostRequest, t Thresholds) *stormSim {
	n := len(hosts)
	s := &stormSim{
		farm:   farm,
		req:    req,
		t:      t,
		hosts:  append([]Host(nil), hosts...),
		bucket: make([]int, n),
		inA:    make([]bool, n),
		group:  make([]int, n),
		b1:     newFenwick(n),
		last:   -1,
	}
	s.b2 = newHostHeap(s.hosts)
	s.b3 = newHostHeap(s.hosts)
	candidate := make([]bool, n)
	var keys []int
	for i, h := range s.hosts {
		candidate[i] = refusal(farm, h, req) == ""
		if candidate[i] && h.Features.Default() && h.Connecting < t.CST {
			s.inA[i] = true
			keys = append(keys, loadKey(h.LoadIndex))
		}
	}
	sort.Ints(keys)
	for _, k := range keys {
		if len(s.groupKey) == 0 || s.groupKey[len(s.groupKey)-1] != k {
			s.groupKey = append(s.groupKey, k)
		}
	}
	s.groupMembers = make([][]int, len(s.groupKey))
	s.inAPerGroup = newFenwick(len(s.groupKey))
	s.lastBelow = -1
	for g, k := range s.groupKey {
		if belowLIT(k, t.LIT) {
			s.lastBelow = g
		}
	}
	for i, h := range s.hosts {
		if !s.inA[i] {
			continue
		}
		g := sort.SearchInts(s.groupKey, loadKey(h.LoadIndex))
		s.group[i] = g
		s.groupMembers[g] = append(s.groupMembers[g], i)
		s.inAPerGroup.add(g, 1)
	}
	s.cut = s.cutoff()
	for i, h := range s.hosts {
		switch {
		case !candidate[i]:
			s.bucket[i] = 0
		case s.inA[i] && s.group[i] <= s.cut:
			s.bucket[i] = 1
			s.b1.add(i, 1)
			s.b1n++
		case !h.Features.Default() && belowLIT(h.LoadIndex, t.LIT) && h.Connecting < t.CST:
			s.bucket[i] = 2
			s.b2.push(i)
		default:
			s.bucket[i] = 3
			s.b3.push(i)
		}
	}
	return s
}

// cutoff returns the highest load index group bucket 1 takes from A: every
// group below the configured LIT, and, when those hold fewer than MIN
// hosts, every group up to the one holding the MIN-th lowest host of A (all
// of A when A holds fewer than MIN hosts). This is the raise loop of
// classifyHosts in closed form.
func (s *stormSim) cutoff() int {
	g := -1
	if s.t.MIN > 0 {
		if s.inAPerGroup.total < s.t.MIN {
			g = len(s.groupKey) - 1
		} else {
			g = s.inAPerGroup.lowerBound(s.t.MIN)
		}
	}
	return max(g, s.lastBelow)
}

// effectiveLIT returns the LIT bucket 1 is built with now: one above the
// highest load index the raise took in, or the configured LIT.
func (s *stormSim) effectiveLIT() int {
	if s.cut > s.lastBelow {
		upTo := s.inAPerGroup.prefix(s.cut)
		if upTo > s.inAPerGroup.prefix(s.lastBelow) {
			return s.groupKey[s.inAPerGroup.lowerBound(upTo)] + 1
		}
	}
	return s.t.LIT
}

// place serves request n: it picks the host, counts the placement and moves
// the hosts whose bucket changes, telling rec. It returns the host and the
// bucket that served it, or -1 when no host is a candidate.
func (s *stormSim) place(n int, rec *stormRecorder) (host, bucket int) {
	switch {
	case s.b1n > 0:
		host = s.nextInRotation()
		s.last = host
	case s.b2.len() > 0:
		host = s.b2.top()
	case s.b3.len() > 0:
		host = s.b3.top()
	default:
		return -1, 0
	}
	bucket = s.bucket[host]
	h := &s.hosts[host]
	h.Connecting++
	h.Sessions++

	type move struct{ host, from int }
	var moves []move
	refused := refusal(s.farm, *h, s.req) != ""
	leftA := false
	if s.inA[host] && (h.Connecting >= s.t.CST || refused) {
		s.inA[host] = false
		s.inAPerGroup.add(s.group[host], -1)
		leftA = true
	}
	switch {
	case refused:
		s.remove(host)
		s.bucket[host] = 0
		moves = append(moves, move{host, bucket})
	case bucket == 1 && !s.inA[host]:
		s.remove(host)
		s.bucket[host] = 3
		s.b3.push(host)
		moves = append(moves, move{host, bucket})
	case bucket == 2 && h.Connecting >= s.t.CST:
		s.remove(host)
		s.bucket[host] = 3
		s.b3.push(host)
		moves = append(moves, move{host, bucket})
	case bucket == 2:
		s.b2.fix(host)
	case bucket == 3:
		s.b3.fix(host)
	}

	// A host leaving A may bring the MIN-th lowest host of A to a higher
	// load index: the raise then takes whole new groups into bucket 1.
	if leftA {
		cut := s.cutoff()
		for g := s.cut + 1; g <= cut; g++ {
			for _, m := range s.groupMembers[g] {
				if s.inA[m] && s.bucket[m] == 3 {
					s.b3.remove(m)
					s.bucket[m] = 1
					s.b1.add(m, 1)
					s.b1n++
					moves = append(moves, move{m, 3})
				}
			}
		}
		s.cut = cut
	}
	if len(moves) > 0 {
		eff := s.effectiveLIT()
		for _, mv := range moves {
			rec.change(n, s.hosts[mv.host], mv.host, mv.from, s.bucket[mv.host], eff)
		}
	}
	return host, bucket
}

// nextInRotation returns the first bucket-1 host whose name sorts after the
// last bucket-1 host served, wrapping around.
func (s *stormSim) nextInRotation() int {
	if s.last >= 0 {
		if done := s.b1.prefix(s.last); done < s.b1n {
			return s.b1.lowerBound(done + 1)
		}
	}
	return s.b1.lowerBound(1)
}

// remove takes host out of its current bucket's structure.
func (s *stormSim) remove(host int) {
	switch s.bucket[host] {
	case 1:
		s.b1.add(host, -1)
		s.b1n--
	case 2:
		s.b2.remove(host)
	case 3:
		s.b3.remove(host)
	}
}

// fenwick is a Fenwick (binary indexed) tree of counts over 0..n-1: point
// updates, prefix sums and "k-th present element" in O(log n).
type fenwick struct {
	tree  []int // 1-based
	step  int   // highest power of two <= n
	total int
}

func newFenwick(n int) fenwick {
	step := 1
	for step*2 <= n {
		step *= 2
	}
	return fenwick{tree: make([]int, n+1), step: step}
}

// add adds d to the count at i.
func (f *fenwick) add(i, d int) {
	f.total += d
	for i++; i < len(f.tree); i += i & -i {
		f.tree[i] += d
	}
}

// prefix returns the sum of counts at 0..i (0 for i < 0).
func (f *fenwick) prefix(i int) int {
	sum := 0
	for i++; i > 0; i -= i & -i {
		sum += f.tree[i]
	}
	return sum
}

// lowerBound returns the smallest i whose prefix sum reaches k (1 <= k <=
// total): with 0/1 counts, the position of the k-th present element.
func (f *fenwick) lowerBound(k int) int {
	pos := 0
	for step := f.step; step > 0; step /= 2 {
		if next := pos + step; next < len(f.tree) && f.tree[next] < k {
			pos = next
			k -= f.tree[next]
		}
	}
	// pos is the largest 1-based position whose prefix sum is below k, so
	// the answer is 1-based pos+1, that is 0-based pos.
	return pos
}

// hostHeap is an indexed binary min-heap of host indexes in the serving
// order of buckets 2 and 3 (hostBefore), so a host whose counters changed
// can be fixed or removed in O(log n).
type hostHeap struct {
	hosts []Host
	items []int
	pos   []int // index in items per host, -1 when absent
}

func newHostHeap(hosts []Host) hostHeap {
	pos := make([]int, len(hosts))
	for i := range pos {
		pos[i] = -1
	}
	return hostHeap{hosts: hosts, pos: pos}
}

func (h *hostHeap) len() int { return len(h.items) }

// top returns the first host in serving order.
func (h *hostHeap) top() int { return h.items[0] }

func (h *hostHeap) less(a, b int) bool { return hostBefore(h.hosts, h.items[a], h.items[b]) }

func (h *hostHeap) swap(a, b int) {
	h.items[a], h.items[b] = h.items[b], h.items[a]
	h.pos[h.items[a]] = a
	h.pos[h.items[b]] = b
}

func (h *hostHeap) push(host int) {
	h.items = append(h.items, host)
	h.pos[host] = len(h.items) - 1
	h.up(len(h.items) - 1)
}

func (h *hostHeap) remove(host int) {
	i := h.pos[host]
	last := len(h.items) - 1
	if i != last {
		h.swap(i, last)
	}
	h.items = h.items[:last]
	h.pos[host] = -1
	if i != last {
		h.fixAt(i)
	}
}

// fix restores the heap after host's key changed.
func (h *hostHeap) fix(host int) { h.fixAt(h.pos[host]) }

func (h *hostHeap) fixAt(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

func (h *hostHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

// down sifts item i down and reports whether it moved.
func (h *hostHeap) down(i int) bool {
	start := i
	n := len(h.items)
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && h.less(r, c) {
			c = r
		}
		if !h.less(c, i) {
			break
		}
		h.swap(i, c)
		i = c
	}
	return i > start
}
