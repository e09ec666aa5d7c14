package lint

import (
	"strings"
	"testing"

	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
)

var dit = ldapschema.DIT{Base: "dc=example,dc=test"}

// clean is a small federation without findings: two sites that prefer each
// other, a pod in each, a floating desktop GE with a desktop pool in UK and
// an application GE with a farm-backed pool in US, a user entitled through
// nested groups, a home-site override, a session and an assignment of a
// dedicated GE.
func clean() Data {
	site := func(name string, pref ...string) ldapschema.Site {
		return ldapschema.Site{DN: dit.Site(name), Name: name, PreferredSites: pref,
			PreferredRaw: ldapschema.EncodePreferredSites(pref)}
	}
	pod := func(name, s string) ldapschema.Pod {
		return ldapschema.Pod{DN: dit.Pod(name), Name: name, SiteDN: dit.Site(s), Site: s, Online: true}
	}
	desk := ldapschema.Pool{DN: dit.Pool("uk-pod", "uk-desk"), Name: "uk-desk", Pod: "uk-pod", Kind: ldapschema.KindDesktop,
		Capacity: 10, Enabled: true}
	dedicatedDesk := ldapschema.Pool{DN: dit.Pool("uk-pod", "uk-ded"), Name: "uk-ded", Pod: "uk-pod", Kind: ldapschema.KindDesktop,
		Dedicated: true, Capacity: 5, Enabled: true}
	apps := ldapschema.Pool{DN: dit.Pool("us-pod", "us-apps"), Name: "us-apps", Pod: "us-pod", Kind: ldapschema.KindApplication,
		FarmDN: dit.Farm("us-pod", "us-farm"), Farm: "us-farm", Enabled: true}
	alice := ldapschema.User{DN: dit.User("alice"), UID: "alice"}
	return Data{
		Sites: []ldapschema.Site{site("UK", "US"), site("US", "UK")},
		Pods:  []ldapschema.Pod{pod("uk-pod", "UK"), pod("us-pod", "US")},
		ConnectionServers: []ldapschema.ConnectionServer{{DN: dit.ConnectionServer("uk-pod", "uk-cs"), Name: "uk-cs", Pod: "uk-pod",
			Tags: []string{"internal"}}},
		Pools: []ldapschema.Pool{desk, dedicatedDesk, apps},
		Farms: []ldapschema.Farm{{DN: dit.Farm("us-pod", "us-farm"), Name: "us-farm", Pod: "us-pod"}},
		Hosts: []ldapschema.Host{{DN: dit.Host("us-pod", "us-farm", "rds1"), Name: "rds1", Farm: "us-farm", Pod: "us-pod",
			Features: ldapschema.AllFeatures, Enabled: true}},
		Entitlements: []ldapschema.Entitlement{
			{DN: dit.Entitlement("Desk"), Name: "Desk", Type: ldapschema.TypeDesktop, Scope: ldapschema.ScopeAny,
				UseHomeSite: true, LoadDistribution: ldapschema.PolicyLoad, UsePreferredSites: true, IgnoreHighLoad: true,
				Enabled: true, Tags: []string{"internal"}, Members: []string{dit.Group("Staff")}, PoolDNs: []string{desk.DN}},
			{DN: dit.Entitlement("Apps"), Name: "Apps", Type: ldapschema.TypeApplication, Scope: ldapschema.ScopeSite,
				LoadDistribution: ldapschema.PolicyNone, Enabled: true, Members: []string{alice.DN}, PoolDNs: []string{apps.DN}},
			{DN: dit.Entitlement("Dedicated"), Name: "Dedicated", Type: ldapschema.TypeDesktop, Dedicated: true,
				Scope: ldapschema.ScopeAny, LoadDistribution: ldapschema.PolicyNone, Enabled: true,
				Members: []string{alice.DN}, PoolDNs: []string{dedicatedDesk.DN}},
		},
		HomeSites: []ldapschema.HomeSite{
			{DN: dit.HomeSite(alice.DN, dit.Entitlement("Desk")), UserDN: alice.DN, EntitlementDN: dit.Entitlement("Desk"),
				SiteDN: dit.Site("UK")},
			{DN: dit.HomeSite(dit.Group("Sales"), ""), GroupDN: dit.Group("Sales"), SiteDN: dit.Site("US")},
		},
		Users: []ldapschema.User{alice},
		Groups: []ldapschema.Group{
			{DN: dit.Group("Sales"), Name: "Sales", Members: []string{alice.DN}},
			{DN: dit.Group("Staff"), Name: "Staff", Members: []string{dit.Group("Sales")}},
		},
		Computers: []ldapschema.Computer{{DN: dit.Computer("laptop"), Name: "laptop"}},
		Sessions: []ldapschema.Session{{DN: dit.Session("s1"), ID: "s1", UserDN: alice.DN, EntitlementDN: dit.Entitlement("Desk"),
			PodDN: dit.Pod("uk-pod"), BrokeringPodDN: dit.Pod("us-pod"), PoolDN: desk.DN, ClientDN: dit.Computer("laptop"),
			State: ldapschema.StateConnected}},
		Assignments: []ldapschema.Assignment{{DN: dit.Assignment(alice.DN, dit.Entitlement("Dedicated")), UserDN: alice.DN,
			EntitlementDN: dit.Entitlement("Dedicated"), PodDN: dit.Pod("uk-pod")}},
	}
}

func TestCleanFederationHasNoFindings(t *testing.T) {
	if got := Run(clean()); len(got) != 0 {
		t.Fatalf("findings on the clean federation: %+v", got)
	}
}

// TestFindingClasses has one row per finding class: a change to the clean
// federation that must produce it.
func TestFindingClasses(t *testing.T) {
	ge := func(d *Data, name string) *ldapschema.Entitlement {
		for i := range d.Entitlements {
			if d.Entitlements[i].Name == name {
				return &d.Entitlements[i]
			}
		}
		panic(name)
	}
	tests := []struct {
		name    string
		edit    func(d *Data)
		kind    string
		object  string
		check   string
		message string
		fix     string
	}{
		{"unreadable value", func(d *Data) {
			d.Unreadable = append(d.Unreadable, Unreadable{DN: dit.Pool("uk-pod", "uk-desk"), Reason: `pae-Capacity="ten" is not an integer`})
		}, objkind.Pool, "uk-desk", CheckUnreadable, "is not an integer", "ldapmodify"},
		{"duplicate pool names across pods", func(d *Data) {
			d.Pools = append(d.Pools, ldapschema.Pool{DN: dit.Pool("us-pod", "UK-desk"), Name: "UK-desk", Pod: "us-pod",
				Kind: ldapschema.KindDesktop, Enabled: true})
		}, objkind.Pool, "uk-desk", CheckDuplicateName, `2 pools are named "uk-desk"`, "delete all but one"},
		{"pool sessions above capacity", func(d *Data) { d.Pools[0].Sessions = 11 }, objkind.Pool, "uk-desk", CheckOverCapacity,
			"11 sessions are above the pool's capacity of 10", "cpactl pool update uk-desk --sessions N"},
		{"dedicated pool assigned above capacity", func(d *Data) { d.Pools[1].Assigned = 6 }, objkind.Pool, "uk-ded", CheckOverCapacity,
			"6 assigned machines are above the pool's capacity of 5", "--capacity N"},
		{"host sessions above the farm's limit", func(d *Data) { d.Farms[0].MaxSessionsPerHost = 4; d.Hosts[0].Sessions = 5 },
			objkind.Host, "rds1", CheckOverCapacity, "5 sessions are above farm us-farm's limit of 4 per host", "cpactl host update rds1 --sessions N"},
		{"dangling pod site", func(d *Data) { d.Pods[0].SiteDN = dit.Site("Mars") }, objkind.Pod, "uk-pod", CheckDangling,
			`pae-SiteDN names site "Mars", which does not exist`, "cpactl pod update uk-pod --site SITE"},
		{"reference to the wrong kind", func(d *Data) { d.Pools[2].FarmDN = dit.Pool("us-pod", "us-apps") }, objkind.Pool, "us-apps",
			CheckDangling, `pae-FarmDN names "us-apps", which is a pool, not a farm`, "--farm FARM"},
		{"dangling GE member", func(d *Data) { ge(d, "Apps").Members = append(ge(d, "Apps").Members, dit.User("ghost")) },
			objkind.Entitlement, "Apps", CheckDangling, `member names user or group "ghost"`,
			"cpactl entitlement remove-member Apps --user ghost"},
		{"dangling GE pool", func(d *Data) { ge(d, "Apps").PoolDNs = append(ge(d, "Apps").PoolDNs, dit.Pool("us-pod", "gone")) },
			objkind.Entitlement, "Apps", CheckDangling, `pae-EntitlementPoolDN names pool "gone"`, "cpactl entitlement remove-pool Apps gone"},
		{"dangling session host", func(d *Data) { d.Sessions[0].HostDN = dit.Host("us-pod", "us-farm", "rds9") }, objkind.Session, "s1",
			CheckDangling, `pae-HostDN names rds host "rds9"`, "cpactl session end s1"},
		{"dangling assignment pod", func(d *Data) { d.Assignments[0].PodDN = dit.Pod("gone") }, objkind.Assignment, "alice / Dedicated",
			CheckDangling, `pae-PodDN names pod "gone"`, "cpactl assignment delete --user alice --entitlement Dedicated"},
		{"dangling home-site site", func(d *Data) { d.HomeSites[1].SiteDN = dit.Site("Atlantis") }, objkind.HomeSiteRow, "group Sales",
			CheckDangling, `site "Atlantis", which does not exist`, "cpactl homesite unset --group Sales"},
		{"dangling group member", func(d *Data) { d.Groups[0].Members = append(d.Groups[0].Members, dit.Computer("gone")) },
			objkind.Group, "Sales", CheckDangling, `names user or group or computer "gone"`, "cpactl group remove-member Sales gone"},
		{"preferred site missing", func(d *Data) { d.Sites[0].PreferredRaw = ldapschema.EncodePreferredSites([]string{"US", "Mars"}) },
			objkind.Site, "UK", CheckPreferredMissing, `preferred site "Mars" (rank 1) does not exist`, "cpactl site preferred UK --set"},
		{"preferred site names itself", func(d *Data) { d.Sites[0].PreferredRaw = ldapschema.EncodePreferredSites([]string{"uk"}) },
			objkind.Site, "UK", CheckPreferredSelf, "names the site itself (rank 0)", "cpactl site preferred UK --set"},
		{"preferred site twice", func(d *Data) { d.Sites[1].PreferredRaw = []string{"{0}UK", "{1}uk"} },
			objkind.Site, "US", CheckPreferredDuplicate, `preferred site "uk" is listed more than once`, "cpactl site preferred US --set"},
		{"preferred ranks with a gap", func(d *Data) { d.Sites[1].PreferredRaw = []string{"{1}UK"} },
			objkind.Site, "US", CheckPreferredRanks, "ranks are not 0..0 without gaps: {1}UK", "cpactl site preferred US --set"},
		{"ignore-high-load without a policy", func(d *Data) { ge(d, "Desk").LoadDistribution = ldapschema.PolicyNone },
			objkind.Entitlement, "Desk", CheckIgnoreHighLoadWithoutPolicy, "needs a load distribution policy",
			"cpactl entitlement update Desk --load-distribution load, or --load-distribution session, or --no-ignore-high-load-preferred-sites"},
		{"ignore-high-load without use-preferred-sites", func(d *Data) { ge(d, "Desk").UsePreferredSites = false },
			objkind.Entitlement, "Desk", CheckIgnoreHighLoadWithoutPrefer, "no effect without use-preferred-sites", "--use-preferred-sites"},
		{"use-preferred-sites on scope LOCAL", func(d *Data) { ge(d, "Desk").Scope = ldapschema.ScopeLocal },
			objkind.Entitlement, "Desk", CheckPreferredSitesScope, "no effect with scope LOCAL", "--scope ANY, or --no-use-preferred-sites"},
		{"require-home-site without use-home-site", func(d *Data) { g := ge(d, "Apps"); g.RequireHomeSite = true },
			objkind.Entitlement, "Apps", CheckRequireHomeSiteWithoutUse, "require-home-site needs use-home-site",
			"cpactl entitlement update Apps --use-home-site, or --no-require-home-site"},
		{"option not allowed on a dedicated GE", func(d *Data) { ge(d, "Dedicated").AutoClean = true },
			objkind.Entitlement, "Dedicated", CheckOptionNotAllowed, "multiple-session-auto-clean is for floating desktop",
			"--no-multiple-session-auto-clean"},
		{"pool in two GEs", func(d *Data) {
			g := ge(d, "Dedicated")
			g.Dedicated = false
			g.PoolDNs = []string{dit.Pool("uk-pod", "uk-desk")}
		}, objkind.Pool, "uk-desk", CheckPoolInTwoEntitlements, `pool uk-desk is in 2 entitlements (Dedicated, Desk)`,
			"cpactl entitlement remove-pool Desk uk-desk"},
		{"dedicated pool in a floating GE", func(d *Data) { d.Pools[0].Dedicated = true }, objkind.Entitlement, "Desk",
			CheckDedicatedFloatingMismatch, `pool uk-desk is dedicated, entitlement Desk is floating`, "remove-pool Desk uk-desk"},
		{"application pool in a desktop GE", func(d *Data) {
			ge(d, "Desk").PoolDNs = append(ge(d, "Desk").PoolDNs, dit.Pool("us-pod", "us-apps"))
		}, objkind.Entitlement, "Desk", CheckPoolTypeMismatch, `pool us-apps is an application pool`, "remove-pool Desk us-apps"},
		{"farm in another pod", func(d *Data) {
			d.Farms[0].DN, d.Farms[0].Pod = dit.Farm("uk-pod", "us-farm"), "uk-pod"
			d.Pools[2].FarmDN = d.Farms[0].DN
			d.Hosts[0].Pod = "uk-pod"
		}, objkind.Pool, "us-apps", CheckFarmInAnotherPod, `farm us-farm is in pod uk-pod, but pool us-apps is in pod us-pod`,
			"cpactl pool update us-apps --farm FARM"},
		{"farm threshold out of range", func(d *Data) { d.Farms[0].LoadIndexThreshold = 120 }, objkind.Farm, "us-farm", CheckOutOfRange,
			"host-load-index-threshold=120 is out of range", "cpactl farm update us-farm --host-load-index-threshold with a value 0..100"},
		{"host load index out of range", func(d *Data) { d.Hosts[0].LoadIndex = -5 }, objkind.Host, "rds1", CheckOutOfRange,
			"load-index=-5 is out of range", "cpactl host update rds1 --load-index"},
		{"setting out of range", func(d *Data) {
			d.Settings.Stored = map[string]int{ldapschema.AttrLoadThresholdForSite: 150}
		}, objkind.Settings, ldapschema.AttrLoadThresholdForSite, CheckOutOfRange, "pae-LoadThresholdForSite=150 is out of range",
			"cpactl settings set pae-LoadThresholdForSite=VALUE"},
		{"entitled users without a pool: no pools", func(d *Data) { ge(d, "Apps").PoolDNs = nil }, objkind.Entitlement, "Apps",
			CheckEntitledUsersWithoutPool, "1 entitled user(s) cannot reach any pool (alice): the entitlement has no pools",
			"cpactl entitlement add-pool Apps POOL"},
		{"entitled users without a pool: the only host disabled", func(d *Data) { d.Hosts[0].Enabled = false }, objkind.Entitlement, "Apps",
			CheckEntitledUsersWithoutPool, "us-apps's farm us-farm has no enabled host", "make one of its pools usable"},
		{"entitled users without a pool: tags match no server", func(d *Data) { ge(d, "Desk").Tags = []string{"dmz"} },
			objkind.Entitlement, "Desk", CheckEntitledUsersWithoutPool, "its restriction tags (dmz) match no connection server", "--no-tags"},
		{"entitled users without a pool: pod offline", func(d *Data) { d.Pods[0].Online = false }, objkind.Entitlement, "Desk",
			CheckEntitledUsersWithoutPool, "uk-desk's pod uk-pod is offline", "add-pool Desk"},
		{"home-site override of a user not entitled", func(d *Data) { ge(d, "Desk").Members = nil }, objkind.HomeSiteRow,
			"user alice for entitlement Desk", CheckHomeSiteOverrideNotEntitled, `not entitled to it`,
			"cpactl entitlement add-member Desk --user alice, or cpactl homesite unset --user alice --entitlement Desk"},
		{"entitled users without a home site: no row", func(d *Data) { ge(d, "Desk").RequireHomeSite = true; d.HomeSites = nil },
			objkind.Entitlement, "Desk", CheckEntitledUsersWithoutHome,
			"1 entitled user(s) have no home site, and the entitlement requires one: resolve denies them (alice)",
			"cpactl homesite set --user USER (or --group GROUP) --site SITE, or cpactl entitlement update Desk --no-require-home-site"},
		{"entitled users without a home site: the group's row names no site", func(d *Data) {
			ge(d, "Desk").RequireHomeSite = true
			d.HomeSites = d.HomeSites[1:]
			d.HomeSites[0].SiteDN = dit.Site("Atlantis")
		}, objkind.Entitlement, "Desk", CheckEntitledUsersWithoutHome, "(alice)", "--no-require-home-site"},
		{"entitled users without a home site: another GE's override", func(d *Data) {
			ge(d, "Apps").UseHomeSite, ge(d, "Apps").RequireHomeSite = true, true
			d.HomeSites = d.HomeSites[:1] // alice's override is for Desk
		}, objkind.Entitlement, "Apps", CheckEntitledUsersWithoutHome, "(alice)", "update Apps --no-require-home-site"},
		{"client restrictions without a computer", func(d *Data) { ge(d, "Apps").ClientRestrictions = true }, objkind.Entitlement, "Apps",
			CheckClientRestrictionsNoClient, "1 entitled user(s) are refused on every client: the entitlement has client restrictions and no client computer is in a group entitled to it (alice)",
			"cpactl entitlement update Apps --no-client-restrictions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := clean()
			tt.edit(&d)
			findings := Run(d)
			for _, f := range findings {
				if f.Check == tt.check && f.Kind == tt.kind && f.Object == tt.object &&
					strings.Contains(f.Message, tt.message) && strings.Contains(f.Fix, tt.fix) {
					return
				}
			}
			t.Fatalf("no %s finding on %s %q saying %q with fix %q; got:\n%s", tt.check, tt.kind, tt.object, tt.message, tt.fix,
				dump(findings))
		})
	}
}

func dump(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(f.Kind + " | " + f.Object + " | " + f.Check + " | " + f.Message + " | " + f.Fix + "\n")
	}
	return b.String()
}

func TestFindingsAreSorted(t *testing.T) {
	d := clean()
	d.Farms[0].LoadIndexThreshold = 120
	d.Pods[0].SiteDN = ""
	d.Sites[0].PreferredRaw = []string{"{0}Mars"}
	fs := Run(d)
	for i := 1; i < len(fs); i++ {
		if fs[i-1].Kind > fs[i].Kind {
			t.Fatalf("not sorted by kind:\n%s", dump(fs))
		}
	}
}

// TestHomeSiteAndClientCoveredAreClean: the rows and computers that do
// let resolve through leave the new rules silent.
func TestHomeSiteAndClientCoveredAreClean(t *testing.T) {
	for _, tc := range []struct {
		rule string
		edit func(d *Data)
	}{
		{"the user's own override", func(d *Data) { d.Entitlements[0].RequireHomeSite = true; d.HomeSites = d.HomeSites[:1] }},
		{"an immediate group's global row", func(d *Data) { d.Entitlements[0].RequireHomeSite = true; d.HomeSites = d.HomeSites[1:] }},
		{"a disabled entitlement", func(d *Data) {
			d.Entitlements[0].RequireHomeSite, d.Entitlements[0].Enabled = true, false
			d.HomeSites = nil
		}},
		{"require without use (its own finding)", func(d *Data) {
			d.Entitlements[1].RequireHomeSite = true
			d.HomeSites = nil
		}},
		{"a computer in an entitled group", func(d *Data) {
			d.Entitlements[0].ClientRestrictions = true
			d.Groups[0].Members = append(d.Groups[0].Members, dit.Computer("laptop"))
		}},
		{"client restrictions on a dedicated GE do not apply", func(d *Data) { d.Entitlements[2].ClientRestrictions = true }},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			d := clean()
			tc.edit(&d)
			for _, f := range Run(d) {
				if f.Check == CheckEntitledUsersWithoutHome || f.Check == CheckClientRestrictionsNoClient {
					t.Errorf("unexpected finding: %+v", f)
				}
			}
		})
	}
}
