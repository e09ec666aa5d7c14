package horizonimport_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/horizonimport"
	"github.com/cpactl/cpactl/ldapschema"
)

var dit = ldapschema.DIT{Base: ldapschema.DefaultBase}

// SIDs of the test federation.
const (
	sidAlice     = "S-1-5-21-1-1101"
	sidBob       = "S-1-5-21-1-1102"
	sidAliceEMEA = "S-1-5-21-2-1101"
	sidSales     = "S-1-5-21-1-1201"
	sidSupport   = "S-1-5-21-1-1202"
	sidAll       = "S-1-5-21-1-1203"
)

// testFederation is a pull holding one or more records of every endpoint
// and every case of docs/horizon.md's mapping; change it before done().
func testFederation(t testing.TB) *fakePull {
	p := newFakePull(t)
	p.pod("p1", "pod-1", "sA")
	p.pod("p2", "pod-2", "sB")
	p.pod("p3", "pod-3", "sC")
	p.object("cpa", obj{"name": "fed", "local_connection_server_status": "ENABLED",
		"site_redirection_settings": obj{"site_redirection_enabled": true, "site_redirection_enabled_without_sso": false}})
	p.add("sites", "",
		obj{"id": "sA", "name": "A", "description": "site A", "site_url": "https://a.example.com/", "preferred_sites": []string{"sC", "sB"}},
		obj{"id": "sB", "name": "B", "preferred_sites": []string{}},
		obj{"id": "sC", "name": "C", "preferred_sites": []string{"sA", "sGone"}})
	p.add("pods", "",
		obj{"id": "p1", "name": "pod-1", "site_id": "sA", "description": "first"},
		obj{"id": "p2", "name": "pod-2", "site_id": "sB"},
		obj{"id": "p3", "name": "pod-3", "site_id": "sC"})
	p.add("monitor-pods", "",
		obj{"id": "p2", "name": "pod-2", "endpoints": []obj{{"name": "cs2", "enabled": true, "status": "OFFLINE"}, {"name": "cs2b", "enabled": false, "status": "ONLINE"}}},
		obj{"id": "p3", "name": "pod-3", "endpoints": []obj{{"name": "cs3", "enabled": true, "status": "OFFLINE"}, {"name": "cs3b", "enabled": true, "status": "SLEEPY"}}})
	p.add("ad-users-or-groups", "",
		obj{"id": sidAlice, "group": false, "login_name": "alice", "domain": "corp.example.com", "domain_net_biosname": "CORP",
			"name": "Alice Martin", "group_membership_ids": []string{sidSales, "S-1-5-21-1-513"}},
		obj{"id": sidBob, "group": false, "login_name": "bob", "domain": "corp.example.com", "first_name": "Bob", "last_name": "Singh",
			"group_membership_ids": []string{sidSupport}},
		obj{"id": sidAliceEMEA, "group": false, "login_name": "Alice", "domain_net_biosname": "EMEA", "name": "Alice Other"},
		obj{"id": sidSales, "group": true, "login_name": "Sales", "domain_net_biosname": "CORP", "description": "sales agents",
			"group_membership_ids": []string{sidAll}},
		obj{"id": sidSupport, "group": true, "login_name": "Support", "domain_net_biosname": "CORP"},
		obj{"id": sidAll, "group": true, "login_name": "Everyone Here", "domain_net_biosname": "CORP"})
	p.add("global-desktop-entitlements", "",
		obj{"id": "gd1", "name": "Desk", "description": "floating", "enabled": true, "dedicated": false, "scope": "ALL_SITES",
			"use_home_site": true, "require_home_site": false, "use_preferred_sites": true, "ignore_preferred_sites_with_high_load": true,
			"session_distribution_policy": "LOAD", "multiple_session_auto_clean": true, "allow_multiple_sessions_per_user": true,
			"cs_restriction_tags": []string{"b", "a"}, "enable_client_restrictions": false, "default_display_protocol": "BLAST"},
		obj{"id": "gd2", "name": "Dedicated Desk", "enabled": false, "dedicated": true, "scope": "WITHIN_SITE",
			"session_distribution_policy": "SESSION", "default_display_protocol": "ULTRA", "backup_gde_id": "gd1",
			"use_preferred_sites": false, "ignore_preferred_sites_with_high_load": false},
		obj{"id": "gd3", "name": "Odd", "enabled": true, "dedicated": false, "scope": "ALL_GALAXIES",
			"session_distribution_policy": "NONE", "default_display_protocol": "PCOIP"})
	p.add("global-application-entitlements", "",
		obj{"id": "ga1", "name": "Apps", "enabled": true, "scope": "WITHIN_POD", "session_distribution_policy": "NONE",
			"default_display_protocol": "PCOIP", "backup_gae_id": "ga2", "enable_client_restrictions": true},
		obj{"id": "ga2", "name": "Apps Two", "enabled": true, "scope": "ALL_SITES", "session_distribution_policy": "LOAD",
			"default_display_protocol": "BLAST"})
	p.add("desktop-entitlement-members", "",
		obj{"id": "gd1", "ad_user_or_group_ids": []string{sidSales, sidAlice}},
		obj{"id": "gd2", "ad_user_or_group_ids": []string{sidBob, "S-1-5-21-9-9999"}})
	p.add("application-entitlement-members", "", obj{"id": "ga1", "ad_user_or_group_ids": []string{sidBob}})
	p.add("home-sites", "",
		obj{"id": "h1", "ad_user_or_group_id": sidAlice, "group": false, "site_id": "sB"},
		obj{"id": "h2", "ad_user_or_group_id": sidSales, "group": true, "global_desktop_entitlement_id": "gd1", "site_id": "sC"},
		obj{"id": "h3", "ad_user_or_group_id": sidBob, "group": false, "global_application_entitlement_id": "ga1", "site_id": "sA"})
	p.add("pod-assignments", "",
		obj{"id": "a1", "user_id": sidBob, "global_desktop_entitlement_id": "gd2", "pod_id": "p1"})
	p.add("federation-access-groups", "", obj{"id": "fag", "name": "Root"})

	p.add("connection-servers", "p1", obj{"id": "c1", "name": "cs1", "tags": []string{"z", "y"}})
	p.add("farms", "p1",
		obj{"id": "f1", "name": "farm-1", "description": "apps", "max_session_type": "LIMITED", "max_sessions_per_rds_server": 7,
			"load_balancer_settings": obj{"load_index_threshold": 80, "connecting_session_threshold": 30}},
		obj{"id": "f2", "name": "farm-2", "max_session_type": "UNLIMITED", "max_sessions_per_rds_server": 99})
	p.add("rds-servers", "p1",
		obj{"id": "r1", "name": "host-1", "farm_id": "f1", "enabled": true, "load_index": 55, "session_count": 3, "state": "AVAILABLE"},
		obj{"id": "r2", "name": "host-2", "farm_id": "f1", "enabled": false, "load_index": 0, "session_count": 0, "state": "AGENT_UNREACHABLE"},
		obj{"id": "r3", "name": "host-3", "farm_id": "f2", "enabled": true, "load_index": 101, "session_count": 0, "state": "AVAILABLE"})
	p.add("desktop-pool-metrics", "p1",
		obj{"id": "dp1", "num_machines": 50, "occupancy_count": 20, "num_connected_sessions": 15, "num_disconnected_sessions": 5},
		obj{"id": "dp2", "num_machines": 10, "occupancy_count": 8, "num_connected_sessions": 3, "num_disconnected_sessions": 1})
	p.add("desktop-pools", "p1",
		obj{"id": "dp1", "name": "desk-1", "description": "floating desktops", "enabled": true, "type": "AUTOMATED",
			"user_assignment": "FLOATING", "global_desktop_entitlement_id": "gd1", "num_machines": 48},
		obj{"id": "dp2", "name": "desk-2", "enabled": true, "type": "MANUAL", "user_assignment": "DEDICATED",
			"global_desktop_entitlement_id": "gd2"},
		obj{"id": "rp1", "name": "rds-desk", "enabled": false, "type": "RDS", "farm_id": "f2", "global_desktop_entitlement_id": "gd3"},
		obj{"id": "dp3", "name": "desk-3", "enabled": true, "type": "AUTOMATED", "user_assignment": "FLOATING",
			"num_machines": 12, "num_sessions": 4})
	p.add("application-pools", "p1",
		obj{"id": "ap1", "name": "notepad", "enabled": true, "farm_id": "f1", "global_application_entitlement_id": "ga1"},
		obj{"id": "ap2", "name": "calc", "enabled": true, "desktop_pool_id": "dp1", "global_application_entitlement_id": "ga2"})
	p.add("machines", "p1", obj{"id": "m1", "name": "desk-2-m1", "desktop_pool_id": "dp2", "user_ids": []string{sidBob}})
	p.add("global-sessions", "p1",
		obj{"id": "s1", "user_id": sidAlice, "global_desktop_entitlement_id": "gd1", "pod_id": "p1", "brokering_pod_id": "p2",
			"desktop_pool_id": "dp1", "session_state": "CONNECTED", "session_type": "DESKTOP", "client_data": obj{"name": "PC-1"}},
		obj{"id": "s2", "user_id": sidBob, "global_application_entitlement_ids": []string{"ga1"}, "pod_id": "p1", "brokering_pod_id": "p1",
			"farm_id": "f1", "rds_server_id": "r1", "session_state": "DISCONNECTED", "session_type": "APPLICATION"})
	p.add("global-sessions", "p1",
		obj{"id": "s3", "user_id": sidAlice, "global_desktop_entitlement_id": "gd1", "pod_id": "p1", "session_state": "PENDING"},
		obj{"id": "s4", "user_id": sidBob, "global_application_entitlement_ids": []string{"ga1", "ga2"}, "pod_id": "p1",
			"farm_id": "f1", "session_state": "CONNECTED"})
	for _, pod := range []string{"p2", "p3"} {
		for _, e := range []string{"connection-servers", "farms", "rds-servers", "desktop-pools", "application-pools", "machines", "global-sessions"} {
			p.add(e, pod)
		}
	}
	p.add("connection-servers", "p2", obj{"id": "c2", "name": "cs2"})
	return p
}

// TestImportMapping: every mapping of docs/horizon.md, endpoint by
// endpoint, on a federation that has each case once.
func TestImportMapping(t *testing.T) {
	st, rep := importInto(t, testFederation(t).done(), nil)
	read := func(what string, got any, err error) any {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return got
	}
	check := func(what string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
		}
	}

	// cpa: site redirection; the thresholds the API lacks stay unset.
	settings, err := st.Settings()
	check("settings", read("settings", settings.Stored, err), map[string]int{ldapschema.AttrEnableSiteRedirection: 1})

	// sites: name, description, URL, preferred sites by name in the API's
	// order; an id the pull lacks is left out and reported.
	sites, err := st.Sites()
	read("sites", nil, err)
	type site struct{ Name, Description, URL, Preferred string }
	var gotSites []site
	for _, s := range sites {
		gotSites = append(gotSites, site{s.Name, s.Description, s.URL, strings.Join(s.PreferredSites, ",")})
	}
	check("sites", gotSites, []site{{"A", "site A", "https://a.example.com/", "C,B"}, {"B", "", "", ""}, {"C", "", "", "A"}})

	// pods: site, description; status from the monitor (every enabled
	// endpoint OFFLINE -> OFFLINE; an unknown status counts as up; the
	// answering pod, absent from the monitor, is up).
	pods, err := st.Pods()
	read("pods", nil, err)
	type pod struct {
		Name, Site, Description string
		Online                  bool
	}
	var gotPods []pod
	for _, p := range pods {
		gotPods = append(gotPods, pod{p.Name, p.Site, p.Description, p.Online})
	}
	check("pods", gotPods, []pod{{"pod-1", "A", "first", true}, {"pod-2", "B", "", false}, {"pod-3", "C", "", true}})

	// Connection Servers: tags, sorted.
	css, err := st.ConnectionServers()
	read("connection servers", nil, err)
	check("connection servers", len(css), 2)
	check("cs1 tags", css[0].Tags, []string{"y", "z"})

	// farms: LIMITED -> the per-host limit, UNLIMITED -> 0; the load
	// balancer's thresholds.
	farms, err := st.Farms()
	read("farms", nil, err)
	type farm struct {
		Name, Description          string
		Max, LoadIndex, Connecting int
	}
	var gotFarms []farm
	for _, f := range farms {
		gotFarms = append(gotFarms, farm{f.Name, f.Description, f.MaxSessionsPerHost, f.LoadIndexThreshold, f.ConnectingSessionThreshold})
	}
	check("farms", gotFarms, []farm{{"farm-1", "apps", 7, 80, 30}, {"farm-2", "", 0, 0, 0}})

	// RDS hosts: farm, enabled, load index, sessions; features and
	// connecting sessions at the defaults (no base); a load index out of
	// range is reported and left at 0.
	hosts, err := st.Hosts("")
	read("hosts", nil, err)
	type host struct {
		Name, Farm           string
		Enabled              bool
		Load, Sessions, Conn int
		Features             int
	}
	var gotHosts []host
	for _, h := range hosts {
		gotHosts = append(gotHosts, host{h.Name, h.Farm, h.Enabled, h.LoadIndex, h.Sessions, h.Connecting, len(h.Features)})
	}
	check("hosts", gotHosts, []host{{"host-1", "farm-1", true, 55, 3, 0, 5}, {"host-2", "farm-1", false, 0, 0, 0, 5}, {"host-3", "farm-2", true, 0, 0, 0, 5}})

	// pools: metrics -> capacity and sessions (floating) or assigned
	// (dedicated: sessions are connected + disconnected); without metrics
	// the pool's own counts; RDS pools on their farm; application pools
	// on their farm.
	pools, err := st.Pools()
	read("pools", nil, err)
	type pool struct {
		Name, Kind, Farm             string
		Dedicated, Enabled           bool
		Capacity, Sessions, Assigned int
	}
	var gotPools []pool
	for _, p := range pools {
		gotPools = append(gotPools, pool{p.Name, p.Kind, p.Farm, p.Dedicated, p.Enabled, p.Capacity, p.Sessions, p.Assigned})
	}
	check("pools", gotPools, []pool{
		{"desk-1", ldapschema.KindDesktop, "", false, true, 50, 20, 0},
		{"desk-2", ldapschema.KindDesktop, "", true, true, 10, 4, 8},
		{"desk-3", ldapschema.KindDesktop, "", false, true, 12, 4, 0},
		{"notepad", ldapschema.KindApplication, "farm-1", false, true, 0, 0, 0},
		{"rds-desk", ldapschema.KindRDSDesktop, "farm-2", false, false, 0, 0, 0},
	})

	// entitlements: scope ALL_SITES/WITHIN_SITE/WITHIN_POD ->
	// ANY/SITE/LOCAL, the policy, the protocol (ULTRA: BLAST, reported),
	// flags, tags sorted, members by DN (an unknown SID reported), pools,
	// a desktop backup by DN; an application backup is reported.
	ges, err := st.Entitlements()
	read("entitlements", nil, err)
	byName := map[string]ldapschema.Entitlement{}
	for _, g := range ges {
		byName[g.Name] = g
	}
	type ge struct {
		Type, Scope, Policy, Protocol                       string
		Enabled, Dedicated, Home, Pref, Ignore, Auto, Multi bool
		Tags, Members, Pools, Backup                        string
	}
	short := func(dns []string) string {
		var names []string
		for _, d := range dns {
			names = append(names, ldapschema.NameOf(d))
		}
		slices.Sort(names)
		return strings.Join(names, ",")
	}
	gotGE := map[string]ge{}
	for n, g := range byName {
		gotGE[n] = ge{g.Type, g.Scope, g.LoadDistribution, g.DefaultProtocol, g.Enabled, g.Dedicated, g.UseHomeSite,
			g.UsePreferredSites, g.IgnoreHighLoad, g.AutoClean, g.MultipleSessionsPerUser,
			strings.Join(g.Tags, ","), short(g.Members), short(g.PoolDNs), ldapschema.NameOf(g.BackupDN)}
	}
	check("entitlements", gotGE, map[string]ge{
		"Desk":           {"DESKTOP", "ANY", "LOAD", "BLAST", true, false, true, true, true, true, true, "a,b", "Sales,alice", "desk-1", ""},
		"Dedicated Desk": {"DESKTOP", "SITE", "SESSION", "BLAST", false, true, false, false, false, false, false, "", "bob", "desk-2", "Desk"},
		"Odd":            {"DESKTOP", "ANY", "NONE", "PCOIP", true, false, false, false, false, false, false, "", "", "rds-desk", ""},
		"Apps":           {"APPLICATION", "LOCAL", "NONE", "PCOIP", true, false, false, false, false, false, false, "", "bob", "notepad", ""},
		"Apps Two":       {"APPLICATION", "ANY", "LOAD", "BLAST", true, false, false, false, false, false, false, "", "", "", ""},
	})
	if !byName["Apps"].ClientRestrictions {
		t.Error("Apps lost enable_client_restrictions")
	}

	// users: uid, NetBIOS domain, full name; alice of EMEA clashes with
	// alice of CORP (uids are unique in cpactl): reported.
	users, err := st.Users()
	read("users", nil, err)
	type user struct{ UID, Domain, FullName string }
	var gotUsers []user
	for _, u := range users {
		gotUsers = append(gotUsers, user{u.UID, u.Domain, u.FullName})
	}
	check("users", gotUsers, []user{{"alice", "CORP", "Alice Martin"}, {"bob", "corp.example.com", "Bob Singh"}})

	// groups: members from the members' group_membership_ids (users and
	// nested groups); a group the list lacks (513) names nothing.
	groups, err := st.Groups()
	read("groups", nil, err)
	gotGroups := map[string]string{}
	for _, g := range groups {
		gotGroups[g.Name] = g.Description + ":" + short(g.Members)
	}
	check("groups", gotGroups, map[string]string{"Everyone Here": ":Sales", "Sales": "sales agents:alice", "Support": ":bob"})

	// home sites: a user's global one, a group's for a desktop
	// entitlement, a user's for an application entitlement.
	hs, err := st.HomeSites("")
	read("home sites", nil, err)
	var gotHS []string
	for _, h := range hs {
		who := ldapschema.NameOf(h.UserDN) + ldapschema.NameOf(h.GroupDN)
		kind := "user"
		if h.GroupDN != "" {
			kind = "group"
		}
		gotHS = append(gotHS, fmt.Sprintf("%s %s %s -> %s", kind, who, ldapschema.NameOf(h.EntitlementDN), ldapschema.NameOf(h.SiteDN)))
	}
	slices.Sort(gotHS)
	check("home sites", gotHS, []string{"group Sales Desk -> C", "user alice  -> B", "user bob Apps -> A"})

	// pod assignments: the machine from the pod's machines.
	as, err := st.Assignments("")
	read("assignments", nil, err)
	check("assignments", len(as), 1)
	check("assignment", []string{ldapschema.NameOf(as[0].UserDN), ldapschema.NameOf(as[0].EntitlementDN), ldapschema.NameOf(as[0].PodDN), as[0].Machine},
		[]string{"bob", "Dedicated Desk", "pod-1", "desk-2-m1"})

	// sessions: state, pool (an application session's from its
	// entitlement and farm), host, brokering pod; PENDING reported and
	// left out; a client computer cpactl does not hold is reported.
	ss, err := st.Sessions("")
	read("sessions", nil, err)
	var gotSS []string
	for _, s := range ss {
		gotSS = append(gotSS, fmt.Sprintf("%s %s %s %s pod=%s broker=%s pool=%s host=%s client=%s", s.ID, s.State,
			ldapschema.NameOf(s.UserDN), ldapschema.NameOf(s.EntitlementDN), ldapschema.NameOf(s.PodDN),
			ldapschema.NameOf(s.BrokeringPodDN), ldapschema.NameOf(s.PoolDN), ldapschema.NameOf(s.HostDN), ldapschema.NameOf(s.ClientDN)))
	}
	slices.Sort(gotSS)
	check("sessions", gotSS, []string{
		"s1 CONNECTED alice Desk pod=pod-1 broker=pod-2 pool=desk-1 host= client=",
		"s2 DISCONNECTED bob Apps pod=pod-1 broker=pod-1 pool=notepad host=host-1 client=",
		"s4 CONNECTED bob Apps pod=pod-1 broker= pool=notepad host= client=",
	})

	// The report: what cpactl cannot hold, counted and named.
	for key, want := range map[string]string{
		"backup-application-entitlement":   "1 application entitlements name a backup (cpactl holds backups of desktop entitlements only): the backup is left out: Apps (backup ga2)",
		"unsupported-protocol":             "1 entitlements default to a display protocol cpactl does not model: the directory's protocol (or BLAST) is kept: entitlement Dedicated Desk (ULTRA)",
		"pending-session":                  "1 sessions are PENDING (cpactl holds CONNECTED and DISCONNECTED sessions): left out: session s3",
		"application-pool-on-desktop-pool": "1 application pools are on a desktop pool (cpactl holds application pools on RDS farms): left out: calc in pod pod-1",
		"unknown-enum":                     "2 values are unknown to this cpactl (a newer Horizon?): the directory's value (or the default) is kept: entitlement Odd: scope ALL_GALAXIES, pod pod-3: endpoint status SLEEPY",
		"host-state":                       "1 RDS hosts are in a state cpactl does not model (it holds the enabled flag only): imported with their enabled flag: host-2 (AGENT_UNREACHABLE)",
		"name-clash":                       "1 objects share a name cpactl keys them by (a user or group of the same name in two domains, ...): the first is kept, the others left out: user EMEA\\Alice",
		"dangling-reference":               "2 references name an object the pull does not hold: left out: entitlement Dedicated Desk: member S-1-5-21-9-9999, site C: preferred site sGone",
		"session-several-applications":     "1 sessions run applications of several entitlements (cpactl holds one entitlement a session): the first is kept: s4",
		"unknown-client-computer":          "1 sessions come from a client computer cpactl does not hold (client computers come from the directory): the client is left out: PC-1",
		"out-of-range":                     "1 values are outside the range cpactl takes: the directory's value (or the default) is kept: RDS host host-3 in farm farm-2: load_index 101",
	} {
		f, ok := rep.Finding(key)
		if !ok {
			t.Errorf("no finding %s", key)
			continue
		}
		check("finding "+key, f.String(), want)
	}
	if len(rep.Findings) != 11 {
		t.Errorf("%d findings, want 11: %v", len(rep.Findings), rep.Findings)
	}
	check("counts", rep.Summary(), "3 sites, 3 pods, 2 connection servers, 5 pools, 2 farms, 3 hosts, 5 entitlements, 2 users, 3 groups, 3 home sites, 1 assignment, 3 sessions")
	check("source", rep.Source, horizonimport.DefaultsSource)
}

// TestImportKeepsTheBase: what the API does not carry comes from the
// base, never invented and never wiped: the four pae-* thresholds, a
// pod's RDS values, a host's connecting sessions, features and policy
// thresholds, a Connection Server's description, client computers and
// the groups that hold them, the default protocol where Horizon's is
// ULTRA; a session's client is a computer the base holds.
func TestImportKeepsTheBase(t *testing.T) {
	p := testFederation(t)
	seven, three := 7, 3
	podA := ldapschema.Pod{Name: "pod-1", SiteDN: dit.Site("A"), Online: false, RDS: map[string]int{ldapschema.AttrMinRDSServersInLBQueue: 2}}
	farm := ldapschema.Farm{Name: "farm-1"}
	host := ldapschema.Host{Name: "host-1", LoadIndex: 1, Connecting: 4, Features: []string{"RDP", "BLAST"}, Enabled: true,
		PolicyLoadIndexThreshold: &seven, PolicyConnectingSessionThreshold: &three}
	desk := ldapschema.Entitlement{Name: "Dedicated Desk", Type: ldapschema.TypeDesktop, Scope: ldapschema.ScopeAny,
		LoadDistribution: ldapschema.PolicyNone, DefaultProtocol: ldapschema.ProtocolRDP, Enabled: true}
	base := baseOf(t, "the snapshot base.ldif",
		settingsRecord(map[string]int{ldapschema.AttrLoadThresholdForSite: 90, ldapschema.AttrRDSLoadIndexThreshold: 30, ldapschema.AttrEnableSiteRedirection: 0}),
		record{dit.Site("A"), ldapschema.Site{Name: "A"}.Attrs()},
		record{dit.Pod("pod-1"), podA.Attrs()},
		record{dit.ConnectionServer("pod-1", "cs1"), ldapschema.ConnectionServer{Name: "cs1", Description: "the first"}.Attrs()},
		record{dit.Farm("pod-1", "farm-1"), farm.Attrs()},
		record{dit.Host("pod-1", "farm-1", "host-1"), host.Attrs()},
		record{dit.Entitlement("Dedicated Desk"), desk.Attrs()},
		record{dit.Computer("PC-1"), ldapschema.Computer{Name: "PC-1", Description: "kiosk"}.Attrs()},
		record{dit.Group("SALES"), ldapschema.Group{Name: "SALES", Members: []string{dit.Computer("PC-1")}}.Attrs()},
	)
	st, rep := importInto(t, p.done(), base)
	settings, err := st.Settings()
	if err != nil {
		t.Fatal(err)
	}
	// Site redirection is Horizon's (true), the thresholds the base's.
	want := map[string]int{ldapschema.AttrLoadThresholdForSite: 90, ldapschema.AttrRDSLoadIndexThreshold: 30, ldapschema.AttrEnableSiteRedirection: 1}
	if !reflect.DeepEqual(settings.Stored, want) {
		t.Errorf("settings %v, want %v", settings.Stored, want)
	}
	pod, err := st.Pod("pod-1")
	if err != nil || !pod.Online || pod.RDS[ldapschema.AttrMinRDSServersInLBQueue] != 2 {
		t.Errorf("pod-1: %+v %v (the status is Horizon's, the RDS values the base's)", pod, err)
	}
	cs, err := st.ConnectionServer("cs1")
	if err != nil || cs.Description != "the first" {
		t.Errorf("cs1: %+v %v", cs, err)
	}
	h, err := st.Host("host-1")
	if err != nil || h.Connecting != 4 || !reflect.DeepEqual(slices.Sorted(slices.Values(h.Features)), []string{"BLAST", "RDP"}) || h.LoadIndex != 55 ||
		h.PolicyLoadIndexThreshold == nil || *h.PolicyLoadIndexThreshold != 7 || *h.PolicyConnectingSessionThreshold != 3 {
		t.Errorf("host-1: %+v %v", h, err)
	}
	g, err := st.Entitlement("Dedicated Desk")
	if err != nil || g.DefaultProtocol != ldapschema.ProtocolRDP {
		t.Errorf("Dedicated Desk: %+v %v (ULTRA keeps the base's protocol)", g, err)
	}
	c, err := st.Computer("PC-1")
	if err != nil || c.Description != "kiosk" {
		t.Errorf("PC-1: %+v %v", c, err)
	}
	sales, err := st.Group("Sales")
	if err != nil || !slices.Contains(sales.Members, dit.Computer("PC-1")) || !slices.Contains(sales.Members, dit.User("alice")) {
		t.Errorf("Sales: %+v %v", sales, err)
	}
	ss, err := st.Sessions("")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		if s.ID == "s1" && !ldapschema.EqualDN(s.ClientDN, dit.Computer("PC-1")) {
			t.Errorf("s1's client %q, want PC-1", s.ClientDN)
		}
	}
	if _, ok := rep.Finding("unknown-client-computer"); ok || rep.Source != "the snapshot base.ldif" {
		t.Errorf("report: %+v", rep)
	}
}

// TestImportLeavesUnsetFeaturesUnset: a host whose entry in the base
// holds no pae-HostFeature (every feature) is imported without one, as a
// host the base lacks is: a sync right after an import and apply changes
// nothing (it showed +BLAST, +MULTISESSION, ... on every such host).
func TestImportLeavesUnsetFeaturesUnset(t *testing.T) {
	p := testFederation(t)
	host := ldapschema.Host{Name: "host-1", LoadIndex: 1, Enabled: true} // no features: unset
	base := baseOf(t, "the snapshot base.ldif",
		record{dit.Site("A"), ldapschema.Site{Name: "A"}.Attrs()},
		record{dit.Pod("pod-1"), ldapschema.Pod{Name: "pod-1", SiteDN: dit.Site("A")}.Attrs()},
		record{dit.Farm("pod-1", "farm-1"), ldapschema.Farm{Name: "farm-1"}.Attrs()},
		record{dit.Host("pod-1", "farm-1", "host-1"), host.Attrs()},
	)
	st, _ := importInto(t, p.done(), base)
	h, err := st.Host("host-1")
	if err != nil || !h.FeaturesDefault {
		t.Errorf("host-1: %+v %v: want no pae-HostFeature value (unset in the base)", h, err)
	}
	hosts, err := st.Hosts("")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hosts {
		if !h.FeaturesDefault {
			t.Errorf("host %s: features %v set, want unset (neither Horizon nor the base sets them)", h.Name, h.Features)
		}
	}
}

// TestImportOlderServer: without v3 sites and the v7 flags (a server
// before 2512), preferred sites and the entitlements' preferred-site flags
// come from the base, and so does site redirection without the v2 CPA.
func TestImportOlderServer(t *testing.T) {
	p := newFakePull(t)
	p.m.PreferredSites = false
	p.pod("p1", "pod-1", "sA")
	p.add("sites", "", obj{"id": "sA", "name": "A"}, obj{"id": "sB", "name": "B"})
	p.add("pods", "", obj{"id": "p1", "name": "pod-1", "site_id": "sA"})
	p.add("global-desktop-entitlements", "", obj{"id": "gd1", "name": "Desk", "scope": "ALL_SITES",
		"session_distribution_policy": "LOAD", "default_display_protocol": "BLAST"})
	p.add("global-application-entitlements", "")
	base := baseOf(t, "the directory",
		settingsRecord(map[string]int{ldapschema.AttrEnableSiteRedirection: 1}),
		record{dit.Site("A"), ldapschema.Site{Name: "A", PreferredSites: []string{"B", "Gone"}}.Attrs()},
		record{dit.Entitlement("Desk"), ldapschema.Entitlement{Name: "Desk", Type: ldapschema.TypeDesktop, Scope: ldapschema.ScopeAny,
			LoadDistribution: ldapschema.PolicyLoad, DefaultProtocol: ldapschema.ProtocolBlast, UsePreferredSites: true, IgnoreHighLoad: true}.Attrs()},
	)
	st, rep := importInto(t, p.done(), base)
	a, err := st.Site("A")
	if err != nil || !reflect.DeepEqual(a.PreferredSites, []string{"B"}) {
		t.Errorf("site A: %+v %v", a, err)
	}
	g, err := st.Entitlement("Desk")
	if err != nil || !g.UsePreferredSites || !g.IgnoreHighLoad {
		t.Errorf("Desk: %+v %v", g, err)
	}
	s, err := st.Settings()
	if err != nil || s.Stored[ldapschema.AttrEnableSiteRedirection] != 1 {
		t.Errorf("settings: %+v %v", s, err)
	}
	if len(rep.Notes) < 2 {
		t.Errorf("notes %v: want the fallbacks named", rep.Notes)
	}
}

// TestImportMissingPod: a pod the pull went without (--allow-missing-pod)
// keeps what the base holds below it, and its pools in their entitlements.
func TestImportMissingPod(t *testing.T) {
	p := testFederation(t)
	p.m.Pods[1].Missing = true
	bdesk := dit.Pool("pod-2", "b-desk")
	base := baseOf(t, "the directory",
		record{dit.Site("B"), ldapschema.Site{Name: "B"}.Attrs()},
		record{dit.Pod("pod-2"), ldapschema.Pod{Name: "pod-2", SiteDN: dit.Site("B"), Online: true}.Attrs()},
		record{dit.ConnectionServer("pod-2", "cs2"), ldapschema.ConnectionServer{Name: "cs2"}.Attrs()},
		record{bdesk, ldapschema.Pool{Name: "b-desk", Kind: ldapschema.KindDesktop, Capacity: 9, Enabled: true}.Attrs()},
		record{dit.Entitlement("Desk"), ldapschema.Entitlement{Name: "Desk", Type: ldapschema.TypeDesktop, Scope: ldapschema.ScopeAny,
			LoadDistribution: ldapschema.PolicyLoad, DefaultProtocol: ldapschema.ProtocolBlast, PoolDNs: []string{bdesk}}.Attrs()},
	)
	st, rep := importInto(t, p.done(), base)
	pool, err := st.Pool("b-desk")
	if err != nil || pool.Capacity != 9 {
		t.Errorf("b-desk: %+v %v", pool, err)
	}
	g, err := st.Entitlement("Desk")
	if err != nil || !slices.ContainsFunc(g.PoolDNs, func(d string) bool { return ldapschema.EqualDN(d, pool.DN) }) {
		t.Errorf("Desk's pools %v %v, want b-desk kept", g.PoolDNs, err)
	}
	if f, ok := rep.Finding("missing-pod-session"); !ok || f.Names[0] != "pod-2" {
		t.Errorf("report: %+v", rep.Findings)
	}
}

// TestImportRefusesADamagedPull: a file whose records are not what the
// endpoint answers, or whose count is not the manifest's, is an error and
// nothing is written.
func TestImportRefusesADamagedPull(t *testing.T) {
	for name, body := range map[string]string{
		"not an array":  `"sites"`,
		"wrong type":    `[{"id": 5, "name": "A"}]`,
		"short":         `[{"id": "sA", "name": "A"}`,
		"count differs": `[]`,
	} {
		t.Run(name, func(t *testing.T) {
			p := newFakePull(t)
			p.raw("sites", "", []byte(body), 1)
			var out strings.Builder
			_, err := horizonimport.WriteLDIF(p.done(), horizonimport.Options{DIT: dit}, &out)
			if err == nil || out.Len() != 0 {
				t.Errorf("err %v, %d bytes written", err, out.Len())
			}
		})
	}
}

// TestReadBaseEmpty: a directory without cpactl's layout is an empty base.
func TestReadBaseEmpty(t *testing.T) {
	snap, err := snapshot.ReadSnapshot(strings.NewReader("dn: " + dit.Base + "\nobjectClass: top\nobjectClass: domain\ndc: vdiglobal\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := horizonimport.ReadBase(directory.NewStore(snap, dit.Base), "x")
	if err != nil || len(b.Sites) != 0 {
		t.Errorf("%+v %v", b, err)
	}
}
