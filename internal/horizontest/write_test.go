package horizontest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

const (
	india = "51000000-0000-4000-8000-000000000001"
	uk    = "51000000-0000-4000-8000-000000000002"
	us    = "51000000-0000-4000-8000-000000000003"
	sales = "6de00000-0000-4000-8000-000000000001"
	alice = "S-1-5-21-1004336348-1177238915-682003330-1101"
)

// TestWrites: the test server takes the writes push makes, checks each
// body against its update or create spec (a misspelt field, a value
// outside an enum, a missing required field are refused with 400 and
// change nothing), applies a PUT as the whole object (a field of the spec
// left out is removed), and serves the change to the next read.
func TestWrites(t *testing.T) {
	f := Start(t, "seed-000")
	c := testClient(t, f)
	base := f.URL("india-pod-1")
	tok := c.login(t, base).Access

	// A site's preferred sites.
	if st, b := c.write(t, base, tok, "PUT", "/federation/v3/sites/"+india,
		`{"name":"India","description":"d","preferred_sites":["`+us+`","`+uk+`"]}`); st != http.StatusNoContent {
		t.Fatalf("PUT site: %d %s", st, b)
	}
	var site map[string]any
	if err := json.Unmarshal(c.get(t, base, tok, "/federation/v3/sites/"+india, ""), &site); err != nil {
		t.Fatal(err)
	}
	if got := site["preferred_sites"].([]any); len(got) != 2 || got[0] != us || got[1] != uk || site["description"] != "d" {
		t.Errorf("site after the PUT: %v", site)
	}

	// An entitlement: the whole body; a field left out is removed.
	var ge map[string]any
	if err := json.Unmarshal(c.get(t, base, tok, "/inventory/v7/global-desktop-entitlements/"+sales, ""), &ge); err != nil {
		t.Fatal(err)
	}
	body := map[string]any{}
	for _, k := range f.schemas.Properties("GlobalDesktopEntitlementUpdateSpecV5") {
		if v, ok := ge[k]; ok {
			body[k] = v
		}
	}
	body["use_home_site"] = true
	delete(body, "description")
	bad := []struct{ name, from, to string }{
		{"misspelt field", `"use_home_site":true`, `"use_homesite":true`},
		{"enum value of cpactl", `"scope":"ALL_SITES"`, `"scope":"ANY"`},
		{"missing required field", `"entra_sso_enabled":false,`, ``},
		{"a Summary-only field", `"enabled":true`, `"enabled":true,"dedicated":false`},
	}
	good, _ := json.Marshal(body)
	for _, b := range bad {
		mutated := strings.Replace(string(good), b.from, b.to, 1)
		if mutated == string(good) {
			t.Fatalf("%s: %s not in %s", b.name, b.from, good)
		}
		if st, _ := c.write(t, base, tok, "PUT", "/inventory/v7/global-desktop-entitlements/"+sales, mutated); st != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", b.name, st)
		}
	}
	if n := len(f.Invalid()); n != len(bad) {
		t.Errorf("%d bodies recorded as invalid, want %d: %v", n, len(bad), f.Invalid())
	}
	if got := f.State("global-desktop-entitlements.json")[0]; got["use_home_site"] != false {
		t.Errorf("a refused body changed the entitlement: %v", got)
	}
	if st, b := c.write(t, base, tok, "PUT", "/inventory/v7/global-desktop-entitlements/"+sales, string(good)); st != http.StatusNoContent {
		t.Fatalf("PUT entitlement: %d %s", st, b)
	}
	got := f.State("global-desktop-entitlements.json")[0]
	if got["use_home_site"] != true || got["description"] != nil || got["dedicated"] != false {
		t.Errorf("entitlement after the PUT: %v", got)
	}

	// Home sites: create, move, delete; each answer a BulkItemResponseInfo list.
	st, b := c.write(t, base, tok, "POST", "/federation/v2/home-sites", `[{"ad_user_or_group_id":"`+alice+`","site_id":"`+uk+`","global_desktop_entitlement_id":"`+sales+`"}]`)
	if st != http.StatusOK {
		t.Fatalf("POST home site: %d %s", st, b)
	}
	s, err := LoadSchemas()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check("BulkItemResponseInfo", true, b); err != nil {
		t.Errorf("bulk answer: %v", err)
	}
	rows := f.State("home-sites.json")
	if len(rows) != 1 || rows[0]["site_name"] != "UK" {
		t.Fatalf("home sites: %v", rows)
	}
	if err := s.Check("HomeSiteInfoV2", false, c.get(t, base, tok, "/federation/v2/home-sites/"+rows[0]["id"].(string), "")); err != nil {
		t.Errorf("home site: %v", err)
	}
	if st, _ := c.write(t, base, tok, "POST", "/federation/v2/home-sites", `[{"ad_user_or_group_id":"`+alice+`","site":"`+uk+`"}]`); st != http.StatusBadRequest {
		t.Errorf("a misspelt create spec: %d, want 400", st)
	}
	id := rows[0]["id"].(string)
	if st, b := c.write(t, base, tok, "PUT", "/federation/v2/home-sites/"+id, `{"site_id":"`+us+`"}`); st != http.StatusNoContent {
		t.Fatalf("PUT home site: %d %s", st, b)
	}
	if rows := f.State("home-sites.json"); rows[0]["site_name"] != "US" {
		t.Errorf("home site not moved: %v", rows)
	}
	if st, b := c.write(t, base, tok, "DELETE", "/federation/v2/home-sites", `["`+id+`"]`); st != http.StatusOK {
		t.Fatalf("DELETE home site: %d %s", st, b)
	}
	if rows := f.State("home-sites.json"); len(rows) != 0 {
		t.Errorf("home site not deleted: %v", rows)
	}
}
