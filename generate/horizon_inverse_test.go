package generate_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"testing"

	"github.com/cpactl/cpactl/generate"
	"github.com/cpactl/cpactl/horizon"
	"github.com/cpactl/cpactl/ldapschema"
)

// The inverse of the generator's mapping, as docs/horizon.md states it
// field by field for `horizon import`: a pull directory read back into
// cpactl's records. TestHorizonIsTheSameFederation compares what it gives
// with the LDIF of the same configuration, kind by kind, for every field
// the API carries.

type pullReader struct {
	t   *testing.T
	dir string
	m   *horizon.Manifest
}

// each decodes every record of an endpoint (of one pod, or "" for the
// federation-wide reads) into a fresh value of T.
func each[T any](r pullReader, endpoint, pod string, fn func(T)) {
	r.t.Helper()
	for _, f := range r.m.FilesOf(endpoint, pod) {
		err := horizon.EachRecord(r.dir, f, func(raw json.RawMessage) error {
			var v T
			if err := json.Unmarshal(raw, &v); err != nil {
				return err
			}
			fn(v)
			return nil
		})
		if err != nil {
			r.t.Fatal(err)
		}
	}
}

// fromPull rebuilds, for each kind, one line per object ("key: fields"),
// as summarize does from the records of an LDIF.
func fromPull(t *testing.T, dir string) map[string][]string {
	m, err := horizon.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := pullReader{t: t, dir: dir, m: m}
	dit := ldapschema.DIT{Base: ldapschema.DefaultBase}
	out := map[string][]string{}
	add := func(kind, format string, args ...any) { out[kind] = append(out[kind], fmt.Sprintf(format, args...)) }

	// Sites and pods: ids to names.
	type site struct {
		ID, Name, Description string
		URL                   string   `json:"site_url"`
		Preferred             []string `json:"preferred_sites"`
	}
	siteName := map[string]string{}
	var sites []site
	each(r, "sites", "", func(s site) { siteName[s.ID] = s.Name; sites = append(sites, s) })
	for _, s := range sites {
		var pref []string
		for _, id := range s.Preferred {
			pref = append(pref, siteName[id])
		}
		add("sites", "%s: %q %q %v", s.Name, s.Description, s.URL, pref)
	}
	offline := map[string]bool{}
	each(r, "monitor-pods", "", func(p struct {
		ID        string
		Endpoints []struct{ Status string }
	}) {
		off := len(p.Endpoints) > 0
		for _, e := range p.Endpoints {
			off = off && e.Status == "OFFLINE"
		}
		offline[p.ID] = off
	})
	podName := map[string]string{}
	each(r, "pods", "", func(p struct {
		ID, Name, Description string
		SiteID                string `json:"site_id"`
	}) {
		podName[p.ID] = p.Name
		add("pods", "%s: %q %s online=%v", p.Name, p.Description, siteName[p.SiteID], !offline[p.ID])
	})
	// Users and groups: SIDs to DNs; group members from the members'
	// group_membership_ids.
	sidDN := map[string]string{}
	groupMembers := map[string][]string{}
	type adEntry struct {
		ID, Name, Description, Domain string
		Group                         bool
		Login                         string   `json:"login_name"`
		NetBIOS                       string   `json:"domain_net_biosname"`
		MemberOf                      []string `json:"group_membership_ids"`
	}
	var ad []adEntry
	each(r, "ad-users-or-groups", "", func(e adEntry) {
		if e.Group {
			sidDN[e.ID] = dit.Group(e.Login)
		} else {
			sidDN[e.ID] = dit.User(e.Login)
		}
		ad = append(ad, e)
	})
	for _, e := range ad {
		for _, g := range e.MemberOf {
			groupMembers[g] = append(groupMembers[g], key(sidDN[e.ID]))
		}
	}
	for _, e := range ad {
		if e.Group {
			add("groups", "%s: %q %v", e.Login, e.Description, sorted(groupMembers[e.ID]))
			continue
		}
		domain := e.NetBIOS
		if domain == "" {
			domain = e.Domain
		}
		add("users", "%s: %q %q", e.Login, domain, e.Name)
	}
	// Entitlements (pools come from the pools' entitlement ids, below).
	type ge struct {
		ID, Name, Description, Scope string
		Dedicated                    bool
		Enabled                      bool
		UseHome                      bool     `json:"use_home_site"`
		RequireHome                  bool     `json:"require_home_site"`
		UsePreferred                 bool     `json:"use_preferred_sites"`
		IgnoreHigh                   bool     `json:"ignore_preferred_sites_with_high_load"`
		Policy                       string   `json:"session_distribution_policy"`
		AutoClean                    bool     `json:"multiple_session_auto_clean"`
		Multi                        bool     `json:"allow_multiple_sessions_per_user"`
		ClientRestrictions           bool     `json:"enable_client_restrictions"`
		Protocol                     string   `json:"default_display_protocol"`
		Tags                         []string `json:"cs_restriction_tags"`
		Backup                       string   `json:"backup_gde_id"`
	}
	scope := map[string]string{"ALL_SITES": ldapschema.ScopeAny, "WITHIN_SITE": ldapschema.ScopeSite, "WITHIN_POD": ldapschema.ScopeLocal}
	geDN := map[string]string{}
	var ges []ge
	geType := map[string]string{}
	for _, kind := range []string{ldapschema.TypeDesktop, ldapschema.TypeApplication} {
		list := "global-desktop-entitlements"
		if kind == ldapschema.TypeApplication {
			list = "global-application-entitlements"
		}
		each(r, list, "", func(g ge) {
			geDN[g.ID] = dit.Entitlement(g.Name)
			geType[g.ID] = kind
			ges = append(ges, g)
		})
	}
	members := map[string][]string{}
	for _, list := range []string{"desktop-entitlement-members", "application-entitlement-members"} {
		each(r, list, "", func(e struct {
			ID  string
			IDs []string `json:"ad_user_or_group_ids"`
		}) {
			for _, sid := range e.IDs {
				members[e.ID] = append(members[e.ID], key(sidDN[sid]))
			}
		})
	}
	// Pods' inventories.
	gePools := map[string][]string{}
	poolByID := map[string]string{}         // pool id -> DN
	appPoolByName := map[[2]string]string{} // pod, application name -> DN
	hostByID := map[string]string{}         // RDS server id -> DN
	machineOf := map[[3]string]string{}     // pod, user SID, entitlement id -> machine name
	computer := func(name string) string { return dit.Computer(name) }
	for _, pod := range m.Pods {
		pn := pod.Name
		each(r, "connection-servers", pod.ID, func(cs struct {
			Name string
			Tags []string
		}) {
			add("connection-servers", "%s/%s: %v", pn, cs.Name, sorted(cs.Tags))
		})
		farmName := map[string]string{}
		each(r, "farms", pod.ID, func(f struct {
			ID, Name, Description string
			Type                  string `json:"max_session_type"`
			Limit                 int    `json:"max_sessions_per_rds_server"`
			LB                    struct {
				LIT int `json:"load_index_threshold"`
				CST int `json:"connecting_session_threshold"`
			} `json:"load_balancer_settings"`
		}) {
			farmName[f.ID] = f.Name
			limit := f.Limit
			if f.Type == "UNLIMITED" {
				limit = 0
			}
			add("farms", "%s/%s: %q %d %d %d", pn, f.Name, f.Description, limit, f.LB.LIT, f.LB.CST)
		})
		each(r, "rds-servers", pod.ID, func(h struct {
			ID, Name, Description string
			FarmID                string `json:"farm_id"`
			Enabled               bool
			LoadIndex             *int   `json:"load_index"`
			Preference            string `json:"load_preference"`
			Sessions              int    `json:"session_count"`
		}) {
			load := -1
			if h.LoadIndex != nil && h.Preference != "UNKNOWN" {
				load = *h.LoadIndex
			}
			hostByID[h.ID] = dit.Host(pn, farmName[h.FarmID], h.Name)
			add("hosts", "%s/%s/%s: %q load=%d sessions=%d enabled=%v", pn, farmName[h.FarmID], h.Name, h.Description, load, h.Sessions, h.Enabled)
		})
		type metrics struct {
			ID              string
			Machines        int `json:"num_machines"`
			Occupancy       int `json:"occupancy_count"`
			NumConnected    int `json:"num_connected_sessions"`
			NumDisconnected int `json:"num_disconnected_sessions"`
		}
		mets := map[string]metrics{}
		each(r, "desktop-pool-metrics", pod.ID, func(x metrics) { mets[x.ID] = x })
		each(r, "desktop-pools", pod.ID, func(p struct {
			ID, Name, Description, Type string
			Enabled                     bool
			Assignment                  string `json:"user_assignment"`
			GE                          string `json:"global_desktop_entitlement_id"`
			FarmID                      string `json:"farm_id"`
		}) {
			dn := dit.Pool(pn, p.Name)
			poolByID[p.ID] = dn
			kind, farm := ldapschema.KindDesktop, ""
			if p.Type == "RDS" {
				kind, farm = ldapschema.KindRDSDesktop, farmName[p.FarmID]
			}
			x := mets[p.ID]
			dedicated := p.Assignment == "DEDICATED"
			assigned := 0
			if dedicated {
				assigned = x.Occupancy
			}
			if p.GE != "" {
				gePools[p.GE] = append(gePools[p.GE], key(dn))
			}
			add("pools", "%s/%s: %s dedicated=%v capacity=%d sessions=%d assigned=%d farm=%q enabled=%v %q", pn, p.Name, kind, dedicated,
				x.Machines, x.NumConnected+x.NumDisconnected, assigned, farm, p.Enabled, p.Description)
		})
		each(r, "application-pools", pod.ID, func(p struct {
			ID, Name, Description string
			Enabled               bool
			GE                    string `json:"global_application_entitlement_id"`
			FarmID                string `json:"farm_id"`
		}) {
			dn := dit.Pool(pn, p.Name)
			poolByID[p.ID] = dn
			appPoolByName[[2]string{pod.ID, p.Name}] = dn
			if p.GE != "" {
				gePools[p.GE] = append(gePools[p.GE], key(dn))
			}
			add("pools", "%s/%s: %s dedicated=false capacity=0 sessions=0 assigned=0 farm=%q enabled=%v %q", pn, p.Name,
				ldapschema.KindApplication, farmName[p.FarmID], p.Enabled, p.Description)
		})
		poolGE := map[string]string{}
		each(r, "desktop-pools", pod.ID, func(p struct {
			ID string
			GE string `json:"global_desktop_entitlement_id"`
		}) {
			poolGE[p.ID] = p.GE
		})
		each(r, "machines", pod.ID, func(mc struct {
			Name   string
			PoolID string   `json:"desktop_pool_id"`
			Users  []string `json:"user_ids"`
		}) {
			for _, u := range mc.Users {
				machineOf[[3]string{pod.ID, u, poolGE[mc.PoolID]}] = mc.Name
			}
		})
	}
	for _, g := range ges {
		add("entitlements", "%s: %q %s scope=%s dedicated=%v home=%v/%v preferred=%v/%v %s clean=%v multi=%v tags=%v client=%v enabled=%v %s backup=%q members=%v pools=%v",
			g.Name, g.Description, geType[g.ID], scope[g.Scope], g.Dedicated, g.UseHome, g.RequireHome, g.UsePreferred, g.IgnoreHigh,
			g.Policy, g.AutoClean, g.Multi, sorted(g.Tags), g.ClientRestrictions, g.Enabled, g.Protocol, geDN[g.Backup],
			sorted(members[g.ID]), sorted(gePools[g.ID]))
	}
	each(r, "home-sites", "", func(h struct {
		Principal string `json:"ad_user_or_group_id"`
		Group     bool
		Desktop   string `json:"global_desktop_entitlement_id"`
		App       string `json:"global_application_entitlement_id"`
		SiteID    string `json:"site_id"`
	}) {
		ge := geDN[h.Desktop+h.App]
		add("home-sites", "%s: group=%v %s %s %s", key(dit.HomeSite(sidDN[h.Principal], ge)), h.Group, key(sidDN[h.Principal]), key(ge), siteName[h.SiteID])
	})
	each(r, "pod-assignments", "", func(a struct {
		User string `json:"user_id"`
		GE   string `json:"global_desktop_entitlement_id"`
		Pod  string `json:"pod_id"`
	}) {
		add("assignments", "%s: %s %s %s %s", key(dit.Assignment(sidDN[a.User], geDN[a.GE])), key(sidDN[a.User]), key(geDN[a.GE]),
			podName[a.Pod], machineOf[[3]string{a.Pod, a.User, a.GE}])
	})
	for _, pod := range m.Pods {
		each(r, "global-sessions", pod.ID, func(s struct {
			ID           string
			User         string                 `json:"user_id"`
			DesktopGE    string                 `json:"global_desktop_entitlement_id"`
			AppGEs       []string               `json:"global_application_entitlement_ids"`
			Pod          string                 `json:"pod_id"`
			Brokering    string                 `json:"brokering_pod_id"`
			Pool         string                 `json:"desktop_pool_id"`
			RDSServer    string                 `json:"rds_server_id"`
			Applications []string               `json:"application_names"`
			State        string                 `json:"session_state"`
			Client       *struct{ Name string } `json:"client_data"`
		}) {
			ge := s.DesktopGE
			pool := poolByID[s.Pool]
			if len(s.AppGEs) > 0 {
				ge = s.AppGEs[0]
				pool = appPoolByName[[2]string{s.Pod, s.Applications[0]}]
			}
			client := ""
			if s.Client != nil {
				client = key(computer(s.Client.Name))
			}
			add("sessions", "%s: %s %s %s %s %s %s %s %s", s.ID, key(sidDN[s.User]), key(geDN[ge]), podName[s.Pod], podName[s.Brokering],
				key(pool), key(hostByID[s.RDSServer]), client, s.State)
		})
	}
	each(r, "cpa", "", func(c struct {
		Redirection struct {
			Enabled bool `json:"site_redirection_enabled"`
		} `json:"site_redirection_settings"`
	}) {
		add("settings", "site redirection %v", c.Redirection.Enabled)
	})
	return out
}

func key(dn string) string {
	if dn == "" {
		return ""
	}
	return ldapschema.NormalizeDN(dn)
}

func sorted(s []string) []string {
	out := append([]string{}, s...)
	sort.Strings(out)
	return out
}

// fromLDIF summarizes the records of an LDIF as fromPull does a pull,
// leaving out what the API does not carry.
func fromLDIF(t *testing.T, text string) map[string][]string {
	_, rec := records(t, text)
	out := map[string][]string{}
	add := func(kind, format string, args ...any) { out[kind] = append(out[kind], fmt.Sprintf(format, args...)) }
	name := ldapschema.NameOf
	for _, s := range rec.Sites {
		add("sites", "%s: %q %q %v", s.Name, s.Description, s.URL, s.PreferredSites)
	}
	for _, p := range rec.Pods {
		add("pods", "%s: %q %s online=%v", p.Name, p.Description, p.Site, p.Online)
	}
	computers := map[string]bool{}
	for _, c := range rec.Computers {
		computers[key(c.DN)] = true
	}
	for _, g := range rec.Groups {
		var ms []string
		for _, m := range g.Members {
			if !computers[key(m)] { // the API has no computer -> group
				ms = append(ms, key(m))
			}
		}
		add("groups", "%s: %q %v", g.Name, g.Description, sorted(ms))
	}
	for _, u := range rec.Users {
		add("users", "%s: %q %q", u.UID, u.Domain, u.FullName)
	}
	for _, c := range rec.ConnectionServers {
		add("connection-servers", "%s/%s: %v", c.Pod, c.Name, sorted(c.Tags))
	}
	for _, f := range rec.Farms {
		add("farms", "%s/%s: %q %d %d %d", f.Pod, f.Name, f.Description, f.MaxSessionsPerHost, f.LoadIndexThreshold, f.ConnectingSessionThreshold)
	}
	for _, h := range rec.Hosts {
		add("hosts", "%s/%s/%s: %q load=%d sessions=%d enabled=%v", h.Pod, h.Farm, h.Name, h.Description, h.LoadIndex, h.Sessions, h.Enabled)
	}
	for _, p := range rec.Pools {
		add("pools", "%s/%s: %s dedicated=%v capacity=%d sessions=%d assigned=%d farm=%q enabled=%v %q", p.Pod, p.Name, p.Kind, p.Dedicated,
			p.Capacity, p.Sessions, p.Assigned, p.Farm, p.Enabled, p.Description)
	}
	for _, g := range rec.Entitlements {
		var ms, ps []string
		for _, m := range g.Members {
			ms = append(ms, key(m))
		}
		for _, p := range g.PoolDNs {
			ps = append(ps, key(p))
		}
		backup := ""
		if g.BackupDN != "" {
			backup = g.BackupDN
		}
		add("entitlements", "%s: %q %s scope=%s dedicated=%v home=%v/%v preferred=%v/%v %s clean=%v multi=%v tags=%v client=%v enabled=%v %s backup=%q members=%v pools=%v",
			g.Name, g.Description, g.Type, g.Scope, g.Dedicated, g.UseHomeSite, g.RequireHomeSite, g.UsePreferredSites, g.IgnoreHighLoad,
			g.LoadDistribution, g.AutoClean, g.MultipleSessionsPerUser, sorted(g.Tags), g.ClientRestrictions, g.Enabled, g.DefaultProtocol, backup,
			sorted(ms), sorted(ps))
	}
	for _, h := range rec.HomeSites {
		principal := h.UserDN + h.GroupDN
		add("home-sites", "%s: group=%v %s %s %s", key(h.DN), h.GroupDN != "", key(principal), key(h.EntitlementDN), name(h.SiteDN))
	}
	for _, a := range rec.Assignments {
		add("assignments", "%s: %s %s %s %s", key(a.DN), key(a.UserDN), key(a.EntitlementDN), name(a.PodDN), a.Machine)
	}
	for _, s := range rec.Sessions {
		add("sessions", "%s: %s %s %s %s %s %s %s %s", s.ID, key(s.UserDN), key(s.EntitlementDN), name(s.PodDN), name(s.BrokeringPodDN),
			key(s.PoolDN), key(s.HostDN), key(s.ClientDN), s.State)
	}
	add("settings", "site redirection %v", rec.Settings.Stored[ldapschema.AttrEnableSiteRedirection] == 1)
	return out
}

// TestHorizonIsTheSameFederation: read back as docs/horizon.md says import
// reads it, the pull directory is the federation of the LDIF the same
// configuration gives, object by object and field by field, for
// everything the REST API carries.
func TestHorizonIsTheSameFederation(t *testing.T) {
	for _, cfg := range []generate.Config{demo(t, 1), demo(t, 4), midSize(2)} {
		t.Run(fmt.Sprintf("%d-entries-seed-%d", cfg.Entries(), cfg.Seed), func(t *testing.T) {
			dir, _ := writeHorizon(t, cfg, generate.HorizonOptions{PageSize: 50})
			got, want := fromPull(t, dir), fromLDIF(t, write(t, cfg))
			kinds := map[string]bool{}
			for k := range got {
				kinds[k] = true
			}
			for k := range want {
				kinds[k] = true
			}
			for k := range kinds {
				g, w := sorted(got[k]), sorted(want[k])
				if len(g) != len(w) {
					t.Errorf("%s: %d from the pull, %d in the LDIF", k, len(g), len(w))
				}
				for i := 0; i < min(len(g), len(w)); i++ {
					if g[i] != w[i] {
						t.Errorf("%s differ:\npull: %s\nldif: %s", k, g[i], w[i])
						break
					}
				}
			}
			if len(kinds) != 13 {
				t.Errorf("compared %d kinds: %v", len(kinds), kinds)
			}
		})
	}
}
