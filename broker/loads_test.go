package broker

import (
	"errors"
	"strings"
	"testing"
)

func siteFigures(t *testing.T, r *LoadsReport, name string) SiteFigures {
	t.Helper()
	for _, s := range r.Sites {
		if s.Site == name {
			return s
		}
	}
	t.Fatalf("no site %s in %+v", name, r.Sites)
	return SiteFigures{}
}

// TestLoadsReport: one row per rule of the loads `cpactl loads` reports.
func TestLoadsReport(t *testing.T) {
	skipper := func(f *Federation) { ge(f).Policy, ge(f).IgnoreHighLoad = PolicyLoad, true }
	for _, tc := range []struct {
		name    string
		change  func(f *Federation)
		offline []string
		check   func(t *testing.T, r *LoadsReport)
	}{
		{name: "under LOAD a site's load is the mean pool load, above the threshold when strictly greater",
			change: func(f *Federation) { skipper(f); poolNamed(f, "uk-desk").Sessions = 10 },
			check: func(t *testing.T, r *LoadsReport) {
				uk := siteFigures(t, r, "UK")
				if uk.Load == nil || *uk.Load != 100 || !uk.AboveThreshold || !uk.PreferredSkip {
					t.Fatalf("UK %+v", uk)
				}
				us := siteFigures(t, r, "US")
				if *us.Load != 20 || us.AboveThreshold || us.PreferredSkip || us.Sessions != 2 || us.Capacity != 10 {
					t.Fatalf("US %+v", us)
				}
			}},
		{name: "a load equal to the threshold is not above it",
			change: func(f *Federation) { skipper(f); f.Settings.LoadThresholdForSite = 50 },
			check: func(t *testing.T, r *LoadsReport) {
				if uk := siteFigures(t, r, "UK"); *uk.Load != 50 || uk.AboveThreshold {
					t.Fatalf("UK %+v", uk)
				}
			}},
		{name: "without Ignore Preferred Sites with High Load nothing is skipped",
			change: func(f *Federation) { ge(f).Policy = PolicyLoad; f.Settings.LoadThresholdForSite = 10 },
			check: func(t *testing.T, r *LoadsReport) {
				uk := siteFigures(t, r, "UK")
				if !uk.AboveThreshold || uk.PreferredSkip || r.SkipsHighLoad {
					t.Fatalf("UK %+v skips %t", uk, r.SkipsHighLoad)
				}
			}},
		{name: "under NONE there is no load, but sessions and capacity are counted",
			check: func(t *testing.T, r *LoadsReport) {
				uk := siteFigures(t, r, "UK")
				if uk.Load != nil || uk.Sessions != 5 || uk.Capacity != 10 || r.Policy != PolicyNone {
					t.Fatalf("UK %+v policy %s", uk, r.Policy)
				}
			}},
		{name: "an offline pod's pools are unavailable and leave the site without load",
			change: skipper, offline: []string{"uk-pod1"},
			check: func(t *testing.T, r *LoadsReport) {
				uk := siteFigures(t, r, "UK")
				if uk.Load != nil || uk.Pods[0].Online || uk.Pods[0].Pools[0].Unavailable == "" || uk.Pods[0].Pools[0].Sessions != 5 {
					t.Fatalf("UK %+v", uk)
				}
			}},
		{name: "under SESSION a site's load is its sessions over its capacity",
			change: func(f *Federation) {
				ge(f).Policy = PolicySession
				f.Pools = append(f.Pools, Pool{Name: "in-desk3", Pod: "in-pod2", Kind: KindDesktop, Capacity: 30, Sessions: 0, Enabled: true})
				ge(f).Pools = append(ge(f).Pools, "in-desk3")
			},
			check: func(t *testing.T, r *LoadsReport) {
				in := siteFigures(t, r, "India")
				if *in.Load != 40 || in.Sessions != 20 || in.Capacity != 50 || len(in.Pods) != 2 || len(in.Pods[1].Pools) != 2 {
					t.Fatalf("India %+v", in)
				}
			}},
		{name: "a site without a pool of the GE is listed with no pod",
			change: func(f *Federation) { f.Sites = append(f.Sites, Site{Name: "Mars"}) },
			check: func(t *testing.T, r *LoadsReport) {
				if m := siteFigures(t, r, "Mars"); m.Load != nil || len(m.Pods) != 0 || m.Pods == nil {
					t.Fatalf("Mars %+v", m)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := seedFederation()
			if tc.change != nil {
				tc.change(f)
			}
			r, err := Loads(f, "sales desktop", tc.offline, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.Entitlement != "Sales Desktop" || r.WhatIf == nil {
				t.Fatalf("entitlement %q what_if %v", r.Entitlement, r.WhatIf)
			}
			tc.check(t, r)
		})
	}
}

func TestLoadsNotFound(t *testing.T) {
	var nf *NotFoundError
	if _, err := Loads(seedFederation(), "nope", nil, nil); !errors.As(err, &nf) || nf.Kind != "entitlement" {
		t.Fatalf("err %v", err)
	}
	if _, err := Loads(seedFederation(), "Sales Desktop", []string{"mars-pod"}, nil); !errors.As(err, &nf) || nf.Kind != "pod" {
		t.Fatalf("err %v", err)
	}
}

// TestResolveEchoesWhatIfs: the decision lists the what-ifs in force and
// the trace names them right after the request.
func TestResolveEchoesWhatIfs(t *testing.T) {
	list := []WhatIf{{Kind: "setting", Target: "pae-LoadThresholdForSite", Value: "99"}, {Kind: "offline_pod", Target: "us-pod1"},
		{Kind: "preferred", Target: "India"}}
	d, err := Resolve(seedFederation(), fillDefaults(Request{OfflinePods: []string{"us-pod1"}, WhatIf: list}))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.WhatIf) != 3 || d.WhatIf[0] != list[0] {
		t.Fatalf("what_if %v", d.WhatIf)
	}
	var line string
	for _, s := range d.Trace {
		if s.Step == "what_if" {
			line = s.Message
		}
	}
	want := "setting pae-LoadThresholdForSite=99; offline pod us-pod1; preferred India=(none)"
	if !strings.Contains(line, want) {
		t.Fatalf("trace line %q, want it to name %q", line, want)
	}
}
