package broker

// RDS host selection (docs/storm.md steps 1-3).
//
// This file holds the reference implementation: SelectHost classifies every
// host of a farm from scratch, in the plain words of the spec. The storm
// simulator (storm.go) keeps the same classification incrementally for speed,
// and its tests compare it against repeated calls to classifyHosts below, so
// this file is the single statement of the rules.

import (
	"fmt"
	"sort"
	"strings"
)

// HostRequest is what one new session request asks of an RDS host (docs/storm.md
// step 1). Reconnections never pass through host selection.
type HostRequest struct {
	// Protocol is the display protocol the session will use. Empty means the
	// request names none, and no host is refused for its protocols.
	Protocol Protocol `json:"protocol"`
	// Unauthenticated is set for an unauthenticated-access user: the host
	// must support unauthenticated access.
	Unauthenticated bool `json:"unauthenticated"`
}

// Thresholds are the Connection Server's RDS load-balancing values of
// cn=Common, which form the buckets of docs/storm.md step 2. They are taken
// literally: 0 is a real threshold, not "off" (unlike the farm's host-side
// thresholds).
type Thresholds struct {
	LIT int `json:"lit"` // pae-RDSLoadIndexThreshold
	CST int `json:"cst"` // pae-RDSConnectingSessionThreshold
	MIN int `json:"min"` // pae-MinRDSServersInLBQueue
	// Sources says where each value came from. ThresholdsFor sets it
	// only when a value comes from the farm's pod: absent, every value is
	// cn=Common's or the default, as Settings.RDSSources says.
	Sources *ThresholdSources `json:"sources,omitempty"`
}

// ThresholdSource says where a threshold in force came from.
type ThresholdSource string

// ThresholdSource values: the pae-RDS* values come from the pod, the
// federation (cn=Common) or the default, a what-if flag of `simulate storm`
// overrides them; a host-side threshold comes from the host's policy or
// the farm.
const (
	SourcePod        ThresholdSource = "pod"
	SourceFederation ThresholdSource = "federation"
	SourceDefault    ThresholdSource = "default"
	SourceWhatIf     ThresholdSource = "what-if"
	SourcePolicy     ThresholdSource = "policy"
	SourceFarm       ThresholdSource = "farm"
)

// ThresholdSources says where LIT, CST and MIN came from.
type ThresholdSources struct {
	LIT ThresholdSource `json:"lit"`
	CST ThresholdSource `json:"cst"`
	MIN ThresholdSource `json:"min"`
}

// ThresholdsFrom takes the RDS bucket thresholds from the global settings.
func ThresholdsFrom(s Settings) Thresholds {
	return Thresholds{
		LIT: s.RDSLoadIndexThreshold,
		CST: s.RDSConnectingSessionThreshold,
		MIN: s.MinRDSServersInLBQueue,
	}
}

// ThresholdsFor returns the bucket thresholds of a farm of pod (nil: a
// pod the federation does not know): each of the pod's own values when
// set, else the federation's, else the default (docs/storm.md). The
// second result gives every source, Sources only those that differ from
// the old reading (docs/storm.md "Where the values come from").
func ThresholdsFor(s Settings, pod *Pod) (Thresholds, ThresholdSources) {
	t := ThresholdsFrom(s)
	src := s.RDSSources
	for _, p := range []*ThresholdSource{&src.LIT, &src.CST, &src.MIN} {
		if *p == "" {
			*p = SourceFederation
		}
	}
	if pod == nil {
		return t, src
	}
	fromPod := false
	for _, v := range []struct {
		own *int
		to  *int
		src *ThresholdSource
	}{{pod.RDS.LoadIndexThreshold, &t.LIT, &src.LIT}, {pod.RDS.ConnectingSessionThreshold, &t.CST, &src.CST},
		{pod.RDS.MinServersInLBQueue, &t.MIN, &src.MIN}} {
		if v.own != nil {
			*v.to, *v.src, fromPod = *v.own, SourcePod, true
		}
	}
	if fromPod {
		s := src
		t.Sources = &s
	}
	return t, src
}

// String renders the thresholds with their sources for a trace line:
// "LIT 30 (pod), CST 20 (federation), MIN 4 (default)".
func (s ThresholdSources) String(t Thresholds) string {
	return fmt.Sprintf("LIT %d (%s), CST %d (%s), MIN %d (%s)", t.LIT, s.LIT, t.CST, s.CST, t.MIN, s.MIN)
}

// HostThresholds are a host's host-side thresholds in force (0 = off) and
// where each came from: the host's policy (ADMX) value when set, else the
// farm's (docs/storm.md).
type HostThresholds struct {
	LoadIndexThreshold         int             `json:"load_index_threshold"`
	LoadIndexSource            ThresholdSource `json:"load_index_source"`
	ConnectingSessionThreshold int             `json:"connecting_session_threshold"`
	ConnectingSessionSource    ThresholdSource `json:"connecting_session_source"`
}

// HostThresholdsInForce returns h's host-side thresholds on farm.
func HostThresholdsInForce(farm Farm, h Host) HostThresholds {
	t := HostThresholds{LoadIndexThreshold: farm.LoadIndexThreshold, LoadIndexSource: SourceFarm,
		ConnectingSessionThreshold: farm.ConnectingSessionThreshold, ConnectingSessionSource: SourceFarm}
	if h.PolicyLoadIndexThreshold != nil {
		t.LoadIndexThreshold, t.LoadIndexSource = *h.PolicyLoadIndexThreshold, SourcePolicy
	}
	if h.PolicyConnectingSessionThreshold != nil {
		t.ConnectingSessionThreshold, t.ConnectingSessionSource = *h.PolicyConnectingSessionThreshold, SourcePolicy
	}
	return t
}

// hostPolicy returns h's thresholds in force when a policy value replaces
// a farm's, nil otherwise (the JSON then omits them: the farm's apply).
func hostPolicy(farm Farm, h Host) *HostThresholds {
	if h.PolicyLoadIndexThreshold == nil && h.PolicyConnectingSessionThreshold == nil {
		return nil
	}
	t := HostThresholdsInForce(farm, h)
	return &t
}

// HostAssessment says where one host of the farm stands for a request, and
// why.
type HostAssessment struct {
	Host string `json:"host"`
	// Candidate is false when step 1 refuses the host; Refused then says
	// why.
	Candidate bool   `json:"candidate"`
	Refused   string `json:"refused,omitempty"`
	// Bucket is 1, 2 or 3 for a candidate, 0 for a refused host.
	Bucket int `json:"bucket"`
	// Why explains the bucket (or the refusal) in an administrator's words.
	Why string `json:"why"`
	// Raised is set for a bucket-1 host that joined only because the load
	// index threshold was raised to reach MIN hosts.
	Raised bool `json:"raised,omitempty"`
	// DefaultFeatures reports whether the host supports every default
	// feature (multi-session, unauthenticated access, RDP, PCoIP, Blast).
	DefaultFeatures bool `json:"default_features"`
	LoadIndex       int  `json:"load_index"`
	Sessions        int  `json:"sessions"`
	Connecting      int  `json:"connecting"`
	// HostThresholds are the host-side thresholds in force with their
	// sources, given when the host's policy (ADMX) sets one; absent, the
	// farm's apply.
	HostThresholds *HostThresholds `json:"host_thresholds,omitempty"`
}

// HostSelection is the outcome of SelectHost for one request on one farm.
type HostSelection struct {
	// Chosen is the host that takes the session; "" when no host is a
	// candidate.
	Chosen string `json:"chosen"`
	// Eligible lists the serving bucket in the order it serves: bucket 1 in
	// rotation (name) order, any of which may serve depending on the
	// broker's rotation position; buckets 2 and 3 in their ordering (fewest
	// connecting sessions, lowest load index, name).
	Eligible []string `json:"eligible"`
	// Bucket is the serving bucket, 1..3; 0 when no host is a candidate.
	Bucket int `json:"bucket"`
	// EffectiveLIT is the load index threshold bucket 1 was built with:
	// the configured LIT, or the raised one.
	EffectiveLIT int `json:"effective_lit"`
	// Raised reports whether bucket 1 was topped up towards MIN hosts.
	Raised bool `json:"raised"`
	// Thresholds are the bucket thresholds the selection used.
	Thresholds Thresholds `json:"thresholds"`
	// Hosts assesses every host of the farm, in name order.
	Hosts []HostAssessment `json:"hosts"`
}

// SelectHost applies docs/storm.md steps 1-3 to one new session request on a farm.
//
// hosts are the farm's hosts; hosts naming another farm are left out, so the
// caller may pass every host of the federation. The broker's bucket-1
// rotation position is not stored anywhere, so SelectHost starts the rotation
// at the first bucket-1 host by name and lists the whole of bucket 1 in
// Eligible.
func SelectHost(farm Farm, hosts []Host, req HostRequest, t Thresholds) HostSelection {
	c := classifyHosts(farm, farmHosts(farm, hosts), req, t)
	sel := HostSelection{
		Eligible:     []string{},
		EffectiveLIT: c.effLIT,
		Raised:       c.raised,
		Thresholds:   t,
		Hosts:        make([]HostAssessment, len(c.hosts)),
	}
	if order, b := c.serving(); b > 0 {
		sel.Bucket = b
		for _, i := range order {
			sel.Eligible = append(sel.Eligible, c.hosts[i].Name)
		}
		sel.Chosen = sel.Eligible[0]
	}
	for i, h := range c.hosts {
		sel.Hosts[i] = HostAssessment{
			Host:            h.Name,
			Candidate:       c.refused[i] == "",
			Refused:         c.refused[i],
			Bucket:          c.bucket[i],
			Why:             bucketWhy(h, c.refused[i], c.bucket[i], t, c.effLIT),
			Raised:          c.bucket[i] == 1 && !belowLIT(h.LoadIndex, t.LIT),
			DefaultFeatures: h.Features.Default(),
			LoadIndex:       h.LoadIndex,
			Sessions:        h.Sessions,
			Connecting:      h.Connecting,
			HostThresholds:  hostPolicy(farm, h),
		}
	}
	return sel
}

// farmHosts keeps the hosts of farm (a host with no farm recorded is taken
// as the farm's own, and a farm with no name takes every host) and sorts them in name order, the order every listing
// and the bucket-1 rotation use.
func farmHosts(farm Farm, hosts []Host) []Host {
	type keyed struct {
		lower string
		host  Host
	}
	var ks []keyed
	for _, h := range hosts {
		if h.Farm == "" || farm.Name == "" || strings.EqualFold(h.Farm, farm.Name) {
			ks = append(ks, keyed{strings.ToLower(h.Name), h})
		}
	}
	// Lower-case each name once rather than in every comparison: big farms
	// are sorted once per storm.
	sort.SliceStable(ks, func(i, j int) bool {
		if ks[i].lower != ks[j].lower {
			return ks[i].lower < ks[j].lower
		}
		return ks[i].host.Name < ks[j].host.Name
	})
	out := make([]Host, len(ks))
	for i, k := range ks {
		out[i] = k.host
	}
	return out
}

// nameLess is the name order of the package (hosts, and the resolve
// engine's listings): case-insensitive, as the directory matches names, with
// the exact spelling breaking ties so the order is total. farmHosts sorts by
// the same order with the lower-case names computed once.
func nameLess(a, b string) bool {
	la, lb := strings.ToLower(a), strings.ToLower(b)
	if la != lb {
		return la < lb
	}
	return a < b
}

// belowLIT reports whether a load index counts as below the load index
// threshold lit. A load index of -1 (load balancing disabled on the host; any
// negative value is read the same way) counts as below every threshold.
func belowLIT(loadIndex, lit int) bool { return loadIndex < 0 || loadIndex < lit }

// refusal applies step 1 to one host and returns why it is not a candidate,
// or "" when it is one.
func refusal(farm Farm, h Host, req HostRequest) string {
	switch {
	case !h.Enabled:
		return "host is disabled"
	case req.Protocol != "" && !h.Features.Supports(req.Protocol):
		return fmt.Sprintf("does not support protocol %s", req.Protocol)
	case req.Unauthenticated && !h.Features.Unauthenticated:
		return "does not support unauthenticated access"
	case farm.MaxSessionsPerHost > 0 && h.Sessions >= farm.MaxSessionsPerHost:
		return fmt.Sprintf("at its session limit (sessions %d >= max sessions per host %d)",
			h.Sessions, farm.MaxSessionsPerHost)
	}
	// The host's policy (ADMX) values replace the farm's.
	t := HostThresholdsInForce(farm, h)
	switch {
	// A -1 load index is lower than any threshold, so it never refuses:
	// the integer comparison already says so because thresholds are >= 1
	// here.
	case t.LoadIndexThreshold > 0 && h.LoadIndex >= t.LoadIndexThreshold:
		return fmt.Sprintf("refuses logons: load index %d >= %s load index threshold %d%s",
			h.LoadIndex, thresholdWord(t.LoadIndexSource), t.LoadIndexThreshold,
			policyNote(t.LoadIndexSource, farm.LoadIndexThreshold))
	case t.ConnectingSessionThreshold > 0 && h.Connecting >= t.ConnectingSessionThreshold:
		return fmt.Sprintf("refuses logons: connecting sessions %d >= %s connecting session threshold %d%s",
			h.Connecting, thresholdWord(t.ConnectingSessionSource), t.ConnectingSessionThreshold,
			policyNote(t.ConnectingSessionSource, farm.ConnectingSessionThreshold))
	}
	return ""
}

// thresholdWord names a host-side threshold by its source.
func thresholdWord(s ThresholdSource) string {
	if s == SourcePolicy {
		return "policy (ADMX)"
	}
	return "host-side"
}

// policyNote says which farm value a policy value replaced.
func policyNote(s ThresholdSource, farmValue int) string {
	if s != SourcePolicy {
		return ""
	}
	if farmValue == 0 {
		return " (replaces the farm's, off)"
	}
	return fmt.Sprintf(" (replaces the farm's %d)", farmValue)
}

// classification is the outcome of steps 1 and 2 over a farm's hosts, in
// name order.
type classification struct {
	hosts   []Host
	refused []string // step 1 refusal per host, "" for a candidate
	bucket  []int    // 0 (refused) or 1..3
	b1      []int    // bucket 1, name order (the rotation order)
	b2, b3  []int    // buckets 2 and 3, serving order
	effLIT  int
	raised  bool
}

// serving returns the first non-empty bucket in serving order, and its
// number (0 when every bucket is empty).
func (c classification) serving() ([]int, int) {
	switch {
	case len(c.b1) > 0:
		return c.b1, 1
	case len(c.b2) > 0:
		return c.b2, 2
	case len(c.b3) > 0:
		return c.b3, 3
	}
	return nil, 0
}

// classifyHosts applies steps 1 and 2 to hosts, which must be in name order
// (farmHosts). It is the reference statement of the rules: straightforward,
// a full pass per call.
func classifyHosts(farm Farm, hosts []Host, req HostRequest, t Thresholds) classification {
	n := len(hosts)
	c := classification{
		hosts:   hosts,
		refused: make([]string, n),
		bucket:  make([]int, n),
		effLIT:  t.LIT,
	}
	candidate := func(i int) bool { return c.refused[i] == "" }
	for i, h := range hosts {
		c.refused[i] = refusal(farm, h, req)
	}

	// Bucket 1: default-feature candidates below LIT and CST.
	for i, h := range hosts {
		if candidate(i) && h.Features.Default() && belowLIT(h.LoadIndex, t.LIT) && h.Connecting < t.CST {
			c.bucket[i] = 1
		}
	}
	count1 := 0
	for i := range hosts {
		if c.bucket[i] == 1 {
			count1++
		}
	}
	// The dynamic raise: while bucket 1 is short of MIN hosts, take every
	// remaining default-feature candidate under CST at the lowest remaining
	// load index (ties join together).
	for count1 < t.MIN {
		lowest, found := 0, false
		for i, h := range hosts {
			if candidate(i) && c.bucket[i] == 0 && h.Features.Default() && h.Connecting < t.CST &&
				(!found || h.LoadIndex < lowest) {
				lowest, found = h.LoadIndex, true
			}
		}
		if !found {
			break
		}
		for i, h := range hosts {
			if candidate(i) && c.bucket[i] == 0 && h.Features.Default() && h.Connecting < t.CST &&
				h.LoadIndex == lowest {
				c.bucket[i] = 1
				count1++
			}
		}
		c.effLIT, c.raised = lowest+1, true
	}

	// Buckets 2 and 3 use the configured LIT, never the raised one.
	for i, h := range hosts {
		if !candidate(i) || c.bucket[i] == 1 {
			continue
		}
		if belowLIT(h.LoadIndex, t.LIT) && h.Connecting < t.CST {
			c.bucket[i] = 2
		} else {
			c.bucket[i] = 3
		}
	}
	for i := range hosts {
		switch c.bucket[i] {
		case 1:
			c.b1 = append(c.b1, i)
		case 2:
			c.b2 = append(c.b2, i)
		case 3:
			c.b3 = append(c.b3, i)
		}
	}
	// Fewest connecting sessions first, because during a storm the load
	// index is stale and ordering by it first would pile every request onto
	// one host; then lowest load index (-1 lowest), then name (the index,
	// since hosts are in name order).
	byLoad := func(s []int) {
		sort.SliceStable(s, func(a, b int) bool { return hostBefore(hosts, s[a], s[b]) })
	}
	byLoad(c.b2)
	byLoad(c.b3)
	return c
}

// hostBefore is the serving order of buckets 2 and 3 over hosts in name
// order: fewest connecting sessions, then lowest load index, then name.
func hostBefore(hosts []Host, i, j int) bool {
	hi, hj := hosts[i], hosts[j]
	if hi.Connecting != hj.Connecting {
		return hi.Connecting < hj.Connecting
	}
	if li, lj := loadKey(hi.LoadIndex), loadKey(hj.LoadIndex); li != lj {
		return li < lj
	}
	return i < j
}

// loadKey maps a load index to its place in an ordering: -1 (and any
// negative value) below every load index.
func loadKey(li int) int {
	if li < 0 {
		return -1
	}
	return li
}

// missingFeatures names the default features a host lacks.
func missingFeatures(f Features) []string {
	var m []string
	if !f.MultiSession {
		m = append(m, "multi-session")
	}
	if !f.Unauthenticated {
		m = append(m, "unauthenticated access")
	}
	if !f.RDP {
		m = append(m, "RDP")
	}
	if !f.PCoIP {
		m = append(m, "PCoIP")
	}
	if !f.Blast {
		m = append(m, "Blast")
	}
	return m
}

// bucketWhy explains why host h is where it is, given its step-1 refusal
// (or ""), its bucket, the thresholds and the effective LIT bucket 1 was
// built with.
func bucketWhy(h Host, refused string, bucket int, t Thresholds, effLIT int) string {
	if refused != "" {
		return "not a candidate: " + refused
	}
	li := fmt.Sprintf("load index %d", h.LoadIndex)
	if h.LoadIndex < 0 {
		li = fmt.Sprintf("load index %d (load balancing disabled, counts as below any threshold)", h.LoadIndex)
	}
	conn := func() string {
		if h.Connecting < t.CST {
			return fmt.Sprintf("connecting sessions %d < CST %d", h.Connecting, t.CST)
		}
		return fmt.Sprintf("connecting sessions %d >= CST %d", h.Connecting, t.CST)
	}
	below := belowLIT(h.LoadIndex, t.LIT)
	switch bucket {
	case 1:
		if below {
			if h.LoadIndex < 0 {
				return fmt.Sprintf("bucket 1: all default features, %s, %s", li, conn())
			}
			return fmt.Sprintf("bucket 1: all default features, %s < LIT %d, %s", li, t.LIT, conn())
		}
		return fmt.Sprintf("bucket 1: all default features, %s >= LIT %d but bucket 1 had fewer than MIN %d hosts, so the threshold was raised to %d; %s",
			li, t.LIT, t.MIN, effLIT, conn())
	case 2:
		return fmt.Sprintf("bucket 2: lacks default features (%s), %s < LIT %d, %s",
			strings.Join(missingFeatures(h.Features), ", "), li, t.LIT, conn())
	case 3:
		var why []string
		if !h.Features.Default() {
			why = append(why, fmt.Sprintf("lacks default features (%s)", strings.Join(missingFeatures(h.Features), ", ")))
		}
		switch {
		case !below:
			why = append(why, fmt.Sprintf("%s >= LIT %d", li, t.LIT))
		case h.LoadIndex < 0:
			why = append(why, li)
		default:
			why = append(why, fmt.Sprintf("%s < LIT %d", li, t.LIT))
		}
		if h.Connecting >= t.CST {
			why = append(why, conn())
		}
		// A default-feature host under CST that is above LIT stayed out of
		// bucket 1 because the raise was not needed (or not allowed).
		if h.Features.Default() && h.Connecting < t.CST {
			if t.MIN <= 0 {
				why = append(why, fmt.Sprintf("MIN %d allows no raise of the threshold", t.MIN))
			} else {
				why = append(why, fmt.Sprintf("bucket 1 reached MIN %d hosts without it", t.MIN))
			}
		}
		return "bucket 3: " + strings.Join(why, ", ")
	}
	return ""
}
