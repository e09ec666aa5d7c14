package horizon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cpactl/cpactl/progress"
)

// endpoint is one read of the pull.
type endpoint struct {
	key string
	// paths, newest first: a 404 tries the next (an older server).
	paths    []string
	paged    bool
	required bool // the federation cannot be built without it
	query    url.Values
	// fallback is the note when a path after the first answered.
	fallback string
}

// federationEndpoints are read once, from the server the pull was given:
// they live in the global (CPA) LDAP or are federation-wide queries
// (NOTES §b, §f).
var federationEndpoints = []endpoint{
	{key: "cpa", paths: []string{"/federation/v2/cpa", "/federation/v1/cpa"},
		fallback: "the CPA status carries no site redirection settings"},
	{key: "sites", paths: []string{"/federation/v3/sites", "/federation/v2/sites"}, required: true,
		fallback: "preferred sites are not available from it (they came with the 2512 API)"},
	{key: "pods", paths: []string{"/federation/v1/pods"}, required: true},
	{key: "monitor-pods", paths: []string{"/monitor/v2/pods"}},
	{key: "global-desktop-entitlements", paths: []string{"/inventory/v7/global-desktop-entitlements", "/inventory/v6/global-desktop-entitlements"},
		paged: true, required: true, fallback: "the desktop entitlements carry no preferred-site flags"},
	{key: "global-application-entitlements", paths: []string{"/inventory/v7/global-application-entitlements", "/inventory/v6/global-application-entitlements"},
		paged: true, required: true, fallback: "the application entitlements carry no preferred-site flags"},
	{key: "desktop-entitlement-members", paths: []string{"/entitlements/v1/global-desktop-entitlements"}, paged: true, required: true},
	{key: "application-entitlement-members", paths: []string{"/entitlements/v1/global-application-entitlements"}, paged: true, required: true},
	{key: "home-sites", paths: []string{"/federation/v2/home-sites"}, paged: true},
	{key: "pod-assignments", paths: []string{"/federation/v1/pod-assignments"}, paged: true},
	{key: "federation-access-groups", paths: []string{"/config/v2/federation-access-groups"}},
	{key: "ad-users-or-groups", paths: []string{"/external/v4/ad-users-or-groups"}, query: url.Values{"detailed_info": {"true"}}},
}

// The per-pod reads of the pull, from a Connection Server of each pod.
const (
	keyPodEndpoints = "pod-endpoints" // federation-wide, one per pod id: where the pod is
	keyPods         = "pods"
	keyConnServers  = "connection-servers"
	keyDesktopPools = "desktop-pools"
	keyPoolMetrics  = "desktop-pool-metrics"
	keySessions     = "global-sessions"
	pathPods        = "/federation/v1/pods"
	pathMetrics     = "/monitor/v3/desktop-pools/metrics"
	pathSessions    = "/inventory/v3/global-sessions"
	// metricsBatch is how many pool ids one metrics request names (a
	// URL of about 4 KB).
	metricsBatch = 100
)

// podEndpoints are pod-local: they live in the pod's own LDAP, and
// nothing in them names the pod (NOTES §b). Global sessions are a
// federation-wide query, but only the hosting pod's servers fill in the
// pool, farm, host and machine ids, so each pod is asked for its own.
var podEndpoints = []endpoint{
	{key: keyConnServers, paths: []string{"/config/v3/connection-servers"}},
	{key: keyDesktopPools, paths: []string{"/inventory/v12/desktop-pools"}, paged: true},
	{key: "farms", paths: []string{"/inventory/v9/farms"}, paged: true},
	{key: "rds-servers", paths: []string{"/inventory/v6/rds-servers"}, paged: true},
	{key: "application-pools", paths: []string{"/inventory/v10/application-pools"}, paged: true},
	{key: "machines", paths: []string{"/inventory/v10/machines"}, paged: true},
	{key: keySessions, paths: []string{pathSessions}, paged: true},
}

// PullOptions say what to pull and how to report.
type PullOptions struct {
	// URL is the REST base (BaseURL) of the Connection Server to start
	// from: it answers the federation-wide reads.
	URL string
	// PodURLs overrides where a pod is reached: pod name (or id) to a
	// REST base, when the admin's machine reaches pods by other names
	// than their endpoints' addresses.
	PodURLs map[string]string
	// AllowMissing names the pods (name or id) the pull may go without
	// when none of their Connection Servers answers.
	AllowMissing []string
	// Replace allows replacing an existing pull directory.
	Replace bool
	// Note reports what the pull says on stderr (also kept in the
	// manifest).
	Note func(string)
	// Records counts the records read (progress).
	Records *progress.Counter
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// podInfo is what the pull reads of a PodInfo.
type podInfo struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	SiteID   string `json:"site_id"`
	LocalPod bool   `json:"local_pod"`
}

// Pull reads the whole federation through the Connection Server at
// opts.URL and the servers of each pod, into dir: first into a temporary
// directory beside it, renamed to dir only when everything was read, so
// that dir holds a whole pull or nothing new. An existing dir that is not
// empty is refused (TargetError) unless opts.Replace and it holds a pull.
// Every session is logged out at the end, on error and when ctx is
// cancelled.
func (c *Client) Pull(ctx context.Context, dir string, opts PullOptions) (*Manifest, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Note == nil {
		opts.Note = func(string) {}
	}
	w, err := NewDirWriter(dir, opts.Replace)
	if err != nil {
		return nil, err
	}
	defer w.Discard()
	p := &puller{c: c, opts: opts, w: w, m: &Manifest{Format: FormatName, Version: FormatVersion,
		Started: opts.Now().UTC(), Server: Server{URL: opts.URL}, PageSize: c.cfg.PageSize, Counts: map[string]int{}}}
	if err := p.run(ctx); err != nil {
		return nil, err
	}
	p.m.Finished = opts.Now().UTC()
	p.m.Requests = c.Requests()
	if err := w.Commit(p.m); err != nil {
		return nil, err
	}
	return p.m, nil
}

type puller struct {
	c    *Client
	opts PullOptions
	w    *DirWriter
	m    *Manifest
}

func (p *puller) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.m.Notes = append(p.m.Notes, msg)
	p.opts.Note(msg)
}

func (p *puller) run(ctx context.Context) (err error) {
	main, err := p.c.Login(ctx, p.opts.URL)
	if err != nil {
		return err
	}
	defer p.logout(ctx, main, &err)
	var pods []podInfo
	for _, ep := range federationEndpoints {
		var each func(json.RawMessage) error
		switch ep.key {
		case "cpa":
			each = checkCPA(main.URL())
		case keyPods:
			each = func(raw json.RawMessage) error {
				var pi podInfo
				if err := json.Unmarshal(raw, &pi); err != nil || pi.ID == "" {
					return &ProtocolError{URL: main.URL(), Op: "GET " + pathPods, Err: errors.New("a pod without an id")}
				}
				pods = append(pods, pi)
				return nil
			}
		}
		used, err := p.read(ctx, main, ep, "global", "", each)
		if err != nil {
			return err
		}
		if ep.key == "sites" {
			p.m.PreferredSites = used == ep.paths[0]
		}
	}
	if err := p.checkPodNames(pods); err != nil {
		return err
	}
	var missing []string
	for i, pod := range pods {
		mp := Pod{ID: pod.ID, Name: pod.Name, SiteID: pod.SiteID, Dir: PodDir(i, pod.Name)}
		err := p.pullPod(ctx, main, pod, &mp)
		var pe *PodError
		switch {
		case errors.As(err, &pe) && p.allowedMissing(pod):
			mp.Missing, mp.Error = true, pe.Err.Error()
			p.note("pod %s did not answer (%v): pulled without it (--allow-missing-pod)", pod.Name, pe.Err)
		case errors.As(err, &pe):
			p.note("pod %s did not answer: %v", pod.Name, pe.Err)
			missing = append(missing, pod.Name)
		case err != nil:
			return err
		}
		p.m.Pods = append(p.m.Pods, mp)
	}
	if len(missing) > 0 {
		return &MissingPodsError{Pods: missing}
	}
	return nil
}

// MissingPodsError: pods none of whose Connection Servers answered, and
// which --allow-missing-pod did not name.
type MissingPodsError struct{ Pods []string }

func (e *MissingPodsError) Error() string {
	return fmt.Sprintf("%d %s did not answer: %s; nothing was written", len(e.Pods), plural(len(e.Pods), "pod", "pods"), strings.Join(e.Pods, ", "))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// logout ends a session; a failure is a note (the pull's data is whole),
// unless the pull failed already.
func (p *puller) logout(ctx context.Context, s *Session, err *error) {
	if lerr := s.Logout(ctx); lerr != nil && *err == nil {
		p.note("logging out of %s failed: %v", s.URL(), lerr)
	}
}

// checkCPA refuses a server whose CPA is not enabled.
func checkCPA(base string) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		var cpa struct {
			Status string `json:"local_connection_server_status"`
		}
		if err := json.Unmarshal(raw, &cpa); err != nil {
			return &ProtocolError{URL: base, Op: "GET /federation/v2/cpa", Err: err}
		}
		if cpa.Status != "" && cpa.Status != "ENABLED" {
			return &ServerError{URL: base, Op: "GET /federation/v2/cpa", Status: 200,
				Message: fmt.Sprintf("Cloud Pod Architecture is %s on this Connection Server, not ENABLED", cpa.Status)}
		}
		return nil
	}
}

// checkPodNames refuses a --pod-url or --allow-missing-pod that names no
// pod of the federation.
func (p *puller) checkPodNames(pods []podInfo) error {
	known := func(name string) bool {
		for _, pod := range pods {
			if strings.EqualFold(pod.Name, name) || pod.ID == name {
				return true
			}
		}
		return false
	}
	names := append([]string(nil), p.opts.AllowMissing...)
	for n := range p.opts.PodURLs {
		names = append(names, n)
	}
	for _, n := range names {
		if !known(n) {
			all := make([]string, len(pods))
			for i, pod := range pods {
				all[i] = pod.Name
			}
			return &UnknownPodError{Pod: n, Known: all}
		}
	}
	return nil
}

// UnknownPodError: --pod-url or --allow-missing-pod names a pod the
// federation does not have.
type UnknownPodError struct {
	Pod   string
	Known []string
}

func (e *UnknownPodError) Error() string {
	return fmt.Sprintf("the federation has no pod %q (its pods: %s)", e.Pod, strings.Join(e.Known, ", "))
}

func (p *puller) allowedMissing(pod podInfo) bool {
	for _, n := range p.opts.AllowMissing {
		if strings.EqualFold(n, pod.Name) || n == pod.ID {
			return true
		}
	}
	return false
}

// podURL is the --pod-url given for pod, if any.
func (p *puller) podURL(pod podInfo) string {
	for n, u := range p.opts.PodURLs {
		if strings.EqualFold(n, pod.Name) || n == pod.ID {
			return u
		}
	}
	return ""
}

// pullPod reads a pod's pod-local endpoints from one of its Connection
// Servers: the server the pull was given when it is in the pod, else the
// --pod-url, else each enabled endpoint of the pod in turn. No server
// answering is a PodError.
func (p *puller) pullPod(ctx context.Context, main *Session, pod podInfo, mp *Pod) error {
	if err := p.w.Mkdir(mp.Dir); err != nil {
		return err
	}
	var s *Session
	switch {
	case pod.LocalPod:
		s = main
	default:
		var err error
		s, err = p.podSession(ctx, main, pod, mp)
		if err != nil {
			return err
		}
		defer func() { _ = p.logoutQuiet(ctx, s) }()
	}
	mp.Server = &Server{URL: s.URL()}
	for _, ep := range podEndpoints {
		var each func(json.RawMessage) error
		var ids []string
		switch ep.key {
		case keyConnServers:
			each = func(raw json.RawMessage) error {
				var cs struct {
					Name    string `json:"name"`
					Version string `json:"version"`
					Local   bool   `json:"local_connection_server"`
				}
				if json.Unmarshal(raw, &cs) == nil && cs.Local {
					mp.Server.Name, mp.Server.Version = cs.Name, cs.Version
				}
				return nil
			}
		case keyDesktopPools:
			each = func(raw json.RawMessage) error {
				var pool struct {
					ID   string `json:"id"`
					Type string `json:"type"`
				}
				if json.Unmarshal(raw, &pool) == nil && pool.ID != "" && pool.Type != "RDS" {
					ids = append(ids, pool.ID)
				}
				return nil
			}
		case keySessions:
			ep.query = url.Values{"pod_id": {pod.ID}}
		}
		if _, err := p.read(ctx, s, ep, mp.Dir, pod.ID, each); err != nil {
			return err
		}
		if ep.key == keyDesktopPools {
			if err := p.readMetrics(ctx, s, ids, mp.Dir, pod.ID); err != nil {
				return err
			}
		}
	}
	if s == main && p.m.Server.Version == "" {
		p.m.Server.Name, p.m.Server.Version = mp.Server.Name, mp.Server.Version
	}
	return nil
}

// logoutQuiet logs out of a pod's server; a failure is a note.
func (p *puller) logoutQuiet(ctx context.Context, s *Session) error {
	err := s.Logout(ctx)
	if err != nil && ctx.Err() == nil {
		p.note("logging out of %s failed: %v", s.URL(), err)
	}
	return err
}

// podSession logs in to a Connection Server of pod and checks that it
// answers as that pod (its /federation/v1/pods says local_pod).
func (p *puller) podSession(ctx context.Context, main *Session, pod podInfo, mp *Pod) (*Session, error) {
	var urls []string
	if u := p.podURL(pod); u != "" {
		urls = []string{u}
	} else {
		ep := endpoint{key: keyPodEndpoints, paths: []string{pathPods + "/" + url.PathEscape(pod.ID) + "/endpoints"}, required: true}
		var bad []string
		_, err := p.read(ctx, main, ep, mp.Dir, pod.ID, func(raw json.RawMessage) error {
			var e struct {
				Address string `json:"server_address"`
				Enabled *bool  `json:"enabled"`
			}
			if json.Unmarshal(raw, &e) != nil || (e.Enabled != nil && !*e.Enabled) {
				return nil
			}
			u, err := podBaseURL(e.Address)
			if err != nil {
				bad = append(bad, e.Address)
				return nil
			}
			urls = append(urls, u)
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(urls) == 0 {
			return nil, &PodError{Pod: pod.Name, Err: fmt.Errorf("no enabled endpoint with a usable address (%d unusable); pass --pod-url %s=https://HOST", len(bad), pod.Name)}
		}
	}
	var last error
	for _, u := range urls {
		s, err := p.c.Login(ctx, u)
		var ue *UnreachableError
		if errors.As(err, &ue) && !ue.Certificate {
			last = err
			continue
		}
		if err != nil {
			return nil, err
		}
		local := ""
		_, err = p.read(ctx, s, endpoint{key: keyPods, paths: []string{pathPods}, required: true}, mp.Dir, pod.ID, func(raw json.RawMessage) error {
			var pi podInfo
			if json.Unmarshal(raw, &pi) == nil && pi.LocalPod {
				local = pi.ID
			}
			return nil
		})
		if err == nil && local != pod.ID {
			err = fmt.Errorf("%s answers as another pod (local pod id %q, not %s's %q): check --pod-url", u, local, pod.Name, pod.ID)
		}
		if err != nil {
			_ = s.Logout(ctx)
			return nil, err
		}
		return s, nil
	}
	return nil, &PodError{Pod: pod.Name, Err: last}
}

// readMetrics reads the metrics of a pod's desktop pools (capacity and
// sessions), metricsBatch ids a request; RDS desktop pools have none.
func (p *puller) readMetrics(ctx context.Context, s *Session, ids []string, dir, pod string) error {
	for b := 0; b*metricsBatch < len(ids); b++ {
		batch := ids[b*metricsBatch : min(len(ids), (b+1)*metricsBatch)]
		name := PageName(dir, keyPoolMetrics, b+1)
		f, err := p.w.Create(name)
		if err != nil {
			return err
		}
		pg, err := s.Read(ctx, pathMetrics, url.Values{"ids": batch}, f, nil)
		if err == nil {
			err = f.Close()
		} else {
			f.Abort()
		}
		var nf *NotFoundError
		if errors.As(err, &nf) {
			p.skip(endpoint{key: keyPoolMetrics}, pathMetrics, pod, s)
			return nil
		}
		if err != nil {
			return err
		}
		p.addFile(File{Name: name, Endpoint: keyPoolMetrics, Path: pathMetrics, Pod: pod, Page: b + 1, Server: s.URL()}, pg, f)
	}
	return nil
}

// read reads one endpoint from s into files under dir (global, or the
// pod's directory), trying its paths in order on 404. It returns the path
// that answered ("" when none did and the endpoint is not required).
func (p *puller) read(ctx context.Context, s *Session, ep endpoint, dir, pod string, each func(json.RawMessage) error) (string, error) {
	for i, pth := range ep.paths {
		err := p.readPath(ctx, s, ep, pth, dir, pod, each)
		var nf *NotFoundError
		if !errors.As(err, &nf) {
			if err == nil && i > 0 {
				p.note("%s has no %s (a server older than 2512): read %s instead; %s", s.URL(), ep.paths[0], pth, ep.fallback)
			}
			return pth, err
		}
		p.skip(ep, pth, pod, s)
		if i == len(ep.paths)-1 {
			if ep.required {
				return "", err
			}
			p.note("%s has no %s: skipped (noted in the manifest)", s.URL(), pth)
			return "", nil
		}
	}
	return "", nil
}

func (p *puller) skip(ep endpoint, pth, pod string, s *Session) {
	p.m.Skipped = append(p.m.Skipped, Skip{Endpoint: ep.key, Path: pth, Pod: pod, Server: s.URL(), Status: 404})
}

// readPath reads one path, paged or not, one file per answer.
func (p *puller) readPath(ctx context.Context, s *Session, ep endpoint, pth, dir, pod string, each func(json.RawMessage) error) error {
	query := ""
	if len(ep.query) > 0 {
		query = ep.query.Encode()
	}
	count := func(raw json.RawMessage) error {
		p.opts.Records.Add(1)
		if each != nil {
			return each(raw)
		}
		return nil
	}
	if !ep.paged {
		name := PageName(dir, ep.key, 0)
		f, err := p.w.Create(name)
		if err != nil {
			return err
		}
		pg, err := s.Read(ctx, pth, ep.query, f, count)
		if err == nil {
			err = f.Close()
		}
		if err != nil {
			f.Abort()
			return err
		}
		p.addFile(File{Name: name, Endpoint: ep.key, Path: pth, Query: query, Pod: pod, Server: s.URL()}, pg, f)
		return nil
	}
	var open *FileWriter
	err := s.ReadPages(ctx, pth, ep.query, func(n int) (io.Writer, func(Page) error, error) {
		name := PageName(dir, ep.key, n)
		f, err := p.w.Create(name)
		if err != nil {
			return nil, nil, err
		}
		open = f
		return f, func(pg Page) error {
			open = nil
			if err := f.Close(); err != nil {
				return err
			}
			p.addFile(File{Name: name, Endpoint: ep.key, Path: pth, Query: query, Pod: pod, Page: n, Server: s.URL()}, pg, f)
			return nil
		}, nil
	}, count)
	if open != nil {
		open.Abort()
	}
	return err
}

func (p *puller) addFile(f File, pg Page, fw *FileWriter) {
	f.Records, f.Bytes, f.SHA256 = pg.Records, pg.Bytes, fw.SHA256()
	p.m.Files = append(p.m.Files, f)
	p.m.Counts[f.Endpoint] += pg.Records
}

// slug is a pod name as a piece of a file name: letters, digits, '.',
// '_' and '-' kept, anything else '_', at most 40 bytes.
func slug(name string) string {
	var b strings.Builder
	for _, r := range name {
		if b.Len() >= 40 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == '.' && b.Len() > 0:
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "pod"
	}
	return b.String()
}

// CheckTarget says whether a pull may be written to dir: it does not
// exist (its parent does), it is an empty directory, or, with replace, a
// directory holding a pull. Anything else is a TargetError.
func CheckTarget(dir string, replace bool) error {
	if dir == "" {
		return &TargetError{Dir: dir, Reason: "no directory given", Hint: "pass -o DIR"}
	}
	fi, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		parent := filepath.Dir(filepath.Clean(dir))
		if pfi, err := os.Stat(parent); err != nil || !pfi.IsDir() {
			return &TargetError{Dir: dir, Reason: "its parent directory does not exist", Hint: "create " + parent + " first"}
		}
		return nil
	}
	if err != nil {
		return &TargetError{Dir: dir, Reason: err.Error()}
	}
	if !fi.IsDir() {
		return &TargetError{Dir: dir, Reason: "exists and is not a directory", Hint: "pass -o with a new directory"}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return &TargetError{Dir: dir, Reason: err.Error()}
	}
	if len(entries) == 0 {
		return nil
	}
	if !replace {
		return &TargetError{Dir: dir, Reason: "exists and is not empty", Hint: "pass --replace to replace an earlier pull, or -o with a new directory"}
	}
	if _, err := ReadManifest(dir); err != nil {
		return &TargetError{Dir: dir, Reason: "is not a pull directory (no cpactl manifest.json): --replace only replaces a pull", Hint: "pass -o with a new directory"}
	}
	return nil
}

// install moves the finished pull tmp to dir: renamed into place, after
// an empty dir is removed, or an earlier pull moved aside (and removed
// once the new one is in place).
func install(tmp, dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	case fi.IsDir():
		if os.Remove(dir) != nil { // not empty: an earlier pull (CheckTarget)
			old := tmp + ".old"
			if err := os.Rename(dir, old); err != nil {
				return fmt.Errorf("cannot move the earlier pull %s aside: %w", dir, err)
			}
			if err := os.Rename(tmp, dir); err != nil {
				_ = os.Rename(old, dir)
				return fmt.Errorf("cannot write %s: %w", dir, err)
			}
			return os.RemoveAll(old)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("cannot write %s: %w", dir, err)
	}
	return nil
}
