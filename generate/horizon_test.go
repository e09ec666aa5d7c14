package generate_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cpactl/cpactl/generate"
	"github.com/cpactl/cpactl/horizon"
	"github.com/cpactl/cpactl/internal/horizontest"
)

func writeHorizon(t testing.TB, cfg generate.Config, opts generate.HorizonOptions) (string, *horizon.Manifest) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pull")
	m, err := generate.WriteHorizon(dir, cfg, opts)
	if err != nil {
		t.Fatalf("WriteHorizon: %v", err)
	}
	return dir, m
}

var schemas struct {
	s   *horizontest.Schemas
	err error
}

func loadSchemas(t testing.TB) *horizontest.Schemas {
	t.Helper()
	if schemas.s == nil && schemas.err == nil {
		schemas.s, schemas.err = horizontest.LoadSchemas()
	}
	if schemas.err != nil {
		t.Fatal(schemas.err)
	}
	return schemas.s
}

// checkPull checks a pull directory against its manifest and the
// swagger: every file on disk is in the manifest and the other way round;
// each file's size and SHA-256 are the manifest's; horizon.EachRecord
// reads each file back with the manifest's count of records; the counts
// per endpoint are the files' sums; every file (or, with sample, the
// first and last file of each endpoint) validates against the swagger
// schema of its path; the requests are one per file and a login and a
// logout per pod.
func checkPull(t *testing.T, dir string, sample bool) *horizon.Manifest {
	t.Helper()
	s := loadSchemas(t)
	m, err := horizon.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Generated == nil || m.Server.URL != horizon.GeneratedURL || !m.Started.IsZero() {
		t.Errorf("the manifest is not marked as generated: %+v %s %s", m.Generated, m.Server.URL, m.Started)
	}
	listed := map[string]horizon.File{}
	counts := map[string]int{}
	first, last := map[string]string{}, map[string]string{}
	for _, f := range m.Files {
		if _, dup := listed[f.Name]; dup {
			t.Errorf("%s is listed twice", f.Name)
		}
		listed[f.Name] = f
		counts[f.Endpoint] += f.Records
		if _, ok := first[f.Endpoint]; !ok {
			first[f.Endpoint] = f.Name
		}
		last[f.Endpoint] = f.Name
	}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if rel == horizon.ManifestFile {
			return nil
		}
		f, ok := listed[rel]
		if !ok {
			t.Errorf("%s is not in the manifest", rel)
			return nil
		}
		delete(listed, rel)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		if int64(len(b)) != f.Bytes || hex.EncodeToString(sum[:]) != f.SHA256 {
			t.Errorf("%s: %d bytes, sha256 %x; the manifest says %d, %s", rel, len(b), sum, f.Bytes, f.SHA256)
		}
		if err := horizon.EachRecord(dir, f, func(json.RawMessage) error { return nil }); err != nil {
			t.Error(err)
		}
		if sample && first[f.Endpoint] != rel && last[f.Endpoint] != rel {
			return nil
		}
		schema, array, ok := horizontest.SchemaOf(f.Path)
		if !ok {
			t.Errorf("%s: no schema for %s", rel, f.Path)
			return nil
		}
		if err := s.Check(schema, array, b); err != nil {
			t.Errorf("%s (%s): %v", rel, schema, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name := range listed {
		t.Errorf("%s is in the manifest, not on disk", name)
	}
	if fmt.Sprint(counts) != fmt.Sprint(m.Counts) {
		t.Errorf("the manifest's counts are %v, its files hold %v", m.Counts, counts)
	}
	if want := int64(len(m.Files) + 2*len(m.Pods)); m.Requests != want {
		t.Errorf("requests %d, want %d (a GET per file, a login and a logout per pod)", m.Requests, want)
	}
	return m
}

// TestHorizonMatchesSwagger: every file of the generated pull directory,
// for the demo and a mid-size federation with pages of 1,000 and of 7, and
// for odd shapes, validates against the 2512 swagger's schemas, and the
// manifest describes the files.
func TestHorizonMatchesSwagger(t *testing.T) {
	cfgs := []generate.Config{demo(t, 1), demo(t, 2), midSize(1),
		{Seed: 5, Sites: 2, Pods: 3, ConnectionServers: 3, Pools: 6, Entitlements: 4, Users: 10, Groups: 3, HomeSites: 5,
			Assignments: 2, Sessions: 10},
		{Seed: 6, Sites: 1, Pods: 1, ConnectionServers: 1, Farms: 1, Hosts: 1, Pools: 1, Entitlements: 1, Users: 1,
			Groups: 1, Computers: 1, HomeSites: 1, Sessions: 1}}
	for _, cfg := range cfgs {
		for _, size := range []int{0, 7} {
			t.Run(fmt.Sprintf("%d-entries-seed-%d-pages-of-%d", cfg.Entries(), cfg.Seed, size), func(t *testing.T) {
				dir, _ := writeHorizon(t, cfg, generate.HorizonOptions{PageSize: size})
				m := checkPull(t, dir, false)
				if size == 7 && cfg.Sessions > 100 && len(m.FilesOf("global-sessions", m.Pods[0].ID)) < 2 {
					t.Errorf("pages of 7 and the first pod's sessions in one file")
				}
			})
		}
	}
}

// TestHorizonCPAMax: the CPA maximum as a pull directory: the manifest
// describes every file, the first and last file of every endpoint
// validates against the swagger, and the counts are the preset's.
func TestHorizonCPAMax(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 270 MB")
	}
	cfg, err := generate.Preset(generate.PresetCPAMax)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Seed = 1
	dir, _ := writeHorizon(t, cfg, generate.HorizonOptions{})
	m := checkPull(t, dir, true)
	checkCounts(t, cfg, m)
	// The pull's request count, in docs/horizon.md: about 810, more where a
	// pod holds more than 1,000 of a kind.
	if m.Requests < 700 || m.Requests > 1000 {
		t.Errorf("a pull of the CPA maximum takes %d requests", m.Requests)
	}
}

// checkCounts: the manifest's counts are the configuration's.
func checkCounts(t *testing.T, cfg generate.Config, m *horizon.Manifest) {
	t.Helper()
	c := m.Counts
	pods := len(m.Pods)
	for _, tc := range []struct {
		what      string
		got, want int
	}{
		{"pods", pods, cfg.Pods},
		{"sites", c["sites"], cfg.Sites},
		{"pods lists (the first pod's, and each other pod's own)", c["pods"], cfg.Pods * cfg.Pods},
		{"monitored pods (all but the first)", c["monitor-pods"], cfg.Pods - 1},
		{"pod endpoints (of every pod but the first)", c["pod-endpoints"], cfg.ConnectionServers - (cfg.ConnectionServers+cfg.Pods-1)/cfg.Pods},
		{"connection servers", c["connection-servers"], cfg.ConnectionServers},
		{"farms", c["farms"], cfg.Farms},
		{"rds servers", c["rds-servers"], cfg.Hosts},
		{"pools", c["desktop-pools"] + c["application-pools"], cfg.Pools},
		{"entitlements", c["global-desktop-entitlements"] + c["global-application-entitlements"], cfg.Entitlements},
		{"members lists", c["desktop-entitlement-members"] + c["application-entitlement-members"], cfg.Entitlements},
		{"users and groups", c["ad-users-or-groups"], cfg.Users + cfg.Groups},
		{"home sites", c["home-sites"], cfg.HomeSites},
		{"pod assignments", c["pod-assignments"], cfg.Assignments},
		{"machines (of the pod assignments)", c["machines"], cfg.Assignments},
		{"sessions", c["global-sessions"], cfg.Sessions},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %d, want %d", tc.what, tc.got, tc.want)
		}
	}
}

func TestHorizonCounts(t *testing.T) {
	for _, cfg := range []generate.Config{demo(t, 3), midSize(3)} {
		_, m := writeHorizon(t, cfg, generate.HorizonOptions{})
		checkCounts(t, cfg, m)
	}
}

// tree returns every file of dir with its content's hash.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		sum := sha256.Sum256(b)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestHorizonDeterministic: the same configuration gives the same
// directory, byte for byte (manifest included); another seed another one,
// with other ids and SIDs.
func TestHorizonDeterministic(t *testing.T) {
	for _, cfg := range []generate.Config{demo(t, 7), midSize(7)} {
		a, _ := writeHorizon(t, cfg, generate.HorizonOptions{})
		b, _ := writeHorizon(t, cfg, generate.HorizonOptions{})
		ta, tb := tree(t, a), tree(t, b)
		if fmt.Sprint(ta) != fmt.Sprint(tb) {
			t.Fatalf("two runs with seed %d differ", cfg.Seed)
		}
		cfg.Seed = 8
		c, _ := writeHorizon(t, cfg, generate.HorizonOptions{})
		tc := tree(t, c)
		for _, name := range []string{"global/sites.json", "global/ad-users-or-groups.json", horizon.ManifestFile} {
			if ta[name] == tc[name] {
				t.Errorf("seeds 7 and 8 give the same %s", name)
			}
		}
	}
}

// TestHorizonTarget: the directory is refused when it holds something
// other than a pull; --replace replaces a pull; a failed write leaves
// nothing behind.
func TestHorizonTarget(t *testing.T) {
	cfg := demo(t, 1)
	dir := filepath.Join(t.TempDir(), "pull")
	if _, err := generate.WriteHorizon(dir, cfg, generate.HorizonOptions{}); err != nil {
		t.Fatal(err)
	}
	var te *horizon.TargetError
	if _, err := generate.WriteHorizon(dir, cfg, generate.HorizonOptions{}); !errors.As(err, &te) {
		t.Fatalf("a second write over the pull: %v, want a TargetError", err)
	}
	cfg.Seed = 2
	if _, err := generate.WriteHorizon(dir, cfg, generate.HorizonOptions{Replace: true}); err != nil {
		t.Fatalf("--replace: %v", err)
	}
	if m, err := horizon.ReadManifest(dir); err != nil || m.Generated.Seed != 2 {
		t.Fatalf("after --replace: %v, %+v", err, m)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := generate.WriteHorizon(other, cfg, generate.HorizonOptions{Replace: true}); !errors.As(err, &te) {
		t.Fatalf("--replace over a directory that is not a pull: %v", err)
	}
	var ce *generate.ConfigError
	bad := filepath.Join(t.TempDir(), "bad")
	cfg.Pods = 0
	if _, err := generate.WriteHorizon(bad, cfg, generate.HorizonOptions{}); !errors.As(err, &ce) {
		t.Fatalf("invalid counts: %v", err)
	}
	if _, err := generate.WriteHorizon(bad, generate.Config{Seed: 7}, generate.HorizonOptions{}); !errors.As(err, &ce) {
		t.Fatalf("no pod: %v", err)
	}
	if _, err := generate.WriteHorizon(bad, demo(t, 1), generate.HorizonOptions{PageSize: 1001}); !errors.As(err, &ce) {
		t.Fatalf("page size 1001: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(bad))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".cpactl-horizon-pull-") || e.Name() == "bad" {
			t.Errorf("a refused write left %s", e.Name())
		}
	}
}

func BenchmarkGenerateHorizonCPAMax(b *testing.B) {
	cfg, err := generate.Preset(generate.PresetCPAMax)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Seed = 1
	for i := 0; i < b.N; i++ {
		dir := filepath.Join(b.TempDir(), "pull")
		if _, err := generate.WriteHorizon(dir, cfg, generate.HorizonOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
