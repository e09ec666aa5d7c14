package horizontest

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

var swaggerPath = flag.String("swagger", "", "the 2512 rest-api-swagger-docs.json: TestTrimSwagger rewrites testdata/"+SchemaFile+" from it")

// sendSchemas are the bodies cpactl sends or will send (login, refresh,
// logout; push's writes, NOTES §c) and the whole objects push reads back:
// kept in the trimmed file so that a test can check them.
var sendSchemas = []string{
	"AuthLogin", "AuthTokens", "AccessToken", "RefreshToken", "APIError",
	"SiteUpdateSpecV3", "GlobalDesktopEntitlementInfoV7", "GlobalApplicationEntitlementInfoV6",
	"GlobalDesktopEntitlementUpdateSpecV5", "GlobalApplicationEntitlementUpdateSpecV4",
	"HomeSiteCreateSpecV2", "HomeSiteUpdateSpecV2", "BulkItemResponseInfo",
}

// TestTrimSwagger writes testdata/swagger-2512-schemas.json: the
// components.schemas of the swagger reachable from the schemas Routes
// answer with and sendSchemas, unchanged, with the source. Run it when
// the routes change:
//
//	go test ./internal/horizontest -run TestTrimSwagger -swagger PATH/rest-api-swagger-docs.json
func TestTrimSwagger(t *testing.T) {
	if *swaggerPath == "" {
		t.Skip("pass -swagger PATH to rewrite testdata/" + SchemaFile)
	}
	b, err := os.ReadFile(*swaggerPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Info struct {
			Version string `json:"version"`
		} `json:"info"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Info.Version != "2512" {
		t.Fatalf("info.version %q, want 2512", doc.Info.Version)
	}
	roots := slices.Clone(sendSchemas)
	for _, r := range Routes {
		roots = append(roots, r.Schema)
	}
	ref := regexp.MustCompile(`"#/components/schemas/([A-Za-z0-9_.]+)"`)
	kept := map[string]json.RawMessage{}
	for len(roots) > 0 {
		name := roots[len(roots)-1]
		roots = roots[:len(roots)-1]
		if _, ok := kept[name]; ok {
			continue
		}
		s, ok := doc.Components.Schemas[name]
		if !ok {
			t.Fatalf("the swagger has no schema %s", name)
		}
		kept[name] = s
		for _, m := range ref.FindAllSubmatch(s, -1) {
			roots = append(roots, string(m[1]))
		}
	}
	names := make([]string, 0, len(kept))
	for n := range kept {
		names = append(names, n)
	}
	sort.Strings(names)
	out := map[string]any{
		"$comment": "Excerpt of the Horizon Server REST API description (OpenAPI 3.0.1, info.version 2512): the components.schemas reachable from the schemas cpactl reads and sends, unchanged. " +
			"Source: https://github.com/euc-dev/horizon-apis, file docs/horizon-server/versions/2512/rest-api-swagger-docs.json, commit 7132d79b5f93958926e424664b8c4a2a67b447f0. " +
			"Licensed under CC BY 4.0 (LICENSE-CC-BY-4.0.txt beside this file); written by TestTrimSwagger in schema_test.go.",
		"x-schemas":  names,
		"components": map[string]any{"schemas": kept},
	}
	enc, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", SchemaFile), append(enc, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("kept %d of %d schemas", len(kept), len(doc.Components.Schemas))
}

// TestFixturesMatchSwagger validates every answer the test servers give,
// on every route and every pod (fixtures, the answering pod marked local,
// the older versions' answers, synthetic sessions), and every fixture file
// as a whole, against the trimmed swagger; and checks that no fixture file
// is left unserved.
func TestFixturesMatchSwagger(t *testing.T) {
	s, err := LoadSchemas()
	if err != nil {
		t.Fatal(err)
	}
	f := Start(t, "seed-000")
	f.AddSessions("uk-pod-1", 3)
	c := testClient(t, f)
	served := map[string]bool{}
	for _, pod := range f.Pods() {
		tokens := c.login(t, f.URL(pod))
		if err := s.Check("AuthTokens", false, tokens.raw); err != nil {
			t.Errorf("login answer: %v", err)
		}
		for _, r := range Routes {
			paths := []string{r.Path}
			if strings.Contains(r.Path, "{id}") {
				paths = nil
				for _, p := range f.pods {
					paths = append(paths, strings.ReplaceAll(r.Path, "{id}", p.ID))
				}
			}
			if r.Item {
				paths = nil
				for _, it := range f.State(r.Fixture) {
					paths = append(paths, strings.ReplaceAll(r.Path, "{item}", it["id"].(string)))
				}
			}
			for _, p := range paths {
				q := ""
				switch r.Path {
				case "/inventory/v3/global-sessions":
					q = "pod_id=" + f.pods[2].ID
				case "/monitor/v3/desktop-pools/metrics":
					q = "ids=d0000000-0000-4000-8000-000000000001&ids=d0000000-0000-4000-8000-000000000003"
				}
				body := c.get(t, f.URL(pod), tokens.Access, p, q)
				if err := s.Check(r.Schema, r.Array, body); err != nil {
					t.Errorf("%s GET %s: %v", pod, p, err)
				}
			}
			fixture := strings.ReplaceAll(r.Fixture, "{pod}", pod)
			for _, p := range f.Pods() {
				served[strings.ReplaceAll(fixture, "{id}", p)] = true
			}
			if r.Transform != "" || r.Item {
				continue // an older version, or one element: the list's route checks the file
			}
			b, err := os.ReadFile(filepath.Join(f.dir, filepath.FromSlash(fixture)))
			if err != nil {
				if strings.Contains(fixture, "{id}") {
					continue
				}
				t.Fatal(err)
			}
			if err := s.Check(r.Schema, r.Array, b); err != nil {
				t.Errorf("%s: %v", fixture, err)
			}
		}
	}
	err = filepath.WalkDir(f.dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(f.dir, path)
		if !served[filepath.ToSlash(rel)] {
			t.Errorf("fixture %s is served by no route", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSchemaCheckFails: the check refuses a misspelt field, a value
// outside an enum, a wrong type and a missing required field, each in a
// copy of a fixture that passes.
func TestSchemaCheckFails(t *testing.T) {
	s, err := LoadSchemas()
	if err != nil {
		t.Fatal(err)
	}
	sites, err := os.ReadFile(filepath.Join(Dir("seed-000"), "sites.json"))
	if err != nil {
		t.Fatal(err)
	}
	ges, err := os.ReadFile(filepath.Join(Dir("seed-000"), "global-desktop-entitlements.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check("SiteInfoV3", true, sites); err != nil {
		t.Fatalf("the fixture itself fails: %v", err)
	}
	if err := s.Check("GlobalDesktopEntitlementSummaryV7", true, ges); err != nil {
		t.Fatalf("the fixture itself fails: %v", err)
	}
	for _, tc := range []struct {
		name, schema string
		body         []byte
		old, new     string
	}{
		{"misspelt field", "SiteInfoV3", sites, `"preferred_sites"`, `"preferred_site"`},
		{"enum value of cpactl, not of the API", "GlobalDesktopEntitlementSummaryV7", ges, `"ALL_SITES"`, `"ANY"`},
		{"enum value in the wrong case", "GlobalDesktopEntitlementSummaryV7", ges, `"LOAD"`, `"load"`},
		{"wrong type", "GlobalDesktopEntitlementSummaryV7", ges, `"use_preferred_sites": true`, `"use_preferred_sites": "true"`},
		{"missing required field", "GlobalDesktopEntitlementSummaryV7", ges, `"entra_sso_enabled": false,`, ``},
		{"nested field misspelt", "GlobalDesktopEntitlementSummaryV7", ges, `"shortcut_locations_v2": []`, `"shortcut_locations_v2": ["STARTMENU"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mutated := strings.Replace(string(tc.body), tc.old, tc.new, 1)
			if mutated == string(tc.body) {
				t.Fatalf("%s not in the fixture", tc.old)
			}
			err := s.Check(tc.schema, true, []byte(mutated))
			if err == nil {
				t.Fatalf("the check passed %s", tc.name)
			}
			t.Log(err)
		})
	}
}
