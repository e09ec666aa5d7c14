package broker

import (
	"errors"
	"math/big"
	"testing"
)

// TestSiteLoadsFor: one row per rule of the preferred tier's loads.
// loadFederation's GE G has site S at SESSION load 21*100/163 (about
// 12.88) and LOAD (100/3+15+50)/3; site T has no pool of G.
func TestSiteLoadsFor(t *testing.T) {
	ge := func(edit func(*Entitlement)) *Federation {
		f := loadFederation()
		f.Settings = DefaultSettings()
		f.Entitlements[0].Policy = PolicySession
		f.Entitlements[0].UsePreferredSites = true
		f.Entitlements[0].IgnoreHighLoad = true
		if edit != nil {
			edit(&f.Entitlements[0])
		}
		return f
	}
	cases := []struct {
		name      string
		f         *Federation
		threshold int
		offline   []string
		wantS     *big.Rat
		skipS     bool
		prefer    bool
		ignore    bool
	}{
		{"SESSION load over the site's available pools", ge(nil), 98, nil, rat(2100, 163), false, true, true},
		{"a load strictly above the threshold is skipped", ge(nil), 12, nil, rat(2100, 163), true, true, true},
		{"LOAD: the mean of the pool loads", ge(func(e *Entitlement) { e.Policy = PolicyLoad }), 98, nil, rat(100+45+150, 9), false, true, true},
		{"NONE: no load, nothing skipped, high load not ignored", ge(func(e *Entitlement) { e.Policy = "" }), 0, nil, nil, false, true, false},
		{"without Use Preferred Sites nothing is skipped", ge(func(e *Entitlement) { e.UsePreferredSites = false }), 0, nil, rat(2100, 163), false, false, true},
		{"scope SITE has no preferred tier", ge(func(e *Entitlement) { e.Scope = ScopeSite }), 0, nil, rat(2100, 163), false, false, true},
		{"without Ignore High Load nothing is skipped", ge(func(e *Entitlement) { e.IgnoreHighLoad = false }), 0, nil, rat(2100, 163), false, true, false},
		{"offline pods leave the load", ge(nil), 98, []string{"p1"}, rat(50, 1), false, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.f.Settings.LoadThresholdForSite = c.threshold
			got, err := SiteLoadsFor(c.f, "g", c.offline)
			if err != nil {
				t.Fatal(err)
			}
			if got.Entitlement != "G" || len(got.Sites) != 2 || got.Sites[0].Site != "S" || got.Sites[1].Site != "T" {
				t.Fatalf("got %+v", got)
			}
			s, tt := got.Sites[0], got.Sites[1]
			if (s.Load == nil) != (c.wantS == nil) || (s.Load != nil && s.Load.Cmp(c.wantS) != 0) {
				t.Errorf("load of S %v, want %v", s.Load, c.wantS)
			}
			if s.AboveThreshold != (s.Load != nil && s.Load.Cmp(rat(int64(c.threshold), 1)) > 0) {
				t.Errorf("above threshold %v with load %v and threshold %d", s.AboveThreshold, s.Load, c.threshold)
			}
			if s.Skipped != c.skipS || got.UsesPreferredSites != c.prefer || got.IgnoreHighLoad != c.ignore {
				t.Errorf("skipped %v, preferred tier %v, ignore high load %v; want %v, %v, %v",
					s.Skipped, got.UsesPreferredSites, got.IgnoreHighLoad, c.skipS, c.prefer, c.ignore)
			}
			if tt.Load != nil || tt.Pools != 0 || tt.Skipped {
				t.Errorf("site T without a pool of G: %+v", tt)
			}
		})
	}
	if _, err := SiteLoadsFor(loadFederation(), "nope", nil); !errors.As(err, new(*NotFoundError)) {
		t.Errorf("unknown GE: %v", err)
	}
	if _, err := SiteLoadsFor(loadFederation(), "G", []string{"nope"}); !errors.As(err, new(*NotFoundError)) {
		t.Errorf("unknown offline pod: %v", err)
	}
}
