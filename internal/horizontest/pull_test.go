package horizontest

import (
	"context"
	"path/filepath"
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
