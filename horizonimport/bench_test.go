package horizonimport_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/horizonimport"
)

// syntheticPull writes a pull of a federation of the given size, its
// records shaped (and sized) as Horizon's 2512 answers: pods over sites,
// a floating desktop pool and an RDS farm with hosts and an application
// pool in each pod, entitlements, users in groups, and sessions spread
// over the pods in pages of 1,000.
func syntheticPull(tb testing.TB, pods, users, sessions int) string {
	p := newFakePull(tb)
	sites := max(pods/4, 1)
	var siteRecs, podRecs []any
	for s := range sites {
		pref := []string{}
		if sites > 1 {
			pref = []string{fmt.Sprintf("site-%02d", (s+1)%sites)}
		}
		siteRecs = append(siteRecs, obj{"id": fmt.Sprintf("site-%02d", s), "name": fmt.Sprintf("Site %02d", s), "description": "generated",
			"site_url": "https://site.example.com/", "pods": []string{}, "preferred_sites": pref})
	}
	for i := range pods {
		id := fmt.Sprintf("pod-%03d", i)
		p.pod(id, "Pod "+id, fmt.Sprintf("site-%02d", i%sites))
		podRecs = append(podRecs, obj{"id": id, "name": "Pod " + id, "site_id": fmt.Sprintf("site-%02d", i%sites), "local_pod": i == 0,
			"endpoints": []string{"cs-" + id}, "active_global_desktop_entitlements": []string{}, "cloud_managed": false})
	}
	p.add("sites", "", siteRecs...)
	p.add("pods", "", podRecs...)
	p.object("cpa", obj{"name": "fed", "site_redirection_settings": obj{"site_redirection_enabled": false, "site_redirection_enabled_without_sso": false}})
	sid := func(n int) string { return "S-1-5-21-1004336348-1177238915-682003330-" + strconv.Itoa(100000+n) }
	groups := max(users/50, 1)
	var ad []any
	for g := range groups {
		ad = append(ad, obj{"id": sid(1_000_000 + g), "group": true, "login_name": fmt.Sprintf("group-%04d", g), "name": fmt.Sprintf("group-%04d", g),
			"domain": "corp.example.com", "domain_net_biosname": "CORP", "group_membership_ids": []string{}})
	}
	for u := range users {
		ad = append(ad, obj{"id": sid(u), "group": false, "login_name": fmt.Sprintf("user%06d", u), "name": fmt.Sprintf("User %06d", u),
			"user_display_name": fmt.Sprintf("User %06d", u), "domain": "corp.example.com", "domain_net_biosname": "CORP",
			"user_principal_name": fmt.Sprintf("user%06d@corp.example.com", u), "email": fmt.Sprintf("user%06d@corp.example.com", u),
			"distinguished_name":   fmt.Sprintf("CN=User %06d,CN=Users,DC=corp,DC=example,DC=com", u),
			"group_membership_ids": []string{sid(1_000_000 + u%groups)}, "kiosk_user": false, "unauthenticated_user": false})
	}
	p.add("ad-users-or-groups", "", ad...)
	var ges, members []any
	for i := range pods {
		id := fmt.Sprintf("ge-%03d", i)
		ges = append(ges, obj{"id": id, "name": "Desktops " + id, "enabled": true, "dedicated": false, "scope": "ALL_SITES",
			"use_home_site": false, "require_home_site": false, "use_preferred_sites": true, "ignore_preferred_sites_with_high_load": false,
			"session_distribution_policy": "LOAD", "default_display_protocol": "BLAST", "supported_display_protocols": []string{"BLAST", "PCOIP"},
			"federated_access_group_id": "fag", "member_pods": []string{fmt.Sprintf("pod-%03d", i)}})
		members = append(members, obj{"id": id, "ad_user_or_group_ids": []string{sid(1_000_000 + i%groups)}})
	}
	p.add("global-desktop-entitlements", "", ges...)
	p.add("global-application-entitlements", "", obj{"id": "ga", "name": "Apps", "enabled": true, "scope": "ALL_SITES",
		"session_distribution_policy": "LOAD", "default_display_protocol": "BLAST"})
	p.add("desktop-entitlement-members", "", members...)
	p.add("application-entitlement-members", "", obj{"id": "ga", "ad_user_or_group_ids": []string{sid(1_000_000)}})
	for i := range pods {
		id := fmt.Sprintf("pod-%03d", i)
		p.add("connection-servers", id, obj{"id": "cs-" + id, "name": "cs-" + id, "tags": []string{}, "enabled": true})
		p.add("farms", id, obj{"id": "farm-" + id, "name": "farm-" + id, "max_session_type": "LIMITED", "max_sessions_per_rds_server": 20,
			"load_balancer_settings": obj{"load_index_threshold": 90, "connecting_session_threshold": 20}})
		var hosts []any
		for h := range 20 {
			hosts = append(hosts, obj{"id": fmt.Sprintf("rds-%s-%02d", id, h), "name": fmt.Sprintf("rds-%s-%02d", id, h), "farm_id": "farm-" + id,
				"enabled": true, "load_index": h * 4, "session_count": h, "state": "AVAILABLE"})
		}
		p.add("rds-servers", id, hosts...)
		p.add("desktop-pools", id, obj{"id": "dp-" + id, "name": "desk-" + id, "enabled": true, "type": "AUTOMATED", "user_assignment": "FLOATING",
			"global_desktop_entitlement_id": fmt.Sprintf("ge-%03d", i)})
		p.add("desktop-pool-metrics", id, obj{"id": "dp-" + id, "num_machines": 10000, "occupancy_count": sessions / pods})
		p.add("application-pools", id, obj{"id": "ap-" + id, "name": "app-" + id, "enabled": true, "farm_id": "farm-" + id,
			"global_application_entitlement_id": "ga"})
		p.add("machines", id)
		n := sessions / pods
		for page := 0; page*1000 < n || page == 0; page++ {
			var recs []any
			for k := page * 1000; k < min(n, (page+1)*1000); k++ {
				u := (i*n + k) % users
				recs = append(recs, obj{"id": fmt.Sprintf("5e55%04d-0000-4000-8000-%012d", i, k), "user_id": sid(u), "user_name": fmt.Sprintf("user%06d", u),
					"broker_user_id": sid(u), "global_desktop_entitlement_id": fmt.Sprintf("ge-%03d", i), "global_desktop_entitlement_name": "Desktops",
					"pod_id": id, "pod_name": "Pod " + id, "brokering_pod_id": id, "brokering_pod_name": "Pod " + id,
					"site_id": fmt.Sprintf("site-%02d", i%sites), "site_name": "Site", "desktop_pool_id": "dp-" + id,
					"desktop_pool_or_farm_name": "desk-" + id, "machine_id": fmt.Sprintf("vm-%d", k), "machine_or_rds_server_name": fmt.Sprintf("desk-%d", k),
					"machine_or_rds_server_dns_name": fmt.Sprintf("desk-%d.corp.example.com", k), "session_state": "CONNECTED",
					"session_type": "DESKTOP", "session_protocol": "BLAST", "start_time": 1767225600000 + k, "brokered_remotely": false,
					"resourced_remotely": false, "agent_version": "8.17.0",
					"client_data": obj{"name": fmt.Sprintf("client-%d", k), "address": "192.0.2.10", "type": "WINDOWS", "version": "8.17.0"}})
			}
			p.add("global-sessions", id, recs...)
		}
	}
	for _, e := range []string{"monitor-pods", "home-sites", "pod-assignments"} {
		p.add(e, "")
	}
	return p.done()
}

// benchPull is the pull the benchmarks read: CPACTL_BENCH_PULL (a pull
// directory, e.g. `cpactl generate --format horizon --preset cpa-max`),
// else one synthesized with CPACTL_BENCH_SESSIONS sessions (default
// 25,000; 250,000 is the CPA maximum) over 50 pods and 50,000 users.
func benchPull(b *testing.B) string {
	if dir := os.Getenv("CPACTL_BENCH_PULL"); dir != "" {
		return dir
	}
	sessions := 25_000
	if v, err := strconv.Atoi(os.Getenv("CPACTL_BENCH_SESSIONS")); err == nil && v > 0 {
		sessions = v
	}
	return syntheticPull(b, 50, 50_000, sessions)
}

// BenchmarkImportVsSiteListFrom measures, on the same federation, the
// import of its pull (horizon import to /dev/null) and what `site list
// --from` does with its LDIF (read the snapshot, list the sites): the
// target of issue 23 is import within 1.5x of site list --from. The LDIF
// is the import's own output.
func BenchmarkImportVsSiteListFrom(b *testing.B) {
	dir := benchPull(b)
	ldif := filepath.Join(b.TempDir(), "federation.ldif")
	f, err := os.Create(ldif)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := horizonimport.WriteLDIF(dir, horizonimport.Options{DIT: dit}, f); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	b.Run("import", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := horizonimport.WriteLDIF(dir, horizonimport.Options{DIT: dit}, io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("site-list-from", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			snap, err := snapshot.LoadSnapshot(ldif)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := directory.NewStore(snap, snap.Base()).Sites(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
