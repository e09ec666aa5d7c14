package broker

import (
	"reflect"
	"strings"
	"testing"
)

func intp(v int) *int { return &v }

func withPolicy(h Host, lit, cst *int) Host {
	h.PolicyLoadIndexThreshold, h.PolicyConnectingSessionThreshold = lit, cst
	return h
}

// TestThresholdsForRules: each pae-RDS* value comes from the farm's pod
// when set, else the federation, else the default (docs/storm.md).
func TestThresholdsForRules(t *testing.T) {
	federation := Settings{RDSLoadIndexThreshold: 30, RDSConnectingSessionThreshold: 20, MinRDSServersInLBQueue: 4,
		RDSSources: ThresholdSources{LIT: SourceFederation, CST: SourceDefault, MIN: SourceDefault}}
	tests := []struct {
		name        string
		settings    Settings
		pod         *Pod
		want        Thresholds
		wantSources ThresholdSources
		podSources  bool // Thresholds.Sources is given
	}{
		{name: "no pod value: the federation's, else the default, and no sources in the JSON",
			settings: federation, pod: &Pod{Name: "P"},
			want: Thresholds{LIT: 30, CST: 20, MIN: 4}, wantSources: ThresholdSources{LIT: SourceFederation, CST: SourceDefault, MIN: SourceDefault}},
		{name: "a pod value replaces the federation's",
			settings: federation, pod: &Pod{Name: "P", RDS: PodRDS{LoadIndexThreshold: intp(50)}},
			want: Thresholds{LIT: 50, CST: 20, MIN: 4}, wantSources: ThresholdSources{LIT: SourcePod, CST: SourceDefault, MIN: SourceDefault}, podSources: true},
		{name: "a pod value replaces the default",
			settings: federation, pod: &Pod{Name: "P", RDS: PodRDS{MinServersInLBQueue: intp(1), ConnectingSessionThreshold: intp(5)}},
			want: Thresholds{LIT: 30, CST: 5, MIN: 1}, wantSources: ThresholdSources{LIT: SourceFederation, CST: SourcePod, MIN: SourcePod}, podSources: true},
		{name: "a pod value of 0 is taken literally",
			settings: federation, pod: &Pod{Name: "P", RDS: PodRDS{MinServersInLBQueue: intp(0)}},
			want: Thresholds{LIT: 30, CST: 20, MIN: 0}, wantSources: ThresholdSources{LIT: SourceFederation, CST: SourceDefault, MIN: SourcePod}, podSources: true},
		{name: "an unknown pod: the federation's",
			settings: federation,
			want:     Thresholds{LIT: 30, CST: 20, MIN: 4}, wantSources: ThresholdSources{LIT: SourceFederation, CST: SourceDefault, MIN: SourceDefault}},
		{name: "empty sources read as the federation's",
			settings: Settings{RDSLoadIndexThreshold: 20, RDSConnectingSessionThreshold: 20, MinRDSServersInLBQueue: 4},
			want:     Thresholds{LIT: 20, CST: 20, MIN: 4}, wantSources: ThresholdSources{LIT: SourceFederation, CST: SourceFederation, MIN: SourceFederation}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, src := ThresholdsFor(tt.settings, tt.pod)
			if src != tt.wantSources {
				t.Errorf("sources %+v, want %+v", src, tt.wantSources)
			}
			if (got.Sources != nil) != tt.podSources || got.Sources != nil && *got.Sources != tt.wantSources {
				t.Errorf("Thresholds.Sources %+v, want given=%v", got.Sources, tt.podSources)
			}
			got.Sources = nil
			if got != tt.want {
				t.Errorf("thresholds %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestPerPodValuesGiveDifferentBuckets: two pods with different MIN and
// thresholds give different buckets for identical farms.
func TestPerPodValuesGiveDifferentBuckets(t *testing.T) {
	settings := DefaultSettings()
	hosts := []Host{rdsHost("a", 10, 0), rdsHost("b", 30, 0), rdsHost("c", 50, 0)}
	tests := []struct {
		name    string
		pod     Pod
		buckets map[string]int
	}{
		{name: "defaults: MIN 4 raises bucket 1 to every host", pod: Pod{Name: "P1"},
			buckets: map[string]int{"a": 1, "b": 1, "c": 1}},
		{name: "pod MIN 1: bucket 1 is the host under LIT", pod: Pod{Name: "P2", RDS: PodRDS{MinServersInLBQueue: intp(1)}},
			buckets: map[string]int{"a": 1, "b": 3, "c": 3}},
		{name: "pod MIN 1 and LIT 40: a second host under LIT", pod: Pod{Name: "P3", RDS: PodRDS{MinServersInLBQueue: intp(1), LoadIndexThreshold: intp(40)}},
			buckets: map[string]int{"a": 1, "b": 1, "c": 3}},
		{name: "pod CST 0: nothing under CST, bucket 3 for all", pod: Pod{Name: "P4", RDS: PodRDS{ConnectingSessionThreshold: intp(0)}},
			buckets: map[string]int{"a": 3, "b": 3, "c": 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th, _ := ThresholdsFor(settings, &tt.pod)
			sel := SelectHost(Farm{Name: "F", Pod: tt.pod.Name}, hosts, HostRequest{}, th)
			got := map[string]int{}
			for _, h := range sel.Hosts {
				got[h.Host] = h.Bucket
			}
			if !reflect.DeepEqual(got, tt.buckets) {
				t.Errorf("buckets %v, want %v", got, tt.buckets)
			}
		})
	}
}

// TestHostPolicyThresholdRules: a host's policy (ADMX) values replace the
// farm's host-side thresholds, each on its own (docs/storm.md step 1).
func TestHostPolicyThresholdRules(t *testing.T) {
	farm := Farm{Name: "F", LoadIndexThreshold: 90, ConnectingSessionThreshold: 10}
	tests := []struct {
		name    string
		host    Host
		inForce HostThresholds
		refused string // substring; "" = a candidate
		given   bool   // HostAssessment.HostThresholds is given
	}{
		{name: "no policy: the farm's thresholds", host: rdsHost("h", 50, 2),
			inForce: HostThresholds{90, SourceFarm, 10, SourceFarm}},
		{name: "policy load index threshold below the load index refuses although the farm's admits",
			host:    withPolicy(rdsHost("h", 50, 2), intp(40), nil),
			inForce: HostThresholds{40, SourcePolicy, 10, SourceFarm}, given: true,
			refused: "load index 50 >= policy (ADMX) load index threshold 40 (replaces the farm's 90)"},
		{name: "policy load index threshold above the farm's admits what the farm refuses",
			host:    withPolicy(rdsHost("h", 95, 2), intp(100), nil),
			inForce: HostThresholds{100, SourcePolicy, 10, SourceFarm}, given: true},
		{name: "policy 0 turns the load index threshold off",
			host:    withPolicy(rdsHost("h", 95, 2), intp(0), nil),
			inForce: HostThresholds{0, SourcePolicy, 10, SourceFarm}, given: true},
		{name: "policy connecting session threshold replaces the farm's",
			host:    withPolicy(rdsHost("h", 5, 3), nil, intp(3)),
			inForce: HostThresholds{90, SourceFarm, 3, SourcePolicy}, given: true,
			refused: "connecting sessions 3 >= policy (ADMX) connecting session threshold 3 (replaces the farm's 10)"},
		{name: "policy connecting session threshold 0 is off",
			host:    withPolicy(rdsHost("h", 5, 12), nil, intp(0)),
			inForce: HostThresholds{90, SourceFarm, 0, SourcePolicy}, given: true},
		{name: "the farm's threshold still refuses where no policy value is set",
			host:    withPolicy(rdsHost("h", 5, 12), intp(50), nil),
			inForce: HostThresholds{50, SourcePolicy, 10, SourceFarm}, given: true,
			refused: "connecting sessions 12 >= host-side connecting session threshold 10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HostThresholdsInForce(farm, tt.host); got != tt.inForce {
				t.Errorf("in force %+v, want %+v", got, tt.inForce)
			}
			sel := SelectHost(farm, []Host{tt.host}, HostRequest{}, defaultThresholds)
			a := sel.Hosts[0]
			if tt.refused == "" && !a.Candidate || tt.refused != "" && !strings.Contains(a.Refused, tt.refused) {
				t.Errorf("refused %q, want %q", a.Refused, tt.refused)
			}
			if (a.HostThresholds != nil) != tt.given || a.HostThresholds != nil && *a.HostThresholds != tt.inForce {
				t.Errorf("assessment thresholds %+v, want given=%v", a.HostThresholds, tt.given)
			}
			rep := SimulateStorm(farm, []Host{tt.host}, HostRequest{}, defaultThresholds, 1)
			if (rep.Hosts[0].HostThresholds != nil) != tt.given {
				t.Errorf("storm host thresholds %+v, want given=%v", rep.Hosts[0].HostThresholds, tt.given)
			}
			if placed := rep.Placed == 1; placed != (tt.refused == "") {
				t.Errorf("storm placed %d, want a candidate=%v", rep.Placed, tt.refused == "")
			}
		})
	}
}

// TestResolveUsesEachFarmsPod: resolve takes a farm's values from its own
// pod and traces every source.
func TestResolveUsesEachFarmsPod(t *testing.T) {
	f := Federation{
		Settings: DefaultSettings(),
		Sites:    []Site{{Name: "S"}},
		Pods: []Pod{{Name: "P", Site: "S", Online: true,
			RDS: PodRDS{MinServersInLBQueue: intp(1)}}},
		ConnectionServers: []ConnectionServer{{Name: "cs", Pod: "P"}},
		Entitlements: []Entitlement{{Name: "Apps", Type: TypeApplication, Scope: ScopeAny, Enabled: true,
			Members: []Member{{Kind: MemberUser, Name: "u"}}, Pools: []string{"apps"}}},
		Pools: []Pool{{Name: "apps", Pod: "P", Kind: KindApplication, Farm: "F", Enabled: true}},
		Farms: []Farm{{Name: "F", Pod: "P", LoadIndexThreshold: 90}},
		Hosts: []Host{rdsHost("a", 10, 0), withPolicy(rdsHost("b", 15, 0), intp(12), nil), rdsHost("c", 30, 0)},
		Users: []User{{Name: "u"}},
	}
	d, err := Resolve(&f, Request{User: "u", Entitlement: "Apps", ConnectionServer: "cs"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Outcome != OutcomePlaced || d.Placement.Host != "a" || !reflect.DeepEqual(d.Placement.EligibleHosts, []string{"a"}) {
		t.Fatalf("outcome %s, placement %+v", d.Outcome, d.Placement)
	}
	wantTrace(t, d, "farm F of pod P: LIT 20 (default), CST 20 (default), MIN 1 (pod)")
	wantTrace(t, d, "host b: load index threshold 12 (policy), connecting session threshold off (farm)")
	hs := d.Placement.HostSelection
	if hs.Thresholds.Sources == nil || hs.Thresholds.Sources.MIN != SourcePod || hs.Thresholds.MIN != 1 {
		t.Errorf("thresholds %+v", hs.Thresholds)
	}
}
