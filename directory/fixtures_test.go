package directory

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

// TestFixturesLoadAndRead loads every fixture into a slapd with cpactl's
// schema (which proves it valid against the schema) and reads every
// topology object back, live and as a --from snapshot, with the same
// results.
func TestFixturesLoadAndRead(t *testing.T) {
	files, err := filepath.Glob("../fixtures/*.ldif")
	if err != nil || len(files) < 2 {
		t.Fatalf("fixtures: %v %v", files, err)
	}
	for _, file := range files {
		if filepath.Base(file) == "lint-broken.ldif" {
			continue // deliberately broken: fixtures/lint_test.go loads and lints it
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			srv := slapdtest.Start(t, slapdtest.Config{LDIF: string(data)})
			c, err := ldapconn.Dial(ldapconn.Options{URLs: []string{srv.URL}, BindDN: srv.AdminDN(), Password: slapdtest.AdminPassword})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			snap, err := ParseSnapshot(string(data))
			if err != nil {
				t.Fatal(err)
			}
			live, offline := NewStore(c, srv.Base), NewStore(snap, srv.Base)
			for _, st := range []*Store{live, offline} {
				sites, err := st.Sites()
				if err != nil || len(sites) == 0 {
					t.Fatalf("sites: %d, %v", len(sites), err)
				}
				for _, s := range sites {
					if len(s.PreferredSites) != len(s.PreferredRaw) {
						t.Errorf("site %s: preferred list %q does not decode cleanly", s.Name, s.PreferredRaw)
					}
					for _, p := range s.PreferredSites {
						if _, err := st.Site(p); err != nil {
							t.Errorf("site %s prefers %s: %v", s.Name, p, err)
						}
					}
				}
				pods, err := st.Pods()
				if err != nil || len(pods) == 0 {
					t.Fatalf("pods: %v", err)
				}
				for _, p := range pods {
					if _, err := st.Site(p.Site); err != nil {
						t.Errorf("pod %s: %v", p.Name, err)
					}
				}
				if _, err := st.ConnectionServers(); err != nil {
					t.Fatal(err)
				}
				if _, err := st.Users(); err != nil {
					t.Fatal(err)
				}
				if _, err := st.Groups(); err != nil {
					t.Fatal(err)
				}
				rows, err := st.HomeSites("")
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range rows {
					principal := r.UserDN + r.GroupDN
					if want := st.DIT.HomeSite(principal, r.EntitlementDN); !ldapschema.EqualDN(want, r.DN) {
						t.Errorf("home-site row %s should be named %s", r.DN, want)
					}
					if e, err := st.Entry(r.SiteDN); err != nil || e == nil {
						t.Errorf("home-site row %s names a missing site %s", r.DN, r.SiteDN)
					}
				}
			}
			// The live directory and the snapshot hold the same topology.
			ls, _ := live.Sites()
			ss, _ := offline.Sites()
			if len(ls) != len(ss) {
				t.Fatalf("live %d sites, snapshot %d", len(ls), len(ss))
			}
			for i := range ls {
				if ls[i].Name != ss[i].Name || len(ls[i].PreferredSites) != len(ss[i].PreferredSites) {
					t.Errorf("site %d: live %+v, snapshot %+v", i, ls[i], ss[i])
				}
			}
		})
	}
}
