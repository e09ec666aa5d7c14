package rules

import (
	"strings"
	"testing"

	"github.com/cpactl/cpactl/ldapschema"
)

func floatingDesktop() ldapschema.Entitlement {
	return ldapschema.Entitlement{Name: "GE", Type: ldapschema.TypeDesktop, Scope: ldapschema.ScopeAny,
		LoadDistribution: ldapschema.PolicyNone, Enabled: true}
}

func TestEntitlement(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*ldapschema.Entitlement)
		check   string // "" for no violation
		message string
		warning bool
	}{
		{"a plain floating desktop GE is fine", func(g *ldapschema.Entitlement) {}, "", "", false},
		{"require-home-site needs use-home-site", func(g *ldapschema.Entitlement) { g.RequireHomeSite = true },
			CheckRequireHomeSiteWithoutUse, "require-home-site needs use-home-site", false},
		{"require-home-site with use-home-site is fine", func(g *ldapschema.Entitlement) { g.RequireHomeSite, g.UseHomeSite = true, true },
			"", "", false},
		{"ignore-high-load needs a policy other than none", func(g *ldapschema.Entitlement) {
			g.IgnoreHighLoad, g.UsePreferredSites = true, true
		}, CheckIgnoreHighLoadWithoutPolicy, "needs a load distribution policy other than none", false},
		{"ignore-high-load with policy LOAD is fine", func(g *ldapschema.Entitlement) {
			g.IgnoreHighLoad, g.UsePreferredSites, g.LoadDistribution = true, true, ldapschema.PolicyLoad
		}, "", "", false},
		{"ignore-high-load without use-preferred-sites is warned about", func(g *ldapschema.Entitlement) {
			g.IgnoreHighLoad, g.LoadDistribution = true, ldapschema.PolicySession
		}, CheckIgnoreHighLoadWithoutPrefer, "has no effect without use-preferred-sites", true},
		{"auto-clean is not for dedicated desktop GEs", func(g *ldapschema.Entitlement) { g.Dedicated, g.AutoClean = true, true },
			CheckOptionNotAllowed, "multiple-session-auto-clean is for floating desktop and application entitlements", false},
		{"auto-clean is fine on application GEs", func(g *ldapschema.Entitlement) {
			g.Type, g.AutoClean = ldapschema.TypeApplication, true
		}, "", "", false},
		{"client restrictions are not for dedicated desktop GEs", func(g *ldapschema.Entitlement) {
			g.Dedicated, g.ClientRestrictions = true, true
		}, CheckOptionNotAllowed, "client-restrictions is for floating desktop and application entitlements", false},
		{"client restrictions are fine on floating desktop GEs", func(g *ldapschema.Entitlement) { g.ClientRestrictions = true },
			"", "", false},
		{"multiple sessions per user are not for application GEs", func(g *ldapschema.Entitlement) {
			g.Type, g.MultipleSessionsPerUser = ldapschema.TypeApplication, true
		}, CheckOptionNotAllowed, "multiple-sessions-per-user is for floating desktop entitlements only", false},
		{"multiple sessions per user are not for dedicated GEs", func(g *ldapschema.Entitlement) {
			g.Dedicated, g.MultipleSessionsPerUser = true, true
		}, CheckOptionNotAllowed, "multiple-sessions-per-user is for floating desktop entitlements only", false},
		{"use-preferred-sites on scope SITE is warned about", func(g *ldapschema.Entitlement) {
			g.UsePreferredSites, g.Scope = true, ldapschema.ScopeSite
		}, CheckPreferredSitesScope, "use-preferred-sites has no effect with scope SITE", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ge := floatingDesktop()
			tt.edit(&ge)
			vs := Entitlement(ge)
			if tt.check == "" {
				if len(vs) != 0 {
					t.Fatalf("want no violation, got %+v", vs)
				}
				return
			}
			if len(vs) != 1 || vs[0].Check != tt.check || !strings.Contains(vs[0].Message, tt.message) || vs[0].Warning != tt.warning {
				t.Fatalf("got %+v, want one %s (warning %v) saying %q", vs, tt.check, tt.warning, tt.message)
			}
			if vs[0].FixText() == "" {
				t.Fatalf("violation %s has no fix", vs[0].Check)
			}
		})
	}
}

func TestRanges(t *testing.T) {
	tests := []struct {
		name  string
		vs    []Violation
		count int
		text  string
	}{
		{"farm thresholds in range", Farm(ldapschema.Farm{LoadIndexThreshold: 100, ConnectingSessionThreshold: 150}), 0, ""},
		{"farm load index threshold above 100", Farm(ldapschema.Farm{LoadIndexThreshold: 101}), 1,
			"host-load-index-threshold=101 is out of range: it takes an integer 0..100"},
		{"farm connecting session threshold above 150", Farm(ldapschema.Farm{ConnectingSessionThreshold: 151}), 1,
			"host-connecting-session-threshold=151 is out of range: it takes an integer 0..150"},
		{"farm negative max sessions", Farm(ldapschema.Farm{MaxSessionsPerHost: -1}), 1,
			"max-sessions-per-host=-1 is out of range: it takes an integer 0 or more"},
		{"host load index -1 is allowed", Host(ldapschema.Host{LoadIndex: -1}), 0, ""},
		{"host load index below -1", Host(ldapschema.Host{LoadIndex: -2}), 1, "load-index=-2 is out of range: it takes an integer -1..100"},
		{"host load index above 100", Host(ldapschema.Host{LoadIndex: 101}), 1, "load-index=101"},
		{"host negative connecting", Host(ldapschema.Host{Connecting: -1}), 1, "connecting=-1"},
		{"host unknown feature", Host(ldapschema.Host{Features: []string{"TELEPORT"}}), 1, `feature "TELEPORT" is not one of`},
		{"desktop pool negative capacity", Pool(ldapschema.Pool{Kind: ldapschema.KindDesktop, Capacity: -1}), 1, "capacity=-1"},
		{"farm pools have no counters", Pool(ldapschema.Pool{Kind: ldapschema.KindApplication, Capacity: -1}), 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.vs) != tt.count {
				t.Fatalf("got %+v, want %d violations", tt.vs, tt.count)
			}
			if tt.count > 0 && (tt.vs[0].Check != CheckOutOfRange || !strings.Contains(tt.vs[0].Message, tt.text)) {
				t.Fatalf("got %+v, want %s saying %q", tt.vs[0], CheckOutOfRange, tt.text)
			}
		})
	}
}

func TestPoolFits(t *testing.T) {
	desktop := floatingDesktop()
	dedicated := floatingDesktop()
	dedicated.Dedicated = true
	app := floatingDesktop()
	app.Type = ldapschema.TypeApplication
	floatingPool := ldapschema.Pool{Name: "p", Kind: ldapschema.KindDesktop}
	dedicatedPool := ldapschema.Pool{Name: "p", Kind: ldapschema.KindDesktop, Dedicated: true}
	rdsPool := ldapschema.Pool{Name: "p", Kind: ldapschema.KindRDSDesktop}
	appPool := ldapschema.Pool{Name: "p", Kind: ldapschema.KindApplication}
	tests := []struct {
		name  string
		ge    ldapschema.Entitlement
		pool  ldapschema.Pool
		check string
	}{
		{"floating desktop pool in floating desktop GE", desktop, floatingPool, ""},
		{"rds desktop pool in floating desktop GE", desktop, rdsPool, ""},
		{"dedicated pool in dedicated GE", dedicated, dedicatedPool, ""},
		{"application pool in application GE", app, appPool, ""},
		{"dedicated pool in floating GE", desktop, dedicatedPool, CheckDedicatedFloatingMismatch},
		{"floating pool in dedicated GE", dedicated, floatingPool, CheckDedicatedFloatingMismatch},
		{"rds desktop pool in dedicated GE", dedicated, rdsPool, CheckDedicatedFloatingMismatch},
		{"application pool in desktop GE", desktop, appPool, CheckPoolTypeMismatch},
		{"desktop pool in application GE", app, floatingPool, CheckPoolTypeMismatch},
		{"rds desktop pool in application GE", app, rdsPool, CheckPoolTypeMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := PoolFits(tt.ge, tt.pool)
			switch {
			case tt.check == "" && v != nil:
				t.Fatalf("want no violation, got %+v", v)
			case tt.check != "" && (v == nil || v.Check != tt.check):
				t.Fatalf("got %+v, want %s", v, tt.check)
			}
		})
	}
}

func TestFarmFits(t *testing.T) {
	p := ldapschema.Pool{Name: "apps", Pod: "pod1", Kind: ldapschema.KindApplication}
	if v := FarmFits(p, ldapschema.Farm{Name: "f", Pod: "POD1"}); v != nil {
		t.Fatalf("same pod (other case) refused: %+v", v)
	}
	v := FarmFits(p, ldapschema.Farm{Name: "f", Pod: "pod2"})
	if v == nil || v.Check != CheckFarmInAnotherPod || !strings.Contains(v.Message, `farm f is in pod pod2, but pool apps is in pod pod1`) {
		t.Fatalf("got %+v", v)
	}
}
