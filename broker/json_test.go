package broker

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

// jsonObject marshals v and decodes it as a generic JSON object.
func jsonObject(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func keysOf(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func wantKeys(t *testing.T, what string, m any, want ...string) {
	t.Helper()
	obj, ok := m.(map[string]any)
	if !ok {
		t.Fatalf("%s is %T, not an object", what, m)
	}
	slices.Sort(want)
	if got := keysOf(obj); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s keys %q, want %q", what, got, want)
	}
}

// TestDecisionJSONShape pins the JSON contract of resolve (issue 5 item 3):
// renaming a field breaks scripts, so it breaks this test first.
func TestDecisionJSONShape(t *testing.T) {
	f := seedFederation()
	poolNamed(f, "uk-desk").Enabled = false
	addFarmPool(f, "uk-rds", "uk-pod1", "uk-farm", KindRDSDesktop, 0, host("uk-h1", 5, 0, 0))
	f.Settings.EnableSiteRedirection = true
	ge(f).UseHomeSite = true
	f.HomeSites = []HomeSite{{User: "alice", Site: "India"}, {Group: "Sales", Site: "US"}}
	f.Sessions = []Session{{ID: "s1", User: "alice", Entitlement: "Sales Desktop", Pod: "us-pod1", Pool: "us-desk", State: StateConnected}}
	d, err := Resolve(f, fillDefaults(Request{OfflinePods: []string{"us-pod1"}}))
	if err != nil {
		t.Fatal(err)
	}
	wantPlaced(t, d, "UK", "uk-pod1", "uk-rds")
	m := jsonObject(t, d)
	wantKeys(t, "decision", m, "outcome", "reason", "request", "placement", "checks", "home_site",
		"home_site_redirection", "site_order", "sessions", "assignment", "warnings", "trace", "seed", "what_if")
	if w, ok := m["what_if"].([]any); !ok || len(w) != 0 {
		t.Fatalf("what_if %v, want [] with no what-if given", m["what_if"])
	}
	if m["outcome"] != "PLACED" || m["seed"] != float64(0) {
		t.Fatalf("outcome %v seed %v", m["outcome"], m["seed"])
	}
	wantKeys(t, "request", m["request"], "user", "entitlement", "entitlement_type", "scope", "policy", "dedicated",
		"connection_server", "connecting_pod", "connecting_site", "protocol", "unauthenticated", "offline_pods")
	wantKeys(t, "placement", m["placement"], "site", "pod", "pool", "farm", "host", "eligible_hosts", "host_selection")
	wantKeys(t, "check", m["checks"].([]any)[0], "check", "passed", "detail")
	wantKeys(t, "home_site", m["home_site"], "site", "source", "conflicts", "use_home_site", "outside_scope", "rows")
	wantKeys(t, "home-site row", m["home_site"].(map[string]any)["rows"].([]any)[1], "kind", "name", "entitlement", "site", "level", "won", "lost_because")
	wantKeys(t, "home_site_redirection", m["home_site_redirection"], "would_redirect", "to_site", "detail")
	visits := m["site_order"].([]any)
	wantKeys(t, "site_order entry", visits[0], "site", "tier", "searched", "skipped", "skip_reason", "load", "pod_order", "pods")
	wantKeys(t, "pod visit", visits[0].(map[string]any)["pods"].([]any)[0], "pod", "connecting", "status", "load", "pools")
	ukPool := visits[1].(map[string]any)["pods"].([]any)[0].(map[string]any)["pools"].([]any)[0]
	wantKeys(t, "pool visit", ukPool, "pool", "kind", "farm", "status", "detail", "load", "host_selection")
	wantKeys(t, "session", m["sessions"].([]any)[0], "id", "site", "pod", "pool", "state", "status", "detail")
	wantKeys(t, "trace step", m["trace"].([]any)[0], "step", "message")
	if m["sessions"].([]any)[0].(map[string]any)["status"] != "ignored_offline" {
		t.Fatalf("session %v", m["sessions"])
	}
	if visits[0].(map[string]any)["load"] != nil {
		t.Fatalf("load under NONE is %v, want null", visits[0].(map[string]any)["load"])
	}
}

func TestDecisionJSONNulls(t *testing.T) {
	f := seedFederation()
	for i := range f.Pools {
		f.Pools[i].Sessions = f.Pools[i].Capacity
	}
	ge(f).Policy, ge(f).IgnoreHighLoad = PolicySession, true
	d, err := Resolve(f, fillDefaults(Request{}))
	if err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, d, OutcomeNoCapacity)
	m := jsonObject(t, d)
	if v, ok := m["placement"]; !ok || v != nil {
		t.Fatalf("placement %v (present %t), want null", v, ok)
	}
	hs := m["home_site"].(map[string]any)
	if v, ok := hs["site"]; !ok || v != nil || hs["source"] != "CONNECTING_SITE" {
		t.Fatalf("home_site %v, want site null and source CONNECTING_SITE", hs)
	}
	if _, ok := m["auto_clean"]; ok {
		t.Fatal("auto_clean present outside CHOOSE_SESSION")
	}
	for _, k := range []string{"home_site_redirection", "assignment"} {
		if v, ok := m[k]; !ok || v != nil {
			t.Fatalf("%s %v (present %t), want null", k, v, ok)
		}
	}
	for _, k := range []string{"sessions", "warnings", "checks"} {
		if _, ok := m[k].([]any); !ok {
			t.Fatalf("%s is %v, want a list", k, m[k])
		}
	}
	uk := m["site_order"].([]any)[1].(map[string]any)
	if uk["load"] != float64(100) || uk["threshold"] != float64(98) || uk["tier"] != "preferred" {
		t.Fatalf("UK visit %v", uk)
	}
}

func TestDecisionJSONChooseSession(t *testing.T) {
	f := seedFederation()
	f.Sessions = []Session{
		{ID: "s1", User: "alice", Entitlement: "Sales Desktop", Pod: "uk-pod1", Pool: "uk-desk"},
		{ID: "s2", User: "alice", Entitlement: "Sales Desktop", Pod: "us-pod1", Pool: "us-desk"},
	}
	d, err := Resolve(f, fillDefaults(Request{}))
	if err != nil {
		t.Fatal(err)
	}
	m := jsonObject(t, d)
	if m["outcome"] != "CHOOSE_SESSION" || m["auto_clean"] != false || m["placement"] != nil {
		t.Fatalf("decision %v", m)
	}
}

func TestHomeSiteResolutionJSONShape(t *testing.T) {
	res := ResolveHomeSite(homeFederation(HomeSite{Group: "Zulu", Site: "UK"}, HomeSite{Group: "alpha", Site: "US"}), "carol", "Sales Desktop")
	m := jsonObject(t, res)
	wantKeys(t, "resolution", m, "user", "entitlement", "site", "source", "groups", "conflicts", "rows")
	wantKeys(t, "conflict", m["conflicts"].([]any)[0], "level", "groups", "winning_group", "site", "decisive")
	wantKeys(t, "conflict group", m["conflicts"].([]any)[0].(map[string]any)["groups"].([]any)[0], "group", "site")
	wantKeys(t, "winning row", m["rows"].([]any)[0], "kind", "name", "entitlement", "site", "level", "won")
	none := jsonObject(t, ResolveHomeSite(homeFederation(), "carol", ""))
	if v, ok := none["site"]; !ok || v != nil || none["source"] != "NONE" || none["entitlement"] != nil {
		t.Fatalf("no home site: %v", none)
	}
}
