package horizon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cpactl/cpactl/horizon"
	"github.com/cpactl/cpactl/internal/horizontest"
)

// waits records the 429 waits instead of sleeping.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

type setup struct {
	f     *horizontest.Federation
	cfg   horizon.Config
	cred  horizon.Credentials
	opts  horizon.PullOptions
	dir   string
	waits *waits
	notes []string
}

// newSetup starts the seed-000 federation and a pull from india-pod-1's
// server, every other pod reached through --pod-url.
func newSetup(t *testing.T) *setup {
	f := horizontest.Start(t, "seed-000")
	w := &waits{}
	s := &setup{f: f, waits: w, dir: filepath.Join(t.TempDir(), "pull"),
		cfg:  horizon.Config{CAFile: f.CAFile, Timeout: 10 * time.Second, Sleep: w.sleep},
		cred: horizon.Credentials{Domain: horizontest.Domain, User: horizontest.User, Password: horizontest.Password}}
	s.opts = horizon.PullOptions{URL: f.URL("india-pod-1") + "/rest", PodURLs: map[string]string{}, Note: func(m string) { s.notes = append(s.notes, m) }}
	for _, p := range f.Pods()[1:] {
		s.opts.PodURLs[p] = f.URL(p) + "/rest"
	}
	return s
}

func (s *setup) pull(t *testing.T) (*horizon.Manifest, error) {
	return s.pullCtx(t, context.Background())
}

func (s *setup) pullCtx(t *testing.T, ctx context.Context) (*horizon.Manifest, error) {
	t.Helper()
	c, err := horizon.NewClient(s.cfg, s.cred)
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Pull(ctx, s.dir, s.opts)
	if err == nil && m.Requests != c.Requests() {
		t.Errorf("manifest counts %d requests, the client sent %d", m.Requests, c.Requests())
	}
	return m, err
}

// allLoggedOut fails unless every login the servers saw was logged out.
func (s *setup) allLoggedOut(t *testing.T) {
	t.Helper()
	sessions := s.f.Sessions()
	if len(sessions) == 0 {
		t.Fatal("no login")
	}
	for i, ss := range sessions {
		if !ss.LoggedOut {
			t.Errorf("session %d on %s was not logged out", i, ss.Pod)
		}
	}
}

// nothingWritten fails if the pull directory or a temporary one exists.
func (s *setup) nothingWritten(t *testing.T) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(s.dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("left behind: %s", e.Name())
	}
}

func records(t *testing.T, dir string, m *horizon.Manifest, endpoint, pod string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, f := range m.FilesOf(endpoint, pod) {
		err := horizon.EachRecord(dir, f, func(raw json.RawMessage) error {
			var v map[string]any
			if err := json.Unmarshal(raw, &v); err != nil {
				return err
			}
			out = append(out, v)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestPullSeed000(t *testing.T) {
	s := newSetup(t)
	m, err := s.pull(t)
	if err != nil {
		t.Fatal(err)
	}
	s.allLoggedOut(t)
	read, err := horizon.ReadManifest(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(read.Files) != len(m.Files) || !read.PreferredSites || read.Server.Version != "8.17.0-25120000" || read.Server.Name != "india-cs-1" {
		t.Errorf("manifest read back: %d files (want %d), preferred sites %v, server %+v", len(read.Files), len(m.Files), read.PreferredSites, read.Server)
	}
	want := map[string]int{"sites": 4, "pods": 25, "monitor-pods": 4, "global-desktop-entitlements": 1, "desktop-entitlement-members": 1,
		"ad-users-or-groups": 4, "connection-servers": 5, "desktop-pools": 5, "desktop-pool-metrics": 5, "cpa": 1, "federation-access-groups": 1}
	for k, n := range want {
		if m.Counts[k] != n {
			t.Errorf("counts[%s] = %d, want %d", k, m.Counts[k], n)
		}
	}
	// Federation-wide reads from the given server, pod-local ones from
	// each pod's own.
	for _, f := range m.Files {
		wantServer := s.opts.URL
		if f.Pod != "" && f.Endpoint != "pod-endpoints" {
			for _, p := range m.Pods {
				if p.ID == f.Pod {
					wantServer = s.f.URL(p.Name) + "/rest"
				}
			}
		}
		if f.Server != wantServer {
			t.Errorf("%s answered by %s, want %s", f.Name, f.Server, wantServer)
		}
	}
	perPod := map[string]int{}
	for _, r := range s.f.Requests() {
		if r.Path == "/config/v3/connection-servers" {
			perPod[r.Pod]++
		}
		if r.Path == "/inventory/v3/global-sessions" && r.Query != "page=1&pod_id="+podID(m, r.Pod)+"&size=1000" {
			t.Errorf("%s asked %s?%s", r.Pod, r.Path, r.Query)
		}
	}
	if len(perPod) != 5 {
		t.Errorf("connection-servers asked of %v, want each pod's server once", perPod)
	}
	// The records are the fixtures'.
	sites := records(t, s.dir, m, "sites", "")
	if len(sites) != 4 || sites[0]["name"] != "India" || len(sites[0]["preferred_sites"].([]any)) != 2 {
		t.Errorf("sites: %v", sites)
	}
	for _, p := range m.Pods {
		pools := records(t, s.dir, m, "desktop-pools", p.ID)
		if len(pools) != 1 || p.Server == nil || p.Missing {
			t.Errorf("pod %s: %d pools, server %v, missing %v", p.Name, len(pools), p.Server, p.Missing)
		}
		if p.Server != nil && p.Server.Name == "" {
			t.Errorf("pod %s: no Connection Server name", p.Name)
		}
	}
	// The bytes are what the server sent: a fixture served unchanged
	// (connection-servers is written to the wire as is).
	fx, err := os.ReadFile(filepath.Join(horizontest.Dir("seed-000"), "pods", "india-pod-1", "cpa.json"))
	if err != nil {
		t.Fatal(err)
	}
	cpa := m.FilesOf("cpa", "")
	if len(cpa) != 1 {
		t.Fatalf("cpa files %+v", cpa)
	}
	if got, _ := os.ReadFile(filepath.Join(s.dir, cpa[0].Name)); !bytes.Equal(got, fx) {
		t.Errorf("%s is not the server's answer byte for byte", cpa[0].Name)
	}
	// Every request the servers saw was counted, and the fewest the API
	// allows: one login and one logout per pod, no refresh, no retry.
	if got := len(s.f.Requests()); int64(got) != m.Requests {
		t.Errorf("the servers saw %d requests, the manifest says %d", got, m.Requests)
	}
	t.Logf("seed-000: %d requests, %d files", m.Requests, len(m.Files))
}

func podID(m *horizon.Manifest, name string) string {
	for _, p := range m.Pods {
		if p.Name == name {
			return p.ID
		}
	}
	return "?"
}

func TestPullPaging(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sessions int
		lying    bool
		pages    int
	}{
		{"short last page", 5, false, 3},
		{"full last page without HAS_MORE_RECORDS", 4, false, 2},
		{"last page claims more: the page past the end answers 400", 4, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t)
			s.f.AddSessions("uk-pod-1", tc.sessions)
			s.f.SetFaults(horizontest.Faults{LyingLastPage: tc.lying})
			s.cfg.PageSize = 2
			m, err := s.pull(t)
			if err != nil {
				t.Fatal(err)
			}
			files := m.FilesOf("global-sessions", podID(m, "uk-pod-1"))
			if len(files) != tc.pages {
				t.Fatalf("%d pages, want %d", len(files), tc.pages)
			}
			if got := len(records(t, s.dir, m, "global-sessions", podID(m, "uk-pod-1"))); got != tc.sessions {
				t.Errorf("%d sessions, want %d", got, tc.sessions)
			}
			past := 0
			for _, r := range s.f.Requests() {
				if r.Status == 400 {
					past++
				}
			}
			if want := map[bool]int{true: 1, false: 0}[tc.lying]; past < want || (!tc.lying && past != 0) {
				t.Errorf("%d answers 400", past)
			}
			s.allLoggedOut(t)
		})
	}
}

func TestPullThrottled(t *testing.T) {
	s := newSetup(t)
	s.f.SetFaults(horizontest.Faults{Throttle: 3, RetryAfter: "7"})
	if _, err := s.pull(t); err != nil {
		t.Fatal(err)
	}
	if len(s.waits.d) != 3 || s.waits.d[0] != 7*time.Second {
		t.Errorf("waits %v, want three of 7s", s.waits.d)
	}
	s.allLoggedOut(t)

	t.Run("without the header, growing waits", func(t *testing.T) {
		s := newSetup(t)
		s.f.SetFaults(horizontest.Faults{Throttle: 2})
		if _, err := s.pull(t); err != nil {
			t.Fatal(err)
		}
		if len(s.waits.d) != 2 || s.waits.d[0] != time.Second || s.waits.d[1] != 2*time.Second {
			t.Errorf("waits %v", s.waits.d)
		}
	})
	t.Run("a wait is capped", func(t *testing.T) {
		s := newSetup(t)
		s.f.SetFaults(horizontest.Faults{Throttle: 1, RetryAfter: "86400"})
		s.cfg.MaxWait = 5 * time.Second
		if _, err := s.pull(t); err != nil {
			t.Fatal(err)
		}
		if len(s.waits.d) != 1 || s.waits.d[0] != 5*time.Second {
			t.Errorf("waits %v", s.waits.d)
		}
	})
	t.Run("throttled for good", func(t *testing.T) {
		s := newSetup(t)
		s.f.SetFaults(horizontest.Faults{Throttle: 1000, RetryAfter: "1"})
		s.cfg.MaxThrottled = 4
		_, err := s.pull(t)
		var te *horizon.ThrottledError
		if !errors.As(err, &te) || te.Attempts != 4 {
			t.Fatalf("got %v, want a ThrottledError after 4 attempts", err)
		}
		s.nothingWritten(t)
	})
}

func TestPullTokenExpires(t *testing.T) {
	s := newSetup(t)
	s.f.SetFaults(horizontest.Faults{ExpireAfter: 6})
	m, err := s.pull(t)
	if err != nil {
		t.Fatal(err)
	}
	refreshes := 0
	for _, ss := range s.f.Sessions() {
		refreshes += ss.Refreshes
	}
	if refreshes != 1 {
		t.Errorf("%d refreshes, want 1", refreshes)
	}
	if m.Counts["desktop-pools"] != 5 {
		t.Errorf("pull incomplete: %v", m.Counts)
	}
	s.allLoggedOut(t)

	t.Run("refresh refused: log in again", func(t *testing.T) {
		s := newSetup(t)
		s.f.SetFaults(horizontest.Faults{ExpireAfter: 6, RefreshRefused: true})
		m, err := s.pull(t)
		if err != nil {
			t.Fatal(err)
		}
		if m.Counts["desktop-pools"] != 5 || len(s.f.Sessions()) != 6 {
			t.Errorf("counts %v, %d logins (want 6: one per pod and one again)", m.Counts, len(s.f.Sessions()))
		}
	})
}

func TestPullOlderServer(t *testing.T) {
	s := newSetup(t)
	s.f.SetFaults(horizontest.Faults{NoV3Sites: true})
	m, err := s.pull(t)
	if err != nil {
		t.Fatal(err)
	}
	if m.PreferredSites {
		t.Error("preferred sites claimed from a server without v3 sites")
	}
	if f := m.FilesOf("sites", ""); len(f) != 1 || f[0].Path != "/federation/v2/sites" {
		t.Errorf("sites read from %+v", f)
	}
	if !strings.Contains(strings.Join(s.notes, "\n"), "preferred sites are not available") {
		t.Errorf("notes %q", s.notes)
	}
	skipped := map[string]bool{}
	for _, sk := range m.Skipped {
		skipped[sk.Path] = sk.Status == 404
	}
	if !skipped["/federation/v3/sites"] || !skipped["/inventory/v7/global-desktop-entitlements"] {
		t.Errorf("skipped %+v", m.Skipped)
	}
	if ges := records(t, s.dir, m, "global-desktop-entitlements", ""); len(ges) != 1 || ges[0]["use_preferred_sites"] != nil {
		t.Errorf("entitlements %v", ges)
	}
}

func TestPullMissingPod(t *testing.T) {
	s := newSetup(t)
	s.f.Stop("uk-pod-1")
	_, err := s.pull(t)
	var mp *horizon.MissingPodsError
	if !errors.As(err, &mp) || len(mp.Pods) != 1 || mp.Pods[0] != "uk-pod-1" {
		t.Fatalf("got %v, want uk-pod-1 missing", err)
	}
	s.nothingWritten(t)
	s.allLoggedOut(t)

	s.opts.AllowMissing = []string{"UK-POD-1"}
	m, err := s.pull(t)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Pods {
		if (p.Name == "uk-pod-1") != p.Missing {
			t.Errorf("pod %s missing %v", p.Name, p.Missing)
		}
	}
	if !strings.Contains(strings.Join(m.Notes, "\n"), "uk-pod-1 did not answer") {
		t.Errorf("notes %q", m.Notes)
	}

	t.Run("a pod name that is not in the federation", func(t *testing.T) {
		s := newSetup(t)
		s.opts.AllowMissing = []string{"mars-pod-1"}
		_, err := s.pull(t)
		var up *horizon.UnknownPodError
		if !errors.As(err, &up) {
			t.Fatalf("got %v", err)
		}
		s.nothingWritten(t)
		s.allLoggedOut(t)
	})
	t.Run("a pod URL that answers as another pod", func(t *testing.T) {
		s := newSetup(t)
		s.opts.PodURLs["us-pod-1"] = s.f.URL("jp-pod-1") + "/rest"
		_, err := s.pull(t)
		if err == nil || !strings.Contains(err.Error(), "answers as another pod") {
			t.Fatalf("got %v", err)
		}
		s.nothingWritten(t)
		s.allLoggedOut(t)
	})
	t.Run("no --pod-url: the endpoints' addresses", func(t *testing.T) {
		// The fixtures' addresses (*.corp.example.com) are not this
		// machine's: the pods do not answer, and say so.
		s := newSetup(t)
		delete(s.opts.PodURLs, "jp-pod-1")
		s.opts.AllowMissing = []string{"jp-pod-1"}
		m, err := s.pull(t)
		if err != nil {
			t.Fatal(err)
		}
		if f := m.FilesOf("pod-endpoints", podID(m, "jp-pod-1")); len(f) != 1 {
			t.Errorf("endpoints of jp-pod-1: %+v", f)
		}
		if !m.Pods[4].Missing || !strings.Contains(m.Pods[4].Error, "jp-cs-1.corp.example.com") {
			t.Errorf("jp-pod-1: %+v", m.Pods[4])
		}
	})
}

func TestPullLoginRefused(t *testing.T) {
	s := newSetup(t)
	s.f.SetFaults(horizontest.Faults{LoginRefused: true})
	_, err := s.pull(t)
	var ae *horizon.AuthError
	if !errors.As(err, &ae) || ae.Status != 401 {
		t.Fatalf("got %v, want an AuthError", err)
	}
	if strings.Contains(err.Error(), horizontest.Password) {
		t.Error("the error holds the password")
	}
	s.nothingWritten(t)
}

// TestPullCancelled: a cancel (Ctrl-C) in the middle of the pull stops it,
// writes nothing and logs every session out.
func TestPullCancelled(t *testing.T) {
	s := newSetup(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.f.SetFaults(horizontest.Faults{Throttle: 1, ThrottlePod: "india-pod-2"})
	// The wait of india-pod-2's 429 comes after the first pod was read:
	// cancel there.
	s.cfg.Sleep = func(ctx context.Context, d time.Duration) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}
	_, err := s.pullCtx(t, ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	s.nothingWritten(t)
	s.allLoggedOut(t)

	t.Run("cancelled while reaching a pod", func(t *testing.T) {
		s := newSetup(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s.f.SetFaults(horizontest.Faults{Throttle: 1, ThrottlePod: "us-pod-1"})
		s.cfg.Sleep = func(ctx context.Context, d time.Duration) error {
			cancel()
			return ctx.Err()
		}
		_, err := s.pullCtx(t, ctx)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v", err)
		}
		s.nothingWritten(t)
		s.allLoggedOut(t)
		if n := len(s.f.Sessions()); n != 3 {
			t.Errorf("%d logins before the cancel, want 3 (india-pod-1, india-pod-2, uk-pod-1)", n)
		}
	})
}

// TestPullNoSecrets: the password and the tokens are nowhere in the pull.
func TestPullNoSecrets(t *testing.T) {
	s := newSetup(t)
	s.f.SetFaults(horizontest.Faults{ExpireAfter: 3})
	if _, err := s.pull(t); err != nil {
		t.Fatal(err)
	}
	tokenMark := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" // every token's header
	n := 0
	err := filepath.WalkDir(s.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		if bytes.Contains(b, []byte(horizontest.Password)) || bytes.Contains(b, []byte(tokenMark)) {
			t.Errorf("%s holds the password or a token", path)
		}
		return nil
	})
	if err != nil || n < 40 {
		t.Fatalf("%d files, %v", n, err)
	}
}

func TestCheckTarget(t *testing.T) {
	s := newSetup(t)
	if _, err := s.pull(t); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(other, "notes.txt")
	for _, tc := range []struct {
		name    string
		dir     string
		replace bool
		ok      bool
	}{
		{"new", filepath.Join(other, "new"), false, true},
		{"empty", t.TempDir(), false, true},
		{"a pull, not replaced", s.dir, false, false},
		{"a pull, replaced", s.dir, true, true},
		{"not a pull, even with --replace", other, true, false},
		{"a file", file, true, false},
		{"no parent", filepath.Join(other, "a", "b"), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := horizon.CheckTarget(tc.dir, tc.replace)
			var te *horizon.TargetError
			if tc.ok != (err == nil) || (err != nil && !errors.As(err, &te)) {
				t.Fatalf("got %v", err)
			}
		})
	}
	// Replacing: the new pull in place, the old one gone, nothing beside.
	before, _ := horizon.ReadManifest(s.dir)
	s.opts.Replace = true
	m, err := s.pull(t)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := horizon.ReadManifest(s.dir)
	if !after.Started.Equal(m.Started) || after.Started.Before(before.Started) {
		t.Errorf("not replaced")
	}
	entries, _ := os.ReadDir(filepath.Dir(s.dir))
	if len(entries) != 1 {
		t.Errorf("beside the pull: %v", entries)
	}
}

// TestEachRecordCallbackError: an error of the callback is what
// EachRecord returns (it was lost: errors.Unwrap of an error wrapping two
// errors is nil, so the reader's error became a success).
func TestEachRecordCallbackError(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sites.json"), []byte(`[{"id":"a"},{"id":"b"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("the reader stops")
	calls := 0
	err := horizon.EachRecord(dir, horizon.File{Name: "sites.json", Records: 2}, func(json.RawMessage) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("EachRecord returned %v after %d calls, want the callback's error after 1", err, calls)
	}
}
