package rules

import (
	"errors"
	"strings"
	"testing"

	"github.com/cpactl/cpactl/ldapschema"
)

// TestPolicyThresholdRanges: a host's policy (ADMX) thresholds take the
// farm's ranges, 0 = off; an unset one is not checked.
func TestPolicyThresholdRanges(t *testing.T) {
	n := func(v int) *int { return &v }
	tests := []struct {
		name     string
		lit, cst *int
		message  string // "" for no violation
	}{
		{"unset policy thresholds are fine", nil, nil, ""},
		{"0 is off and in range", n(0), n(0), ""},
		{"the top of each range is fine", n(100), n(150), ""},
		{"policy load index threshold above 100", n(101), nil, "policy-load-index-threshold=101 is out of range: it takes an integer 0..100"},
		{"policy load index threshold below 0", n(-1), nil, "policy-load-index-threshold=-1 is out of range"},
		{"policy connecting session threshold above 150", nil, n(151), "policy-connecting-session-threshold=151 is out of range: it takes an integer 0..150"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs := Host(ldapschema.Host{Name: "h", Features: ldapschema.AllFeatures, PolicyLoadIndexThreshold: tt.lit,
				PolicyConnectingSessionThreshold: tt.cst})
			if tt.message == "" {
				if len(vs) != 0 {
					t.Fatalf("violations %v", vs)
				}
				return
			}
			if len(vs) != 1 || vs[0].Check != CheckOutOfRange || !strings.Contains(vs[0].Message, tt.message) {
				t.Fatalf("violations %+v, want %q", vs, tt.message)
			}
		})
	}
}

// TestPodSetting: only the three pae-RDS* settings may be set on a pod.
func TestPodSetting(t *testing.T) {
	for _, s := range ldapschema.Settings {
		t.Run(s.Attr, func(t *testing.T) {
			err := PodSetting(s)
			perPod := strings.HasPrefix(s.Attr, "pae-RDS") || s.Attr == ldapschema.AttrMinRDSServersInLBQueue
			if perPod {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var re *Error
			if !errors.As(err, &re) || re.Rule != RuleFederationWideSetting || !strings.Contains(re.Message, s.Attr+" is federation-wide") {
				t.Fatalf("got %v, want rule %s", err, RuleFederationWideSetting)
			}
		})
	}
}
