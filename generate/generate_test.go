package generate_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/generate"
	"github.com/cpactl/cpactl/internal/nesting"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/lint"
	"github.com/cpactl/cpactl/membership"
)

// midSize is a federation of about 3,400 entries: big enough for every
// kind of object and relation, small enough to lint in a test.
func midSize(seed int64) generate.Config {
	return generate.Config{Base: ldapschema.DefaultBase, Seed: seed, Sites: 5, Pods: 12, OfflinePods: 2,
		ConnectionServers: 30, Farms: 15, Hosts: 150, Pools: 120, Entitlements: 50, Users: 800, Groups: 120,
		Computers: 60, HomeSites: 200, Assignments: 250, Sessions: 1500}
}

func demo(t testing.TB, seed int64) generate.Config {
	t.Helper()
	cfg, err := generate.Preset(generate.PresetDemo)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Seed = seed
	return cfg
}

func write(t testing.TB, cfg generate.Config) string {
	t.Helper()
	var b strings.Builder
	n, err := generate.Write(&b, cfg)
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	if n != cfg.Entries() {
		t.Errorf("Write reported %d entries, Entries() says %d", n, cfg.Entries())
	}
	return b.String()
}

// records reads the output as `cpactl lint --from` does: an LDIF snapshot,
// then the store's inventory.
func records(t testing.TB, text string) (*snapshot.Snapshot, *ldapschema.Records) {
	t.Helper()
	snap, err := snapshot.ReadSnapshot(strings.NewReader(text))
	if err != nil {
		t.Fatalf("the output is not a snapshot: %v", err)
	}
	inv, err := directory.NewStore(snap, ldapschema.DefaultBase).Inventory()
	if err != nil {
		t.Fatal(err)
	}
	return snap, inv
}

func TestDeterministic(t *testing.T) {
	for _, cfg := range []generate.Config{demo(t, 7), midSize(7)} {
		a, b := write(t, cfg), write(t, cfg)
		if a != b {
			t.Fatalf("two runs with seed %d differ", cfg.Seed)
		}
		cfg.Seed = 8
		if write(t, cfg) == a {
			t.Errorf("seeds 7 and 8 give the same output")
		}
	}
}

// TestCountsAreIndependent: each kind draws from a stream of its own, so
// changing one count leaves the other kinds as they were.
func TestCountsAreIndependent(t *testing.T) {
	cfg := demo(t, 3)
	sites := func(text string) string {
		_, rec := records(t, text)
		return fmt.Sprint(rec.Sites)
	}
	before := sites(write(t, cfg))
	cfg.Sessions = 5
	if after := sites(write(t, cfg)); after != before {
		t.Errorf("changing --sessions changed the sites:\n%s\n%s", before, after)
	}
}

func TestLintClean(t *testing.T) {
	var cfgs []generate.Config
	for _, seed := range []int64{0, 1, 2, 3, 42, -9} {
		cfgs = append(cfgs, demo(t, seed))
	}
	for _, seed := range []int64{1, 2} {
		cfgs = append(cfgs, midSize(seed))
	}
	// Odd shapes: no farms, no groups, one of everything, a base of o=.
	cfgs = append(cfgs,
		generate.Config{Seed: 5, Sites: 2, Pods: 3, ConnectionServers: 3, Pools: 6, Entitlements: 4, Users: 10,
			Groups: 3, HomeSites: 5, Assignments: 2, Sessions: 10},
		generate.Config{Seed: 5, Sites: 1, Pods: 2, OfflinePods: 1, ConnectionServers: 2, Farms: 1, Hosts: 1, Pools: 3,
			Entitlements: 3, Users: 4, Sessions: 8, Assignments: 1, HomeSites: 2},
		generate.Config{Seed: 6, Base: "o=Example Corp", Sites: 1, Pods: 1, ConnectionServers: 1, Farms: 1, Hosts: 1,
			Pools: 1, Entitlements: 1, Users: 1, Groups: 1, Computers: 1, HomeSites: 1, Sessions: 1},
		generate.Config{Seed: 7})
	for _, cfg := range cfgs {
		t.Run(fmt.Sprintf("%d-entries-seed-%d", cfg.Entries(), cfg.Seed), func(t *testing.T) {
			snap, err := snapshot.ReadSnapshot(strings.NewReader(write(t, cfg)))
			if err != nil {
				t.Fatal(err)
			}
			base := cfg.Base
			if base == "" {
				base = ldapschema.DefaultBase
			}
			inv, err := directory.NewStore(snap, base).Inventory()
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range lint.Run(*inv) {
				t.Errorf("%s %s: %s: %s", f.Kind, f.Object, f.Check, f.Message)
			}
		})
	}
}

// TestLayoutAndCounts: the base, the containers and cn=Common come first,
// every container holds the requested number of entries, parents come
// before their children, and the output names the seed.
func TestLayoutAndCounts(t *testing.T) {
	cfg := midSize(11)
	text := write(t, cfg)
	if !strings.HasPrefix(text, "# A synthetic Cloud Pod Architecture federation") || !strings.Contains(text, "Seed 11,") {
		t.Errorf("the output does not open with its description:\n%.300s", text)
	}
	snap, rec := records(t, text)
	dit := ldapschema.DIT{Base: cfg.Base}
	layout, err := directory.Layout(dit)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range layout {
		if got := snap.Entries()[i].DN; got != want.DN {
			t.Errorf("entry %d is %s, want %s (the layout of cpactl init)", i, got, want.DN)
		}
	}
	seen := map[string]bool{}
	for _, e := range snap.Entries() {
		if parent := ldapschema.ParentOf(e.DN); e.DN != cfg.Base && !seen[ldapschema.NormalizeDN(parent)] {
			t.Fatalf("%s comes before its parent", e.DN)
		}
		seen[ldapschema.NormalizeDN(e.DN)] = true
	}
	if len(snap.Entries()) != cfg.Entries() {
		t.Errorf("%d entries, want %d", len(snap.Entries()), cfg.Entries())
	}
	counts := []struct {
		what      string
		got, want int
	}{
		{"sites", len(rec.Sites), cfg.Sites}, {"pods", len(rec.Pods), cfg.Pods},
		{"connection servers", len(rec.ConnectionServers), cfg.ConnectionServers}, {"farms", len(rec.Farms), cfg.Farms},
		{"hosts", len(rec.Hosts), cfg.Hosts}, {"pools", len(rec.Pools), cfg.Pools},
		{"entitlements", len(rec.Entitlements), cfg.Entitlements}, {"users", len(rec.Users), cfg.Users},
		{"groups", len(rec.Groups), cfg.Groups}, {"computers", len(rec.Computers), cfg.Computers},
		{"home sites", len(rec.HomeSites), cfg.HomeSites}, {"assignments", len(rec.Assignments), cfg.Assignments},
		{"sessions", len(rec.Sessions), cfg.Sessions},
	}
	for _, c := range counts {
		if c.got != c.want {
			t.Errorf("%d %s, want %d", c.got, c.what, c.want)
		}
	}
	offline := 0
	for _, p := range rec.Pods {
		if !p.Online {
			offline++
		}
	}
	if offline != cfg.OfflinePods {
		t.Errorf("%d pods offline, want %d", offline, cfg.OfflinePods)
	}
}

// TestEveryObjectClass: the output uses every object class of cpactl's
// schema, and the standard classes users, computers and containers need.
func TestEveryObjectClass(t *testing.T) {
	for _, cfg := range []generate.Config{demo(t, 1), midSize(1)} {
		snap, _ := records(t, write(t, cfg))
		seen := map[string]bool{}
		for _, e := range snap.Entries() {
			for _, c := range e.GetAttributeValues(ldapschema.AttrObjectClass) {
				seen[strings.ToLower(c)] = true
			}
		}
		want := []string{ldapschema.ClassOrganizationalUnit, ldapschema.ClassInetOrgPerson, ldapschema.ClassDevice, "domain"}
		for _, c := range ldapschema.Classes {
			want = append(want, c.Name)
		}
		for _, c := range want {
			if !seen[strings.ToLower(c)] {
				t.Errorf("%d entries: no entry of class %s", cfg.Entries(), c)
			}
		}
	}
}

// TestVariety checks that the federation holds what the preset promises:
// every kind of pool and entitlement option, hosts in all three RDS
// buckets, nested groups with a cycle, home-site rows of every sort with a
// group conflict, and sessions and assignments consistent with their
// entitlements.
func TestVariety(t *testing.T) {
	for _, cfg := range []generate.Config{demo(t, 1), demo(t, 2), midSize(4)} {
		t.Run(fmt.Sprintf("%d-entries-seed-%d", cfg.Entries(), cfg.Seed), func(t *testing.T) {
			_, rec := records(t, write(t, cfg))
			checkVariety(t, rec)
			checkConsistency(t, rec)
		})
	}
}

func checkVariety(t *testing.T, rec *ldapschema.Records) {
	t.Helper()
	seen := map[string]bool{}
	see := func(what string, ok bool) {
		if ok {
			seen[what] = true
		}
	}
	for _, s := range rec.Sites {
		see("site without preferred sites", len(s.PreferredSites) == 0)
	}
	for _, cs := range rec.ConnectionServers {
		see("tagged connection server", len(cs.Tags) > 0)
	}
	for _, p := range rec.Pools {
		kind := p.Kind
		if p.Kind == ldapschema.KindDesktop && p.Dedicated {
			kind += " dedicated"
		}
		see("pool "+kind, true)
		see("disabled pool", !p.Enabled)
	}
	for _, h := range rec.Hosts {
		all := len(h.Features) == len(ldapschema.AllFeatures)
		under := h.LoadIndex < 20 && h.Connecting < 20 // the default pae-RDS* thresholds
		see("bucket 1 host", all && under)
		see("bucket 2 host", !all && under)
		see("bucket 3 host", !under)
		see("host at load index -1", h.LoadIndex == -1)
		see("disabled host", !h.Enabled)
	}
	for _, ge := range rec.Entitlements {
		see("entitlement "+ge.Type, true)
		see("scope "+ge.Scope, true)
		see("policy "+ge.LoadDistribution, true)
		see("dedicated entitlement", ge.Dedicated)
		see("floating desktop entitlement", ge.Type == ldapschema.TypeDesktop && !ge.Dedicated)
		see("use home site", ge.UseHomeSite)
		see("require home site", ge.RequireHomeSite)
		see("use preferred sites", ge.UsePreferredSites)
		see("tagged entitlement", len(ge.Tags) > 0)
		see("disabled entitlement", !ge.Enabled)
	}
	ancestors := groupsAbove(rec.Groups)
	depth := 0
	for _, u := range rec.Users {
		for _, a := range ancestors(u.DN) {
			depth = max(depth, len(a.chain))
		}
	}
	see("groups nested 3 deep", depth >= 3)
	// A cycle: two groups each (transitively) in the other.
	above := map[string]map[string]bool{}
	for _, g := range rec.Groups {
		see("empty group", len(g.Members) == 0)
		set := map[string]bool{}
		for _, a := range ancestors(g.DN) {
			set[a.group] = true
		}
		above[ldapschema.NormalizeDN(g.DN)] = set
	}
	for g, set := range above {
		for a := range set {
			see("group cycle", above[a][g])
		}
	}
	global := map[string]string{} // principal -> site, global rows
	for _, h := range rec.HomeSites {
		see("home site of a user", h.UserDN != "")
		see("home site of a group", h.GroupDN != "")
		see("global home site", h.EntitlementDN == "")
		see("home-site override", h.EntitlementDN != "")
		if h.EntitlementDN == "" {
			global[ldapschema.NormalizeDN(h.UserDN+h.GroupDN)] = h.SiteDN
		}
	}
	// A group conflict: a user without a global row of their own, in two
	// groups whose global rows name different sites.
	for _, u := range rec.Users {
		if _, own := global[ldapschema.NormalizeDN(u.DN)]; own {
			continue
		}
		sites := map[string]bool{}
		for _, a := range ancestors(u.DN) {
			if len(a.chain) == 1 {
				if s, ok := global[a.group]; ok {
					sites[ldapschema.NormalizeDN(s)] = true
				}
			}
		}
		see("group conflict", len(sites) > 1)
	}
	for _, s := range rec.Sessions {
		see("session "+s.State, true)
		see("session on an rds host", s.HostDN != "")
		see("session from a client computer", s.ClientDN != "")
	}
	want := []string{"tagged connection server", "pool DESKTOP", "pool DESKTOP dedicated", "pool RDS_DESKTOP",
		"pool APPLICATION", "disabled pool", "bucket 1 host", "bucket 2 host", "bucket 3 host", "host at load index -1",
		"disabled host", "entitlement DESKTOP", "entitlement APPLICATION", "scope ANY", "scope SITE", "scope LOCAL",
		"policy NONE", "policy LOAD", "policy SESSION", "dedicated entitlement", "floating desktop entitlement",
		"use home site", "use preferred sites", "tagged entitlement", "groups nested 3 deep", "group cycle", "empty group",
		"home site of a user", "home site of a group", "global home site", "home-site override", "group conflict",
		"session CONNECTED", "session DISCONNECTED", "session on an rds host", "session from a client computer"}
	if len(rec.Entitlements) > 20 {
		want = append(want, "require home site", "disabled entitlement")
	}
	for _, w := range want {
		if !seen[w] {
			t.Errorf("no %s", w)
		}
	}
	if seen["site without preferred sites"] {
		t.Errorf("a site has no preferred sites")
	}
}

// checkConsistency: every session is of a user entitled to its
// entitlement, on one of the entitlement's pools, in that pool's pod, on a
// host of the pool's farm, brokered by a pod the scope allows; a dedicated
// user's session is on the assigned pod; assignments are of entitled users
// of dedicated entitlements, on a pod that holds one of its pools; an
// application entitlement's protocol is one Horizon allows for it.
func checkConsistency(t *testing.T, rec *ldapschema.Records) {
	t.Helper()
	key := ldapschema.NormalizeDN
	graph := membership.New(rec.Groups)
	ges := map[string]ldapschema.Entitlement{}
	for _, ge := range rec.Entitlements {
		ges[key(ge.DN)] = ge
		// Horizon's application entitlements take BLAST or PCOIP only.
		if ge.Type == ldapschema.TypeApplication && ge.DefaultProtocol != ldapschema.ProtocolBlast && ge.DefaultProtocol != ldapschema.ProtocolPCoIP {
			t.Errorf("application entitlement %s has default protocol %s", ge.Name, ge.DefaultProtocol)
		}
	}
	pools := map[string]ldapschema.Pool{}
	for _, p := range rec.Pools {
		pools[key(p.DN)] = p
	}
	podSite := map[string]string{}
	for _, p := range rec.Pods {
		podSite[key(p.DN)] = key(p.SiteDN)
	}
	assigned := map[string]string{} // user|ge -> pod
	for _, a := range rec.Assignments {
		ge := ges[key(a.EntitlementDN)]
		if !ge.Dedicated {
			t.Errorf("assignment of %s on %s, not a dedicated entitlement", a.UserDN, ge.Name)
		}
		if _, ok := graph.MemberOf(a.UserDN, ge.Members); !ok {
			t.Errorf("assignment of %s, who is not entitled to %s", a.UserDN, ge.Name)
		}
		onPod := false
		for _, dn := range ge.PoolDNs {
			onPod = onPod || key(ldapschema.ParentOf(dn)) == key(a.PodDN)
		}
		if !onPod {
			t.Errorf("assignment of %s to pod %s, where %s has no pool", a.UserDN, a.PodDN, ge.Name)
		}
		k := key(a.UserDN) + "|" + key(a.EntitlementDN)
		if _, dup := assigned[k]; dup {
			t.Errorf("two assignments of %s for %s", a.UserDN, ge.Name)
		}
		assigned[k] = key(a.PodDN)
	}
	for _, s := range rec.Sessions {
		ge := ges[key(s.EntitlementDN)]
		if _, ok := graph.MemberOf(s.UserDN, ge.Members); !ok {
			t.Errorf("session %s: %s is not entitled to %s", s.ID, s.UserDN, ge.Name)
		}
		inGE := false
		for _, dn := range ge.PoolDNs {
			inGE = inGE || key(dn) == key(s.PoolDN)
		}
		pool := pools[key(s.PoolDN)]
		switch {
		case !inGE:
			t.Errorf("session %s: pool %s is not a pool of %s", s.ID, pool.Name, ge.Name)
		case key(ldapschema.ParentOf(s.PoolDN)) != key(s.PodDN):
			t.Errorf("session %s: pod %s is not the pool's", s.ID, s.PodDN)
		case (pool.FarmDN == "") != (s.HostDN == ""):
			t.Errorf("session %s: host %q on pool %s (farm %q)", s.ID, s.HostDN, pool.Name, pool.FarmDN)
		case s.HostDN != "" && key(ldapschema.ParentOf(s.HostDN)) != key(pool.FarmDN):
			t.Errorf("session %s: host %s is not on farm %s", s.ID, s.HostDN, pool.FarmDN)
		case ge.Scope == ldapschema.ScopeLocal && key(s.BrokeringPodDN) != key(s.PodDN):
			t.Errorf("session %s of LOCAL %s brokered by another pod", s.ID, ge.Name)
		case ge.Scope == ldapschema.ScopeSite && podSite[key(s.BrokeringPodDN)] != podSite[key(s.PodDN)]:
			t.Errorf("session %s of SITE %s brokered in another site", s.ID, ge.Name)
		}
		if ge.Dedicated && assigned[key(s.UserDN)+"|"+key(s.EntitlementDN)] != key(s.PodDN) {
			t.Errorf("session %s of dedicated %s: not on the user's assigned pod", s.ID, ge.Name)
		}
	}
	for _, h := range rec.HomeSites {
		if h.EntitlementDN == "" {
			continue
		}
		ge := ges[key(h.EntitlementDN)]
		if !ge.UseHomeSite {
			t.Errorf("a home-site override for %s, which does not use home sites", ge.Name)
		}
	}
}

func TestValidate(t *testing.T) {
	base := func(edit func(*generate.Config)) generate.Config {
		cfg := demo(t, 1)
		edit(&cfg)
		return cfg
	}
	tests := []struct {
		name string
		cfg  generate.Config
		want string
	}{
		{"negative count", base(func(c *generate.Config) { c.Users = -1 }), "--users is -1: counts are 0 or more"},
		{"fewer pods than sites", base(func(c *generate.Config) { c.Pods = 3 }), "--pods (3) is less than --sites (4)"},
		{"pods without sites", generate.Config{Pods: 2, ConnectionServers: 2}, "--pods 2 needs --sites above 0"},
		{"every pod offline", base(func(c *generate.Config) { c.OfflinePods = 7 }), "--offline-pods (7) must be less than --pods (7)"},
		{"a pod without connection server", base(func(c *generate.Config) { c.ConnectionServers = 6 }), "--connection-servers (6) is less than --pods (7)"},
		{"a farm without host", base(func(c *generate.Config) { c.Hosts = 2 }), "--hosts (2) is less than --farms (3)"},
		{"hosts without farms", base(func(c *generate.Config) { c.Farms = 0 }), "--hosts 18 needs --farms above 0"},
		{"an entitlement without pool", base(func(c *generate.Config) { c.Entitlements = 21 }), "--entitlements (21) is more than --pools (20)"},
		{"sessions without users", base(func(c *generate.Config) { c.Users, c.HomeSites, c.Assignments = 0, 0, 0 }), "--sessions 60 needs --users above 0"},
		{"too many home sites", base(func(c *generate.Config) { c.HomeSites = 53 }), "--home-sites (53) is more than --users plus --groups (52)"},
		{"too many assignments", base(func(c *generate.Config) { c.Assignments = 1000 }), "--assignments 1000 is more than the"},
		{"no base entry", base(func(c *generate.Config) { c.Base = "ou=cpa,dc=example,dc=com" }), "only a dc= or o= base has one"},
		{"not a DN", base(func(c *generate.Config) { c.Base = "example" }), `base "example" is not a DN`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			n, err := generate.Write(&b, tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("the error is not one line: %q", err)
			}
			if n != 0 || b.Len() != 0 {
				t.Errorf("an invalid configuration wrote %d entries (%d bytes)", n, b.Len())
			}
		})
	}
}

func TestPreset(t *testing.T) {
	if got := strings.Join(generate.Presets(), ","); got != "cpa-max,demo" {
		t.Errorf("Presets() = %s", got)
	}
	max, err := generate.Preset("CPA-Max")
	if err != nil {
		t.Fatal(err)
	}
	if err := max.Validate(); err != nil {
		t.Errorf("cpa-max does not validate: %v", err)
	}
	if max.Sites != 15 || max.Pods != 50 || max.ConnectionServers != 350 || max.Sessions != 250000 {
		t.Errorf("cpa-max is not Horizon's CPA maximum: %+v", max)
	}
	if n := max.Entries(); n < 350000 || n > 370000 {
		t.Errorf("cpa-max has %d entries", n)
	}
	if _, err := generate.Preset("huge"); err == nil || !strings.Contains(err.Error(), "cpa-max, demo") {
		t.Errorf("an unknown preset: %v", err)
	}
}

// TestEntriesAreValidDNs: every DN parses, and names with LDAP specials and
// non-ASCII letters come out escaped and base64-encoded.
func TestEntriesAreValidDNs(t *testing.T) {
	text := write(t, midSize(2))
	if !strings.Contains(text, "\ndn:: ") {
		t.Error("no base64-encoded DN: the non-ASCII names are missing")
	}
	if !strings.Contains(text, `cn=Sales\, EMEA Desktops`) {
		t.Error("no escaped comma in a DN")
	}
	snap, _ := records(t, text)
	for _, e := range snap.Entries() {
		if _, err := ldap.ParseDN(e.DN); err != nil {
			t.Errorf("%q: %v", e.DN, err)
		}
	}
}

// BenchmarkGenerateCPAMax writes the cpa-max preset (about 358,000 entries)
// to io.Discard.
func BenchmarkGenerateCPAMax(b *testing.B) {
	cfg, err := generate.Preset(generate.PresetCPAMax)
	if err != nil {
		b.Fatal(err)
	}
	var size countingWriter
	for b.Loop() {
		size = 0
		if _, err := generate.Write(&size, cfg); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(size))
	b.ReportMetric(float64(cfg.Entries())*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}

type countingWriter int

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

// ancestor is a group a principal is in, directly or not: its normalized
// DN and the chain of groups (normalized DNs) from an immediate group to it.
type ancestor struct {
	group string
	chain []string
}

// groupsAbove returns the groups a principal (a DN) is in, walking up the
// nesting breadth first, each group once (nesting.Up).
func groupsAbove(groups []ldapschema.Group) func(dn string) []ancestor {
	parents := map[string][]string{} // normalized member DN -> its groups
	for _, g := range groups {
		for _, m := range g.Members {
			k := ldapschema.NormalizeDN(m)
			parents[k] = append(parents[k], ldapschema.NormalizeDN(g.DN))
		}
	}
	return func(dn string) []ancestor {
		once := nesting.Once(func(k string) string { return k })
		start := ldapschema.NormalizeDN(dn)
		once(start)
		steps := nesting.Up(parents[start], func(k string) []string { return parents[k] }, once, nil)
		out := make([]ancestor, len(steps))
		for i, st := range steps {
			out[i] = ancestor{group: st.Node, chain: nesting.Chain(steps, i)}
		}
		return out
	}
}
