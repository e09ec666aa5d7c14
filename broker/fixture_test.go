package broker

import (
	"strings"
	"testing"
)

// seedFederation is seed 000's federation: the connecting site India (two
// pods, both full) ranks UK then US as preferred sites; Japan is a remaining
// site. alice is in group Sales, which is entitled to the floating desktop
// GE "Sales Desktop" (scope ANY, Use Preferred Sites, policy NONE).
func seedFederation() *Federation {
	return &Federation{
		Settings: DefaultSettings(),
		Sites: []Site{
			{Name: "India", PreferredSites: []string{"UK", "US"}},
			{Name: "UK"},
			{Name: "US"},
			{Name: "Japan"},
		},
		Pods: []Pod{
			{Name: "in-pod1", Site: "India", Online: true},
			{Name: "in-pod2", Site: "India", Online: true},
			{Name: "uk-pod1", Site: "UK", Online: true},
			{Name: "us-pod1", Site: "US", Online: true},
			{Name: "jp-pod1", Site: "Japan", Online: true},
		},
		ConnectionServers: []ConnectionServer{
			{Name: "in-cs1", Pod: "in-pod1"},
			{Name: "in-cs2", Pod: "in-pod2"},
			{Name: "uk-cs1", Pod: "uk-pod1"},
			{Name: "in-cs-internal", Pod: "in-pod1", Tags: []string{"internal"}},
			{Name: "in-cs-dmz", Pod: "in-pod1", Tags: []string{"dmz", "guest"}},
		},
		Entitlements: []Entitlement{{
			Name: "Sales Desktop", Type: TypeDesktop, Scope: ScopeAny, UsePreferredSites: true,
			Policy: PolicyNone, Enabled: true, DefaultProtocol: ProtocolBlast,
			Members: []Member{{Kind: MemberGroup, Name: "Sales"}},
			Pools:   []string{"in-desk1", "in-desk2", "uk-desk", "us-desk", "jp-desk"},
		}},
		Pools: []Pool{
			{Name: "in-desk1", Pod: "in-pod1", Kind: KindDesktop, Capacity: 10, Sessions: 10, Enabled: true},
			{Name: "in-desk2", Pod: "in-pod2", Kind: KindDesktop, Capacity: 10, Sessions: 10, Enabled: true},
			{Name: "uk-desk", Pod: "uk-pod1", Kind: KindDesktop, Capacity: 10, Sessions: 5, Enabled: true},
			{Name: "us-desk", Pod: "us-pod1", Kind: KindDesktop, Capacity: 10, Sessions: 2, Enabled: true},
			{Name: "jp-desk", Pod: "jp-pod1", Kind: KindDesktop, Capacity: 10, Sessions: 0, Enabled: true},
		},
		Users: []User{
			{Name: "alice", Groups: []string{"Sales"}},
			{Name: "bob", Groups: []string{"Support"}},
		},
		Groups: []Group{
			{Name: "Sales"},
			{Name: "Support"},
			{Name: "Laptops"},
			{Name: "Kiosks"},
		},
		Computers: []Computer{
			{Name: "laptop-1", Groups: []string{"Laptops"}},
			{Name: "kiosk-1", Groups: []string{"Kiosks"}},
		},
	}
}

// ge returns the GE of the seed federation.
func ge(f *Federation) *Entitlement { return &f.Entitlements[0] }

// poolNamed returns the named pool of f.
func poolNamed(f *Federation, name string) *Pool {
	for i := range f.Pools {
		if f.Pools[i].Name == name {
			return &f.Pools[i]
		}
	}
	panic("no pool " + name)
}

// podNamed returns the named pod of f.
func podNamed(f *Federation, name string) *Pod {
	for i := range f.Pods {
		if f.Pods[i].Name == name {
			return &f.Pods[i]
		}
	}
	panic("no pod " + name)
}

// siteNamed returns the named site of f.
func siteNamed(f *Federation, name string) *Site {
	for i := range f.Sites {
		if f.Sites[i].Name == name {
			return &f.Sites[i]
		}
	}
	panic("no site " + name)
}

// addFarmPool adds a farm-backed pool of the GE with a farm and hosts.
func addFarmPool(f *Federation, pool, pod, farm string, kind PoolKind, maxSessions int, hosts ...Host) {
	f.Farms = append(f.Farms, Farm{Name: farm, Pod: pod, MaxSessionsPerHost: maxSessions})
	for _, h := range hosts {
		h.Farm = farm
		f.Hosts = append(f.Hosts, h)
	}
	f.Pools = append(f.Pools, Pool{Name: pool, Pod: pod, Kind: kind, Farm: farm, Enabled: true})
	ge(f).Pools = append(ge(f).Pools, pool)
}

// host builds an enabled host with every default feature.
func host(name string, loadIndex, sessions, connecting int) Host {
	return Host{Name: name, LoadIndex: loadIndex, Sessions: sessions, Connecting: connecting, Features: AllFeatures(), Enabled: true}
}

// fillDefaults completes a request with the seed's defaults.
func fillDefaults(r Request) Request {
	if r.User == "" {
		r.User = "alice"
	}
	if r.Entitlement == "" {
		r.Entitlement = "Sales Desktop"
	}
	if r.ConnectionServer == "" && r.Pod == "" {
		r.ConnectionServer = "in-cs1"
	}
	return r
}

// Assertions.

func wantOutcome(t *testing.T, d *Decision, want Outcome) {
	t.Helper()
	if d.Outcome != want {
		t.Fatalf("outcome %s, want %s (reason: %s)\n%s", d.Outcome, want, d.Reason, traceText(d))
	}
}

func wantPlaced(t *testing.T, d *Decision, site, pod, pool string) {
	t.Helper()
	wantOutcome(t, d, OutcomePlaced)
	p := d.Placement
	if p == nil || p.Site != site || p.Pod != pod || p.Pool != pool {
		t.Fatalf("placement %+v, want %s/%s/%s\n%s", p, site, pod, pool, traceText(d))
	}
}

func wantTrace(t *testing.T, d *Decision, substr string) {
	t.Helper()
	if !strings.Contains(traceText(d), substr) {
		t.Fatalf("trace lacks %q:\n%s", substr, traceText(d))
	}
}

func wantWarning(t *testing.T, d *Decision, substr string) {
	t.Helper()
	for _, w := range d.Warnings {
		if strings.Contains(w, substr) {
			return
		}
	}
	t.Fatalf("no warning with %q in %q", substr, d.Warnings)
}

// wantSiteOrder compares the site order, each visit written
// "site/tier/searched" or "site/tier/skipped".
func wantSiteOrder(t *testing.T, d *Decision, want ...string) {
	t.Helper()
	got := siteOrderText(d)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("site order %q, want %q\n%s", got, want, traceText(d))
	}
}

func siteOrderText(d *Decision) []string {
	var got []string
	for _, v := range d.SiteOrder {
		state := "searched"
		if v.Skipped {
			state = "skipped"
		}
		got = append(got, v.Site+"/"+string(v.Tier)+"/"+state)
	}
	return got
}

func traceText(d *Decision) string {
	var b strings.Builder
	for _, s := range d.Trace {
		b.WriteString(s.Step + ": " + s.Message + "\n")
	}
	return b.String()
}

// checkOf returns the named step-1 check.
func checkOf(t *testing.T, d *Decision, name string) Check {
	t.Helper()
	for _, c := range d.Checks {
		if c.Check == name {
			return c
		}
	}
	t.Fatalf("no check %s in %+v", name, d.Checks)
	return Check{}
}
