package broker

import (
	"reflect"
	"strings"
	"testing"
)

// rdsHost is an enabled default-feature host with a load index and
// connecting sessions.
func rdsHost(name string, loadIndex, connecting int) Host {
	return Host{Name: name, Farm: "F", LoadIndex: loadIndex, Connecting: connecting,
		Features: AllFeatures(), Enabled: true}
}

// lacking returns h without the default feature named by drop.
func lacking(h Host, drop string) Host {
	switch drop {
	case "multi-session":
		h.Features.MultiSession = false
	case "unauthenticated":
		h.Features.Unauthenticated = false
	case "rdp":
		h.Features.RDP = false
	case "pcoip":
		h.Features.PCoIP = false
	case "blast":
		h.Features.Blast = false
	}
	return h
}

func withSessions(h Host, sessions int) Host { h.Sessions = sessions; return h }
func disabled(h Host) Host                   { h.Enabled = false; return h }

var defaultThresholds = Thresholds{LIT: 20, CST: 20, MIN: 4}

func TestSelectHostRules(t *testing.T) {
	farm := Farm{Name: "F"}
	blast := HostRequest{Protocol: ProtocolBlast}
	tests := []struct {
		name     string
		farm     Farm
		hosts    []Host
		req      HostRequest
		t        Thresholds
		chosen   string
		bucket   int
		eligible []string
		effLIT   int
		raised   bool
		buckets  map[string]int    // every host's bucket
		refused  map[string]string // host -> substring of its refusal
	}{
		{
			name:   "bucket 1: default-feature hosts below LIT and CST, rotation starts at first name",
			hosts:  []Host{rdsHost("b", 10, 0), rdsHost("a", 5, 3), rdsHost("c", 30, 0)},
			t:      Thresholds{LIT: 20, CST: 20, MIN: 1},
			chosen: "a", bucket: 1, eligible: []string{"a", "b"}, effLIT: 20,
			buckets: map[string]int{"a": 1, "b": 1, "c": 3},
		},
		{
			name:   "bucket 1 rotation is name order, not load order",
			hosts:  []Host{rdsHost("b", 1, 0), rdsHost("a", 19, 19), rdsHost("c", 0, 0)},
			t:      Thresholds{LIT: 20, CST: 20, MIN: 1},
			chosen: "a", bucket: 1, eligible: []string{"a", "b", "c"}, effLIT: 20,
			buckets: map[string]int{"a": 1, "b": 1, "c": 1},
		},
		{
			name:   "bucket 1 excludes a host with connecting sessions at CST",
			hosts:  []Host{rdsHost("a", 5, 20), rdsHost("b", 10, 19)},
			t:      Thresholds{LIT: 20, CST: 20, MIN: 1},
			chosen: "b", bucket: 1, eligible: []string{"b"}, effLIT: 20,
			buckets: map[string]int{"a": 3, "b": 1},
		},
		{
			name:   "bucket 1 excludes a host with load index at LIT",
			hosts:  []Host{rdsHost("a", 20, 0), rdsHost("b", 19, 0)},
			t:      Thresholds{LIT: 20, CST: 20, MIN: 1},
			chosen: "b", bucket: 1, eligible: []string{"b"}, effLIT: 20,
			buckets: map[string]int{"a": 3, "b": 1},
		},
		{
			name: "dynamic raise: MIN 4 with 2 hosts under LIT takes the next two lowest",
			hosts: []Host{rdsHost("a", 5, 0), rdsHost("b", 10, 0), rdsHost("c", 30, 0),
				rdsHost("d", 25, 0), rdsHost("e", 40, 0), rdsHost("f", 50, 0)},
			t:      defaultThresholds,
			chosen: "a", bucket: 1, eligible: []string{"a", "b", "c", "d"}, effLIT: 31, raised: true,
			buckets: map[string]int{"a": 1, "b": 1, "c": 1, "d": 1, "e": 3, "f": 3},
		},
		{
			name: "dynamic raise: ties at the raised load index join together past MIN",
			hosts: []Host{rdsHost("a", 5, 0), rdsHost("b", 10, 0), rdsHost("c", 30, 0),
				rdsHost("d", 30, 0), rdsHost("e", 30, 0), rdsHost("f", 31, 0)},
			t:      Thresholds{LIT: 20, CST: 20, MIN: 3},
			chosen: "a", bucket: 1, eligible: []string{"a", "b", "c", "d", "e"}, effLIT: 31, raised: true,
			buckets: map[string]int{"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 3},
		},
		{
			name:   "dynamic raise skips hosts at CST and takes all it can when MIN is out of reach",
			hosts:  []Host{rdsHost("a", 5, 0), rdsHost("b", 25, 20), rdsHost("c", 60, 0)},
			t:      defaultThresholds,
			chosen: "a", bucket: 1, eligible: []string{"a", "c"}, effLIT: 61, raised: true,
			buckets: map[string]int{"a": 1, "b": 3, "c": 1},
		},
		{
			name:   "dynamic raise takes only default-feature hosts",
			hosts:  []Host{rdsHost("a", 5, 0), lacking(rdsHost("x", 25, 0), "unauthenticated")},
			t:      defaultThresholds,
			chosen: "a", bucket: 1, eligible: []string{"a"}, effLIT: 20,
			buckets: map[string]int{"a": 1, "x": 3},
		},
		{
			name:   "dynamic raise fills an empty bucket 1 from the lowest load index",
			hosts:  []Host{rdsHost("a", 50, 0), rdsHost("b", 40, 0)},
			t:      Thresholds{LIT: 20, CST: 20, MIN: 1},
			chosen: "b", bucket: 1, eligible: []string{"b"}, effLIT: 41, raised: true,
			buckets: map[string]int{"a": 3, "b": 1},
		},
		{
			name:   "MIN larger than the farm takes every default-feature host under CST",
			hosts:  []Host{rdsHost("a", 90, 0), rdsHost("b", 40, 0), rdsHost("c", 70, 25)},
			t:      Thresholds{LIT: 20, CST: 20, MIN: 1000},
			chosen: "a", bucket: 1, eligible: []string{"a", "b"}, effLIT: 91, raised: true,
			buckets: map[string]int{"a": 1, "b": 1, "c": 3},
		},
		{
			name:   "-1 load index counts as below LIT 0",
			hosts:  []Host{rdsHost("a", 0, 0), rdsHost("b", -1, 0)},
			t:      Thresholds{LIT: 0, CST: 20, MIN: 1},
			chosen: "b", bucket: 1, eligible: []string{"b"}, effLIT: 0,
			buckets: map[string]int{"a": 3, "b": 1},
		},
		{
			name:   "-1 load index is still judged on connecting sessions",
			hosts:  []Host{rdsHost("a", -1, 20), rdsHost("b", 5, 0)},
			t:      Thresholds{LIT: 20, CST: 20, MIN: 1},
			chosen: "b", bucket: 1, eligible: []string{"b"}, effLIT: 20,
			buckets: map[string]int{"a": 3, "b": 1},
		},
		{
			name:   "-1 load index is lowest in the bucket 3 ordering",
			hosts:  []Host{rdsHost("a", 10, 0), rdsHost("b", -1, 0), rdsHost("c", 0, 0)},
			t:      Thresholds{LIT: 20, CST: 0, MIN: 4},
			chosen: "b", bucket: 3, eligible: []string{"b", "c", "a"}, effLIT: 20,
			buckets: map[string]int{"a": 3, "b": 3, "c": 3},
		},
		{
			name:   "-1 load index is never refused by the host-side load index threshold",
			farm:   Farm{Name: "F", LoadIndexThreshold: 1},
			hosts:  []Host{rdsHost("a", -1, 0), rdsHost("b", 1, 0)},
			t:      defaultThresholds,
			chosen: "a", bucket: 1, eligible: []string{"a"}, effLIT: 20,
			buckets: map[string]int{"a": 1, "b": 0},
			refused: map[string]string{"b": "load index 1 >= host-side load index threshold 1"},
		},
		{
			name:   "host-side load index threshold refuses at the threshold",
			farm:   Farm{Name: "F", LoadIndexThreshold: 90},
			hosts:  []Host{rdsHost("a", 90, 0), rdsHost("b", 89, 0)},
			t:      defaultThresholds,
			chosen: "b", bucket: 1, eligible: []string{"b"}, effLIT: 90, raised: true,
			buckets: map[string]int{"a": 0, "b": 1},
			refused: map[string]string{"a": "host-side load index threshold 90"},
		},
		{
			name:   "host-side connecting session threshold refuses at the threshold",
			farm:   Farm{Name: "F", ConnectingSessionThreshold: 5},
			hosts:  []Host{rdsHost("a", 1, 5), rdsHost("b", 2, 4)},
			t:      defaultThresholds,
			chosen: "b", bucket: 1, eligible: []string{"b"}, effLIT: 20,
			buckets: map[string]int{"a": 0, "b": 1},
			refused: map[string]string{"a": "host-side connecting session threshold 5"},
		},
		{
			name:   "host-side thresholds of 0 are off",
			farm:   Farm{Name: "F"},
			hosts:  []Host{rdsHost("a", 100, 150)},
			t:      defaultThresholds,
			chosen: "a", bucket: 3, eligible: []string{"a"}, effLIT: 20,
			buckets: map[string]int{"a": 3},
		},
		{
			name:   "session limit refuses at max sessions per host",
			farm:   Farm{Name: "F", MaxSessionsPerHost: 10},
			hosts:  []Host{withSessions(rdsHost("a", 1, 0), 10), withSessions(rdsHost("b", 2, 0), 9)},
			t:      defaultThresholds,
			chosen: "b", bucket: 1, eligible: []string{"b"}, effLIT: 20,
			buckets: map[string]int{"a": 0, "b": 1},
			refused: map[string]string{"a": "session limit"},
		},
		{
			name:   "session limit compares sessions only, not connecting sessions",
			farm:   Farm{Name: "F", MaxSessionsPerHost: 10},
			hosts:  []Host{rdsHost("a", 1, 50)},
			t:      defaultThresholds,
			chosen: "a", bucket: 3, eligible: []string{"a"}, effLIT: 20,
			buckets: map[string]int{"a": 3},
		},
		{
			name:   "session limit 0 is unlimited",
			farm:   Farm{Name: "F", MaxSessionsPerHost: 0},
			hosts:  []Host{withSessions(rdsHost("a", 1, 0), 100000)},
			t:      defaultThresholds,
			chosen: "a", bucket: 1, eligible: []string{"a"}, effLIT: 20,
			buckets: map[string]int{"a": 1},
		},
		{
			name:   "disabled host is refused",
			hosts:  []Host{disabled(rdsHost("a", 1, 0)), rdsHost("b", 2, 0)},
			t:      defaultThresholds,
			chosen: "b", bucket: 1, eligible: []string{"b"}, effLIT: 20,
			buckets: map[string]int{"a": 0, "b": 1},
			refused: map[string]string{"a": "disabled"},
		},
		{
			name:   "host without the requested protocol is refused",
			hosts:  []Host{lacking(rdsHost("a", 1, 0), "blast"), rdsHost("b", 2, 0)},
			t:      defaultThresholds,
			chosen: "b", bucket: 1, eligible: []string{"b"}, effLIT: 20,
			buckets: map[string]int{"a": 0, "b": 1},
			refused: map[string]string{"a": "protocol BLAST"},
		},
		{
			name:   "unauthenticated request refuses a host without unauthenticated access",
			hosts:  []Host{lacking(rdsHost("a", 1, 0), "unauthenticated"), rdsHost("b", 2, 0)},
			req:    HostRequest{Protocol: ProtocolBlast, Unauthenticated: true},
			t:      defaultThresholds,
			chosen: "b", bucket: 1, eligible: []string{"b"}, effLIT: 20,
			buckets: map[string]int{"a": 0, "b": 1},
			refused: map[string]string{"a": "unauthenticated access"},
		},
		{
			name:   "feature-lacking host lands in bucket 2 and serves when bucket 1 is empty",
			hosts:  []Host{lacking(rdsHost("x", 5, 0), "unauthenticated"), rdsHost("a", 30, 0)},
			t:      Thresholds{LIT: 20, CST: 20, MIN: 0},
			chosen: "x", bucket: 2, eligible: []string{"x"}, effLIT: 20,
			buckets: map[string]int{"x": 2, "a": 3},
		},
		{
			name:   "bucket 1 serves before bucket 2",
			hosts:  []Host{lacking(rdsHost("x", 0, 0), "multi-session"), rdsHost("a", 10, 5)},
			t:      defaultThresholds,
			chosen: "a", bucket: 1, eligible: []string{"a"}, effLIT: 20,
			buckets: map[string]int{"x": 2, "a": 1},
		},
		{
			name: "bucket 2 uses the configured LIT, never the raised one",
			hosts: []Host{rdsHost("a", 5, 0), rdsHost("b", 25, 0), rdsHost("c", 26, 0),
				lacking(rdsHost("x", 22, 0), "rdp")},
			t:      defaultThresholds,
			chosen: "a", bucket: 1, eligible: []string{"a", "b", "c"}, effLIT: 27, raised: true,
			buckets: map[string]int{"a": 1, "b": 1, "c": 1, "x": 3},
		},
		{
			name: "bucket 2 order: fewest connecting, then lowest load index, then name",
			hosts: []Host{lacking(rdsHost("w", 1, 3), "pcoip"), lacking(rdsHost("x", 15, 1), "pcoip"),
				lacking(rdsHost("z", 10, 1), "pcoip"), lacking(rdsHost("y", 10, 1), "pcoip")},
			t:      defaultThresholds,
			chosen: "y", bucket: 2, eligible: []string{"y", "z", "x", "w"}, effLIT: 20,
			buckets: map[string]int{"w": 2, "x": 2, "y": 2, "z": 2},
		},
		{
			name: "bucket 3 order: fewest connecting, then lowest load index, then name",
			hosts: []Host{rdsHost("a", 1, 30), rdsHost("b", 50, 21), rdsHost("d", 40, 21),
				rdsHost("c", 40, 21)},
			t:      defaultThresholds,
			chosen: "c", bucket: 3, eligible: []string{"c", "d", "b", "a"}, effLIT: 20,
			buckets: map[string]int{"a": 3, "b": 3, "c": 3, "d": 3},
		},
		{
			name:   "bucket 3 serves when buckets 1 and 2 are empty",
			hosts:  []Host{lacking(rdsHost("x", 50, 0), "rdp"), rdsHost("a", 10, 25)},
			t:      defaultThresholds,
			chosen: "x", bucket: 3, eligible: []string{"x", "a"}, effLIT: 20,
			buckets: map[string]int{"x": 3, "a": 3},
		},
		{
			name:   "LIT 0 taken literally: only -1 is below it, and MIN 0 raises nothing",
			hosts:  []Host{rdsHost("a", 0, 0), lacking(rdsHost("x", 0, 0), "rdp")},
			t:      Thresholds{LIT: 0, CST: 20, MIN: 0},
			chosen: "a", bucket: 3, eligible: []string{"a", "x"}, effLIT: 0,
			buckets: map[string]int{"a": 3, "x": 3},
		},
		{
			name:   "LIT 0 with MIN raises from the lowest load index",
			hosts:  []Host{rdsHost("a", 0, 0), rdsHost("b", 0, 0), rdsHost("c", 3, 0)},
			t:      Thresholds{LIT: 0, CST: 20, MIN: 2},
			chosen: "a", bucket: 1, eligible: []string{"a", "b"}, effLIT: 1, raised: true,
			buckets: map[string]int{"a": 1, "b": 1, "c": 3},
		},
		{
			name:   "CST 0 taken literally: no host is under it, no raise, all in bucket 3",
			hosts:  []Host{rdsHost("a", 5, 0), lacking(rdsHost("x", 5, 0), "blast")},
			req:    HostRequest{Protocol: ProtocolRDP},
			t:      Thresholds{LIT: 20, CST: 0, MIN: 4},
			chosen: "a", bucket: 3, eligible: []string{"a", "x"}, effLIT: 20,
			buckets: map[string]int{"a": 3, "x": 3},
		},
		{
			name:   "MIN 0 taken literally: no raise",
			hosts:  []Host{rdsHost("a", 30, 0), rdsHost("b", 25, 1)},
			t:      Thresholds{LIT: 20, CST: 20, MIN: 0},
			chosen: "a", bucket: 3, eligible: []string{"a", "b"}, effLIT: 20,
			buckets: map[string]int{"a": 3, "b": 3},
		},
		{
			name:   "no candidate: no host chosen, bucket 0",
			hosts:  []Host{disabled(rdsHost("a", 1, 0))},
			t:      defaultThresholds,
			chosen: "", bucket: 0, eligible: []string{}, effLIT: 20,
			buckets: map[string]int{"a": 0},
			refused: map[string]string{"a": "disabled"},
		},
		{
			name:   "hosts of other farms are left out",
			hosts:  []Host{{Name: "o", Farm: "Other", Features: AllFeatures(), Enabled: true}, rdsHost("a", 30, 0)},
			t:      Thresholds{LIT: 20, CST: 20, MIN: 0},
			chosen: "a", bucket: 3, eligible: []string{"a"}, effLIT: 20,
			buckets: map[string]int{"a": 3},
		},
		{
			name:   "name order is case-insensitive",
			hosts:  []Host{rdsHost("b", 1, 0), rdsHost("A", 1, 0), rdsHost("C", 1, 0)},
			t:      defaultThresholds,
			chosen: "A", bucket: 1, eligible: []string{"A", "b", "C"}, effLIT: 20,
			buckets: map[string]int{"A": 1, "b": 1, "C": 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.farm
			if f.Name == "" {
				f = farm
			}
			req := tc.req
			if req.Protocol == "" {
				req = blast
			}
			sel := SelectHost(f, tc.hosts, req, tc.t)
			if sel.Chosen != tc.chosen || sel.Bucket != tc.bucket || sel.EffectiveLIT != tc.effLIT || sel.Raised != tc.raised {
				t.Errorf("chosen %q bucket %d effective LIT %d raised %v, want %q %d %d %v",
					sel.Chosen, sel.Bucket, sel.EffectiveLIT, sel.Raised, tc.chosen, tc.bucket, tc.effLIT, tc.raised)
			}
			if !reflect.DeepEqual(sel.Eligible, tc.eligible) {
				t.Errorf("eligible %q, want %q", sel.Eligible, tc.eligible)
			}
			got := map[string]int{}
			for _, a := range sel.Hosts {
				got[a.Host] = a.Bucket
				if want, ok := tc.refused[a.Host]; ok && !strings.Contains(a.Refused, want) {
					t.Errorf("host %s refused %q, want it to mention %q", a.Host, a.Refused, want)
				}
			}
			if !reflect.DeepEqual(got, tc.buckets) {
				t.Errorf("buckets %v, want %v", got, tc.buckets)
			}
			checkAssessments(t, sel)
		})
	}
}

// checkAssessments checks that every host says why it is where it is, and
// that the assessment agrees with itself.
func checkAssessments(t *testing.T, sel HostSelection) {
	t.Helper()
	for _, a := range sel.Hosts {
		if a.Why == "" {
			t.Errorf("host %s: no why", a.Host)
		}
		if a.Candidate != (a.Refused == "") || a.Candidate != (a.Bucket != 0) {
			t.Errorf("host %s: candidate %v refused %q bucket %d disagree", a.Host, a.Candidate, a.Refused, a.Bucket)
		}
		if a.Bucket != 0 && !strings.HasPrefix(a.Why, "bucket ") {
			t.Errorf("host %s in bucket %d: why %q does not name the bucket", a.Host, a.Bucket, a.Why)
		}
	}
}

// The why of each bucket names the rule that put the host there.
func TestSelectHostWhy(t *testing.T) {
	hosts := []Host{rdsHost("a", 5, 0), rdsHost("b", 30, 0), rdsHost("c", 40, 0),
		lacking(rdsHost("x", 5, 0), "unauthenticated"), rdsHost("d", -1, 25), disabled(rdsHost("e", 1, 0))}
	sel := SelectHost(Farm{Name: "F"}, hosts, HostRequest{Protocol: ProtocolBlast}, Thresholds{LIT: 20, CST: 20, MIN: 2})
	want := map[string][]string{
		"a": {"bucket 1", "load index 5 < LIT 20", "connecting sessions 0 < CST 20"},
		"b": {"bucket 1", "load index 30 >= LIT 20", "raised to 31"},
		"c": {"bucket 3", "load index 40 >= LIT 20", "reached MIN 2"},
		"x": {"bucket 2", "lacks default features (unauthenticated access)"},
		"d": {"bucket 3", "load balancing disabled", "connecting sessions 25 >= CST 20"},
		"e": {"not a candidate", "disabled"},
	}
	why := make(map[string]string, len(sel.Hosts))
	for _, a := range sel.Hosts {
		if _, dup := why[a.Host]; dup {
			t.Errorf("host %s listed twice", a.Host)
		}
		why[a.Host] = a.Why
	}
	if len(why) != len(want) {
		t.Errorf("%d hosts explained, want %d: %v", len(why), len(want), why)
	}
	for host, words := range want {
		got, ok := why[host]
		if !ok {
			t.Errorf("host %s is not explained", host)
			continue
		}
		for _, w := range words {
			if !strings.Contains(got, w) {
				t.Errorf("host %s: why %q lacks %q", host, got, w)
			}
		}
	}
	if !sel.Hosts[1].Raised || sel.Hosts[0].Raised {
		t.Errorf("raised flags: a %v b %v, want false true", sel.Hosts[0].Raised, sel.Hosts[1].Raised)
	}
}

func TestThresholdsFromSettings(t *testing.T) {
	got := ThresholdsFrom(DefaultSettings())
	if want := (Thresholds{LIT: 20, CST: 20, MIN: 4}); got != want {
		t.Errorf("ThresholdsFrom(defaults) = %+v, want %+v", got, want)
	}
}
