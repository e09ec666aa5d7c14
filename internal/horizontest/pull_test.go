package horizontest

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cpactl/cpactl/horizon"
)

// pullFrom pulls the federation f into dir with a page size, reaching
// every pod by its test server (--pod-url).
func pullFrom(t *testing.T, f *Federation, dir string, size int) *horizon.Manifest {
	t.Helper()
	c, err := horizon.NewClient(horizon.Config{CAFile: f.CAFile, PageSize: size}, horizon.Credentials{Domain: Domain, User: User, Password: Password})
	if err != nil {
		t.Fatal(err)
	}
	urls := map[string]string{}
	for _, p := range f.Pods() {
		if p != f.MainPod() {
			urls[p], _ = horizon.BaseURL(f.URL(p))
		}
	}
	main, _ := horizon.BaseURL(f.URL(f.MainPod()))
	m, err := c.Pull(context.Background(), dir, horizon.PullOptions{URL: main, PodURLs: urls})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestServesAPull: a pull of the fixtures, served as a pull directory and
// pulled again, gives the same files byte for byte, with pages of the
// pull's size (sent from the files) and of another (cut from the
// records), and the same number of requests.
func TestServesAPull(t *testing.T) {
	f := Start(t, "seed-000")
	f.AddSessions("uk-pod-1", 5)
	first := filepath.Join(t.TempDir(), "first")
	m1 := pullFrom(t, f, first, 2)
	g := StartPull(t, first)
	if g.MainPod() != "india-pod-1" {
		t.Errorf("the pull's main pod is %s, want india-pod-1", g.MainPod())
	}
	for _, size := range []int{2, 3} {
		again := filepath.Join(t.TempDir(), "again")
		m2 := pullFrom(t, g, again, size)
		if m2.Counts["global-sessions"] != 5 || len(m2.Pods) != 5 {
			t.Errorf("pages of %d: pulled %v", size, m2.Counts)
		}
		if size != 2 {
			continue
		}
		if len(m2.Files) != len(m1.Files) || m2.Requests != m1.Requests {
			t.Fatalf("%d files in %d requests, the first pull %d in %d", len(m2.Files), m2.Requests, len(m1.Files), m1.Requests)
		}
		for i := range m1.Files {
			a, b := m1.Files[i], m2.Files[i]
			if a.Name != b.Name || a.SHA256 != b.SHA256 || a.Records != b.Records {
				t.Errorf("file %d: %s %s %d, then %s %s %d", i, a.Name, a.SHA256, a.Records, b.Name, b.SHA256, b.Records)
			}
		}
	}
}

// TestPullIsReadOnly: the servers of a pull directory refuse writes (405)
// and leave its files as they were.
func TestPullIsReadOnly(t *testing.T) {
	f := Start(t, "seed-000")
	dir := filepath.Join(t.TempDir(), "pull")
	m := pullFrom(t, f, dir, 1000)
	g := StartPull(t, dir)
	c := testClient(t, g)
	tk := c.login(t, g.URL(g.MainPod()))
	req, err := http.NewRequest(http.MethodPut, g.URL(g.MainPod())+"/rest/federation/v3/sites/"+m.Pods[0].SiteID,
		strings.NewReader(`{"name":"India"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tk.Access)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("PUT on a pull directory's server: %d, want 405", resp.StatusCode)
	}
	again, err := horizon.ReadManifest(dir)
	if err != nil || len(again.Files) != len(m.Files) {
		t.Errorf("the pull changed: %v", err)
	}
}
