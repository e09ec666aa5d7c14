package broker

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// referenceStorm is the storm simulator written the obvious way: every
// request re-runs the full classification (classifyHosts, the reference
// statement of docs/storm.md) on the current counters. The fast simulator must
// match it placement for placement and bucket change for bucket change.
func referenceStorm(farm Farm, hosts []Host, req HostRequest, t Thresholds, requests int) (StormReport, []int) {
	fh := farmHosts(farm, hosts)
	cur := append([]Host(nil), fh...)
	c := classifyHosts(farm, cur, req, t)
	rec := newStormRecorder(farm, fh, req, t, requests, c.bucket)
	var placements []int
	last := -1
	for n := 1; n <= requests; n++ {
		order, b := c.serving()
		if b == 0 {
			rec.unplaced(n, 1)
			continue
		}
		host := order[0]
		if b == 1 {
			// First bucket-1 host whose name sorts after the last one
			// served, wrapping around (hosts are in name order).
			for _, i := range c.b1 {
				if i > last {
					host = i
					break
				}
			}
			last = host
		}
		cur[host].Connecting++
		cur[host].Sessions++
		rec.placed(host, b)
		placements = append(placements, host)
		next := classifyHosts(farm, cur, req, t)
		for i := range cur {
			if next.bucket[i] != c.bucket[i] {
				rec.change(n, cur[i], i, c.bucket[i], next.bucket[i], next.effLIT)
			}
		}
		c = next
	}
	rec.finish(cur, c.bucket)
	rec.report.Naive = referenceNaive(farm, fh, req, requests)
	return rec.report, placements
}

// referenceNaive places each request on the candidate with the lowest load
// index (ties by name) by scanning every host.
func referenceNaive(farm Farm, fh []Host, req HostRequest, requests int) NaiveStorm {
	cur := append([]Host(nil), fh...)
	ns := NaiveStorm{Hosts: make([]NaiveHost, len(cur))}
	for i, h := range cur {
		ns.Hosts[i].Host = h.Name
	}
	for n := 1; n <= requests; n++ {
		best := -1
		for i, h := range cur {
			if refusal(farm, h, req) != "" {
				continue
			}
			if best < 0 || loadKey(h.LoadIndex) < loadKey(cur[best].LoadIndex) {
				best = i
			}
		}
		if best < 0 {
			if ns.FirstUnplaced == 0 {
				ns.FirstUnplaced = n
			}
			ns.Unplaced++
			continue
		}
		cur[best].Connecting++
		cur[best].Sessions++
		ns.Hosts[best].Placed++
		ns.Placed++
	}
	for i := range ns.Hosts {
		ns.Hosts[i].SharePercent = sharePercent(ns.Hosts[i].Placed, ns.Placed)
	}
	return ns
}

// randomFarm draws a small farm that exercises every rule: ties of load
// indexes, -1, feature-lacking and disabled hosts, host-side thresholds,
// session limits, thresholds of 0 and MIN beyond the farm size.
func randomFarm(r *rand.Rand) (Farm, []Host, HostRequest, Thresholds) {
	pick := func(vals ...int) int { return vals[r.Intn(len(vals))] }
	farm := Farm{
		Name:                       "F",
		MaxSessionsPerHost:         pick(0, 0, 5, 10, 25, 40),
		LoadIndexThreshold:         pick(0, 0, 0, 1, 50, 80, 95),
		ConnectingSessionThreshold: pick(0, 0, 0, 1, 3, 10, 30),
	}
	n := r.Intn(25)
	if r.Intn(10) == 0 {
		n = 0
	}
	// A few load index values, so ties are common.
	levels := []int{-1, 0, 1, 5, 10, 19, 20, 21, 30, 30, 45, 60, 80, 99, 100}
	hosts := make([]Host, n)
	for i := range hosts {
		h := Host{
			Name:       fmt.Sprintf("rdsh-%02d", r.Intn(100)),
			Farm:       "F",
			LoadIndex:  levels[r.Intn(len(levels))],
			Sessions:   r.Intn(20),
			Connecting: r.Intn(25),
			Features:   AllFeatures(),
			Enabled:    r.Intn(12) != 0,
		}
		if r.Intn(3) == 0 {
			h.Connecting = 0
		}
		if r.Intn(5) == 0 {
			switch r.Intn(5) {
			case 0:
				h.Features.MultiSession = false
			case 1:
				h.Features.Unauthenticated = false
			case 2:
				h.Features.RDP = false
			case 3:
				h.Features.PCoIP = false
			case 4:
				h.Features.Blast = false
			}
		}
		hosts[i] = h
	}
	if r.Intn(8) == 0 && n > 0 {
		// A host of another farm, to be left out.
		hosts = append(hosts, Host{Name: "other", Farm: "G", Features: AllFeatures(), Enabled: true})
	}
	req := HostRequest{
		Protocol:        []Protocol{ProtocolBlast, ProtocolPCoIP, ProtocolRDP, ""}[r.Intn(4)],
		Unauthenticated: r.Intn(4) == 0,
	}
	t := Thresholds{
		LIT: pick(0, 1, 5, 20, 20, 30, 50, 100),
		CST: pick(0, 1, 2, 5, 10, 20, 20, 25),
		MIN: pick(0, 1, 2, 3, 4, 4, 6, 10, 1000),
	}
	return farm, hosts, req, t
}

// The fast simulator gives exactly the reference's placements, bucket
// changes (with their whys) and naive comparison on many random farms.
func TestSimulateStormMatchesReference(t *testing.T) {
	r := rand.New(rand.NewSource(6))
	farms := 3000
	if testing.Short() {
		farms = 300
	}
	for k := 0; k < farms; k++ {
		farm, hosts, req, th := randomFarm(r)
		requests := r.Intn(300)
		want, wantSeq := referenceStorm(farm, hosts, req, th, requests)
		var gotSeq []int
		got := simulateStorm(farm, hosts, req, th, requests, func(_, host int) { gotSeq = append(gotSeq, host) })
		if !reflect.DeepEqual(gotSeq, wantSeq) {
			t.Fatalf("farm %d (%+v, thresholds %+v, %d requests): placements differ\n got %v\nwant %v",
				k, farm, th, requests, gotSeq, wantSeq)
		}
		if !reflect.DeepEqual(got, want) {
			gj, _ := json.MarshalIndent(got, "", " ")
			wj, _ := json.MarshalIndent(want, "", " ")
			t.Fatalf("farm %d: reports differ\n got %s\nwant %s", k, gj, wj)
		}
	}
}

// The simulator starts from exactly SelectHost's classification: its first
// placement is SelectHost's choice and its initial buckets are SelectHost's.
func TestSimulateStormStartsFromSelectHost(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	for k := 0; k < 1000; k++ {
		farm, hosts, req, th := randomFarm(r)
		sel := SelectHost(farm, hosts, req, th)
		first := ""
		rep := simulateStorm(farm, hosts, req, th, 1, func(_, host int) { first = sel.Hosts[host].Host })
		if first != sel.Chosen {
			t.Fatalf("farm %d: first placement %q, SelectHost chose %q", k, first, sel.Chosen)
		}
		for i, h := range rep.Hosts {
			if h.InitialBucket != sel.Hosts[i].Bucket {
				t.Fatalf("farm %d host %s: initial bucket %d, SelectHost says %d", k, h.Host, h.InitialBucket, sel.Hosts[i].Bucket)
			}
		}
	}
}

func identicalHosts(n int) []Host {
	hosts := make([]Host, n)
	for i := range hosts {
		hosts[i] = rdsHost(fmt.Sprintf("rdsh-%d", i+1), 10, 0)
	}
	return hosts
}

// Bucket 1 rotation shares a storm evenly; the naive placement piles it on
// one host.
func TestStormEvenShareOnIdenticalHosts(t *testing.T) {
	rep := SimulateStorm(Farm{Name: "F"}, identicalHosts(8), HostRequest{Protocol: ProtocolBlast}, defaultThresholds, 400)
	if rep.Placed != 400 || rep.Unplaced != 0 || rep.FirstUnplaced != 0 {
		t.Fatalf("placed %d unplaced %d first unplaced %d, want 400 0 0", rep.Placed, rep.Unplaced, rep.FirstUnplaced)
	}
	for _, h := range rep.Hosts {
		if h.Placed < 49 || h.Placed > 51 {
			t.Errorf("host %s took %d requests, want 50 ± 1", h.Host, h.Placed)
		}
		// Each host leaves bucket 1 at its 20th connecting session (CST),
		// which for rdsh-1 is request 19*8+1.
		if len(h.BucketChanges) != 1 || h.BucketChanges[0].From != 1 || h.BucketChanges[0].To != 3 {
			t.Errorf("host %s bucket changes %+v, want one move 1 -> 3", h.Host, h.BucketChanges)
		}
	}
	if c := rep.Hosts[0].BucketChanges; len(c) == 1 && c[0].Request != 153 {
		t.Errorf("rdsh-1 left bucket 1 after request %d, want 153", c[0].Request)
	}
	if rep.ServedBy != (BucketCounts{Bucket1: 160, Bucket3: 240}) {
		t.Errorf("served by %+v, want 160 from bucket 1 and 240 from bucket 3", rep.ServedBy)
	}
	if rep.Naive.Placed != 400 || rep.Naive.Hosts[0].Placed != 400 {
		t.Errorf("naive: placed %d, first host %d, want one host taking all 400", rep.Naive.Placed, rep.Naive.Hosts[0].Placed)
	}
}

// With a session limit, the naive placement fills one host up to its limit
// before touching the next; the buckets still share evenly.
func TestStormNaiveFillsOneHostToItsLimit(t *testing.T) {
	rep := SimulateStorm(Farm{Name: "F", MaxSessionsPerHost: 60}, identicalHosts(8), HostRequest{Protocol: ProtocolBlast}, defaultThresholds, 400)
	want := []int{60, 60, 60, 60, 60, 60, 40, 0}
	for i, h := range rep.Naive.Hosts {
		if h.Placed != want[i] {
			t.Errorf("naive host %s took %d, want %d", h.Host, h.Placed, want[i])
		}
	}
	for _, h := range rep.Hosts {
		if h.Placed != 50 {
			t.Errorf("host %s took %d, want 50", h.Host, h.Placed)
		}
	}
}

// When hosts leave bucket 1 during the storm, the dynamic raise takes the
// next lowest hosts in, and the report says when.
func TestStormRaiseTakesHostsInDuringTheBurst(t *testing.T) {
	hosts := []Host{rdsHost("a", 5, 0), rdsHost("b", 5, 0), rdsHost("c", 30, 0), rdsHost("d", 40, 0)}
	rep := SimulateStorm(Farm{Name: "F"}, hosts, HostRequest{Protocol: ProtocolBlast}, Thresholds{LIT: 20, CST: 2, MIN: 2}, 4)
	wantChanges := map[string][]BucketChange{
		"a": {{Request: 3, From: 1, To: 3}},
		"b": {{Request: 4, From: 1, To: 3}},
		"c": {{Request: 3, From: 3, To: 1}},
		"d": {{Request: 4, From: 3, To: 1}},
	}
	for _, h := range rep.Hosts {
		got := h.BucketChanges
		for i := range got {
			got[i].Why = ""
		}
		if !reflect.DeepEqual(got, wantChanges[h.Host]) {
			t.Errorf("host %s changes %+v, want %+v", h.Host, got, wantChanges[h.Host])
		}
	}
	if rep.Hosts[0].Placed != 2 || rep.Hosts[1].Placed != 2 {
		t.Errorf("a and b took %d and %d, want 2 each", rep.Hosts[0].Placed, rep.Hosts[1].Placed)
	}
}

// Host-side thresholds and session limits make hosts refuse during the
// burst; requests beyond the farm's capacity are counted unplaced.
func TestStormRefusalsAndUnplaced(t *testing.T) {
	farm := Farm{Name: "F", MaxSessionsPerHost: 3, ConnectingSessionThreshold: 2}
	hosts := []Host{rdsHost("a", 1, 0), withSessions(rdsHost("b", 1, 0), 2), rdsHost("c", 1, 0)}
	rep := SimulateStorm(farm, hosts, HostRequest{Protocol: ProtocolBlast}, defaultThresholds, 10)
	// a: 2 (host-side CST 2), b: 1 (session limit 3), c: 2.
	if rep.Placed != 5 || rep.Unplaced != 5 || rep.FirstUnplaced != 6 {
		t.Errorf("placed %d unplaced %d first unplaced %d, want 5 5 6", rep.Placed, rep.Unplaced, rep.FirstUnplaced)
	}
	for _, h := range rep.Hosts {
		if h.FinalBucket != 0 || h.Refused == "" {
			t.Errorf("host %s final bucket %d refused %q, want refused", h.Host, h.FinalBucket, h.Refused)
		}
		last := h.BucketChanges[len(h.BucketChanges)-1]
		if last.To != 0 || !strings.HasPrefix(last.Why, "not a candidate") {
			t.Errorf("host %s last change %+v, want a refusal", h.Host, last)
		}
	}
	if !strings.Contains(rep.Hosts[1].Refused, "session limit") {
		t.Errorf("b refused %q, want the session limit", rep.Hosts[1].Refused)
	}
	if rep.Naive.Placed != 5 || rep.Naive.FirstUnplaced != 6 {
		t.Errorf("naive placed %d first unplaced %d, want 5 6", rep.Naive.Placed, rep.Naive.FirstUnplaced)
	}
}

// jsonKeys returns the sorted keys of a JSON object.
func jsonKeys(t *testing.T, v any) []string {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("not a JSON object: %v", v)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func pinKeys(t *testing.T, what string, v any, want ...string) {
	t.Helper()
	sort.Strings(want)
	if got := jsonKeys(t, v); !reflect.DeepEqual(got, want) {
		t.Errorf("%s keys %q, want %q", what, got, want)
	}
}

// The storm report's JSON field names are a contract (issue 6).
func TestStormReportJSONFieldNames(t *testing.T) {
	hosts := []Host{rdsHost("a", 5, 0), rdsHost("b", 30, 0), disabled(rdsHost("c", 1, 0))}
	rep := SimulateStorm(Farm{Name: "F"}, hosts, HostRequest{Protocol: ProtocolBlast}, Thresholds{LIT: 20, CST: 1, MIN: 1}, 3)
	raw, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	pinKeys(t, "report", doc, "farm", "request", "requests", "placed", "unplaced", "first_unplaced",
		"thresholds", "served_by", "hosts", "naive", "what_if")
	pinKeys(t, "request", doc["request"], "protocol", "unauthenticated")
	pinKeys(t, "thresholds", doc["thresholds"], "lit", "cst", "min")
	pinKeys(t, "served_by", doc["served_by"], "bucket_1", "bucket_2", "bucket_3")
	h := doc["hosts"].([]any)
	pinKeys(t, "host", h[0], "host", "placed", "share_percent", "load_index", "initial_bucket", "final_bucket",
		"final_sessions", "final_connecting", "bucket_changes")
	changes := h[0].(map[string]any)["bucket_changes"].([]any)
	if len(changes) == 0 {
		t.Fatal("host a should have moved between buckets")
	}
	pinKeys(t, "bucket change", changes[0], "request", "from", "to", "why")
	if c, ok := h[2].(map[string]any)["bucket_changes"].([]any); !ok || len(c) != 0 {
		t.Error("bucket_changes must be an empty list, not null")
	}
	naive := doc["naive"]
	pinKeys(t, "naive", naive, "placed", "unplaced", "first_unplaced", "hosts")
	pinKeys(t, "naive host", naive.(map[string]any)["hosts"].([]any)[0], "host", "placed", "share_percent")
	if doc["requests"].(float64) != 3 || doc["placed"].(float64) != 3 || doc["thresholds"].(map[string]any)["cst"].(float64) != 1 {
		t.Errorf("values not where the contract says: %s", raw)
	}

	// Refused hosts also say why, under "refused".
	rep = SimulateStorm(Farm{Name: "F", MaxSessionsPerHost: 1}, hosts[:1], HostRequest{Protocol: ProtocolBlast}, defaultThresholds, 1)
	raw, _ = json.Marshal(rep.Hosts[0])
	if !strings.Contains(string(raw), `"refused":"at its session limit`) {
		t.Errorf("refused host JSON %s lacks refused", raw)
	}
}

// The host selection's JSON field names are a contract too.
func TestHostSelectionJSONFieldNames(t *testing.T) {
	sel := SelectHost(Farm{Name: "F"}, []Host{disabled(rdsHost("a", 1, 0)), rdsHost("b", 30, 0)},
		HostRequest{Protocol: ProtocolBlast}, defaultThresholds)
	raw, err := json.Marshal(sel)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	pinKeys(t, "selection", doc, "chosen", "eligible", "bucket", "effective_lit", "raised", "thresholds", "hosts")
	hosts := doc["hosts"].([]any)
	pinKeys(t, "refused host", hosts[0], "host", "candidate", "refused", "bucket", "why", "default_features",
		"load_index", "sessions", "connecting")
	pinKeys(t, "raised host", hosts[1], "host", "candidate", "bucket", "why", "raised", "default_features",
		"load_index", "sessions", "connecting")

	raw, _ = json.Marshal(SelectHost(Farm{Name: "F"}, nil, HostRequest{}, defaultThresholds))
	if !strings.Contains(string(raw), `"eligible":[]`) || !strings.Contains(string(raw), `"hosts":[]`) {
		t.Errorf("empty selection %s: lists must be [], not null", raw)
	}
}
