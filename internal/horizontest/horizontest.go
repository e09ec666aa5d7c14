// Package horizontest is a test Horizon federation for cpactl's tests, as
// internal/slapdtest is a test slapd: one httptest TLS server per pod (one
// Connection Server each), answering the REST calls cpactl's pull makes
// from fixture JSON written after the 2512 swagger's schemas
// (testdata/<federation>/, checked by TestFixturesMatchSwagger), with
// faults a test can inject: 429 with X-Rate-Limit-Retry-After-Seconds, an
// access token that expires in the middle of a pull, a last page that
// claims more (the next answers 400), an older server without
// /federation/v3/sites, a pod that does not answer, a login refused.
// Sites, global entitlements and home sites are writable (write.go): the
// writes push makes are checked against the swagger, recorded, applied
// and served to the next read, with faults of their own (a 429 on a
// write, an answer lost after or before the server applied it, a read
// that lags behind a write, another administrator's change between two
// reads).
//
// The fixtures of seed-000 describe the federation of
// fixtures/resolve-seed-000.ldif: the same sites (India ranking UK then
// US), pods, Connection Servers, pools and their capacity and sessions,
// the entitlement, users and groups with SIDs.
//
// NewPull serves any pull directory instead (one `cpactl horizon pull`
// wrote, or `cpactl generate --format horizon`), each request answered
// from its files, pages included (pull.go); cmd/horizon-serve runs it as
// a process for scripts/bench.
package horizontest

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Credentials the test federation accepts.
const (
	Domain = "CORP"
	User   = "hzadmin"
	// Password is the test account's password; tests search for it in
	// everything cpactl writes.
	Password = "Hz-pa55-S3cret!9q"
)

// Route is one GET the test server answers from a fixture.
type Route struct {
	Path    string // under /rest; {id} matches a pod id
	Fixture string // the file under the federation's directory; {pod} is the answering pod's name, {id} the pod named by the path
	Schema  string // the swagger schema of the answer (of its items when Array)
	Array   bool
	Paged   bool
	// Transform derives an older version's answer from the fixture.
	Transform string
	// Item: the path ends in {item}, an object's id, and the answer is
	// that element of the fixture's list.
	Item bool
}

// Routes are every GET the test server answers.
var Routes = []Route{
	{Path: "/federation/v2/cpa", Fixture: "pods/{pod}/cpa.json", Schema: "PodFederationInfoV2"},
	{Path: "/federation/v3/sites", Fixture: "sites.json", Schema: "SiteInfoV3", Array: true},
	{Path: "/federation/v2/sites", Fixture: "sites.json", Schema: "SiteInfoV2", Array: true, Transform: "v2"},
	{Path: "/federation/v1/pods", Fixture: "pods.json", Schema: "PodInfo", Array: true},
	{Path: "/federation/v1/pods/{id}/endpoints", Fixture: "pods/{id}/endpoints.json", Schema: "PodEndpointInfo", Array: true},
	{Path: "/monitor/v2/pods", Fixture: "monitor-pods.json", Schema: "PodMonitorInfoV2", Array: true},
	{Path: "/inventory/v7/global-desktop-entitlements", Fixture: "global-desktop-entitlements.json", Schema: "GlobalDesktopEntitlementSummaryV7", Array: true, Paged: true},
	{Path: "/inventory/v6/global-desktop-entitlements", Fixture: "global-desktop-entitlements.json", Schema: "GlobalDesktopEntitlementSummaryV6", Array: true, Paged: true, Transform: "v6"},
	{Path: "/inventory/v7/global-application-entitlements", Fixture: "global-application-entitlements.json", Schema: "GlobalApplicationEntitlementSummaryV7", Array: true, Paged: true},
	{Path: "/inventory/v6/global-application-entitlements", Fixture: "global-application-entitlements.json", Schema: "GlobalApplicationEntitlementSummaryV6", Array: true, Paged: true, Transform: "v6"},
	{Path: "/entitlements/v1/global-desktop-entitlements", Fixture: "desktop-entitlement-members.json", Schema: "EntitlementInfo", Array: true, Paged: true},
	{Path: "/entitlements/v1/global-application-entitlements", Fixture: "application-entitlement-members.json", Schema: "EntitlementInfo", Array: true, Paged: true},
	{Path: "/federation/v2/home-sites", Fixture: "home-sites.json", Schema: "HomeSiteInfoV2", Array: true, Paged: true},
	{Path: "/federation/v1/pod-assignments", Fixture: "pod-assignments.json", Schema: "PodAssignmentInfo", Array: true, Paged: true},
	{Path: "/config/v2/federation-access-groups", Fixture: "federation-access-groups.json", Schema: "FederationAccessGroupInfoV2", Array: true},
	{Path: "/external/v4/ad-users-or-groups", Fixture: "ad-users-or-groups.json", Schema: "ADUserOrGroupInfoV4", Array: true},
	{Path: "/config/v3/connection-servers", Fixture: "pods/{pod}/connection-servers.json", Schema: "ConnectionServerInfoV3", Array: true},
	{Path: "/inventory/v12/desktop-pools", Fixture: "pods/{pod}/desktop-pools.json", Schema: "DesktopPoolInfoV12", Array: true, Paged: true},
	{Path: "/monitor/v3/desktop-pools/metrics", Fixture: "pods/{pod}/desktop-pool-metrics.json", Schema: "DesktopPoolMetricsInfoV3", Array: true},
	{Path: "/inventory/v9/farms", Fixture: "pods/{pod}/farms.json", Schema: "FarmInfoV9", Array: true, Paged: true},
	{Path: "/inventory/v6/rds-servers", Fixture: "pods/{pod}/rds-servers.json", Schema: "RDSServerInfoV6", Array: true, Paged: true},
	{Path: "/inventory/v10/application-pools", Fixture: "pods/{pod}/application-pools.json", Schema: "ApplicationPoolInfoV10", Array: true, Paged: true},
	{Path: "/inventory/v10/machines", Fixture: "pods/{pod}/machines.json", Schema: "MachineInfoV10", Array: true, Paged: true},
	{Path: "/inventory/v3/global-sessions", Fixture: "global-sessions.json", Schema: "GlobalSessionInfoV3", Array: true, Paged: true},
	// The objects push reads whole before it writes them.
	{Path: "/federation/v3/sites/{item}", Fixture: "sites.json", Schema: "SiteInfoV3", Item: true},
	{Path: "/inventory/v7/global-desktop-entitlements/{item}", Fixture: "global-desktop-entitlements.json", Schema: "GlobalDesktopEntitlementInfoV7", Item: true, Transform: "info"},
	{Path: "/inventory/v7/global-application-entitlements/{item}", Fixture: "global-application-entitlements.json", Schema: "GlobalApplicationEntitlementInfoV6", Item: true, Transform: "info"},
	{Path: "/federation/v2/home-sites/{item}", Fixture: "home-sites.json", Schema: "HomeSiteInfoV2", Item: true},
}

// Dir is the directory of a fixture federation: "seed-000".
func Dir(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata", name)
}

// Faults are what the federation's servers do wrong; set them with
// Federation.SetFaults (or before the first request).
type Faults struct {
	// Throttle: the next Throttle requests (any server, any path) answer
	// 429, with RetryAfter as X-Rate-Limit-Retry-After-Seconds ("" sends
	// none).
	Throttle   int
	RetryAfter string
	// ThrottlePod limits Throttle to the server of this pod.
	ThrottlePod string
	// ExpireAfter: after this many authenticated GETs (all servers), every
	// access token issued so far expires (401), once: a token that
	// expires in the middle of a pull.
	ExpireAfter int
	// RefreshRefused: /refresh answers 400 (the refresh token expired):
	// the client must log in again.
	RefreshRefused bool
	// LyingLastPage: the last page of a paged list still carries
	// HAS_MORE_RECORDS, so the client asks for the page past the end,
	// which answers 400.
	LyingLastPage bool
	// NoV3Sites: the servers are older than 2512: no /federation/v3/sites
	// and no v7 entitlements (404).
	NoV3Sites bool
	// LoginRefused: /login answers 401.
	LoginRefused bool

	// ThrottleWrites: the next ThrottleWrites writes answer 429 (retry
	// after 0 s).
	ThrottleWrites int
	// DropWrite: the next write's connection is closed without an
	// answer, after the server applied it (DropApplied) or before
	// (DropNotApplied); with DropThenDown every request after it is
	// dropped too (the server is gone: a read back cannot tell).
	DropWrite    string
	DropThenDown bool
	// ReadLag: after a write, the next ReadLag reads of the writable
	// fixtures still answer as before it (the documented cache lag).
	ReadLag int
	// ChangeOn: another administrator changes an object between two
	// reads of it.
	ChangeOn *ChangeOn
}

// Request is one request a server received.
type Request struct {
	Pod    string // the pod whose server answered
	Method string
	Path   string // under /rest
	Query  string
	Status int
	// Bearer is the access token sent, if any.
	Bearer string
	// Body is the body of a write (PUT, POST other than login, refresh
	// and logout, DELETE).
	Body []byte
}

// Federation is a running test federation.
type Federation struct {
	dir  string
	pods []podFixture
	pull *pullSource // answering from a pull directory (NewPull), not fixtures
	// CAFile is a PEM file of the CA of every server's certificate (for
	// --ca-file).
	CAFile string

	mu       sync.Mutex
	servers  map[string]*httptest.Server // by pod name
	faults   Faults
	tokens   map[string]*token
	gets     int
	expired  bool
	log      []Request
	sessions []Session
	extra    []map[string]any // AddSessions

	schemas    *Schemas
	state      map[string][]map[string]any // the writable fixtures
	stale      map[string][]map[string]any // the state before the last write (ReadLag)
	lagLeft    int
	invalid    []string
	nextID     int
	changeGets int
	down       bool
}

// Session counts what happened to one login.
type Session struct {
	Pod       string
	Refreshes int
	LoggedOut bool
}

type token struct {
	refresh bool
	session int // index in sessions
	valid   bool
}

type podFixture struct {
	ID, Name string
}

// Start starts one TLS server per pod of the fixture federation name
// (Dir(name)) and stops them when the test ends.
func Start(t interface {
	Helper()
	Fatal(args ...any)
	TempDir() string
	Cleanup(func())
}, name string) *Federation {
	t.Helper()
	f, err := New(name, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

// New starts the federation; tmp is where the CA file goes. Close stops
// it.
func New(name, tmp string) (*Federation, error) { return NewDir(Dir(name), tmp) }

// NewDir starts a federation from the fixtures in dir (a copy of one under
// testdata that a test changes: the servers read the fixtures at each
// request, so a change is seen by the next one).
func NewDir(dir, tmp string) (*Federation, error) {
	f := &Federation{dir: dir, servers: map[string]*httptest.Server{}, tokens: map[string]*token{}}
	b, err := os.ReadFile(filepath.Join(f.dir, "pods.json"))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &f.pods); err != nil {
		return nil, fmt.Errorf("pods.json: %w", err)
	}
	if err := f.loadState(); err != nil {
		return nil, err
	}
	if f.schemas, err = LoadSchemas(); err != nil {
		return nil, err
	}
	if err := f.start(tmp); err != nil {
		return nil, err
	}
	return f, nil
}

// start starts a TLS server per pod and writes the CA file into tmp.
func (f *Federation) start(tmp string) error {
	for _, p := range f.pods {
		srv := httptest.NewUnstartedServer(f.handler(p))
		srv.StartTLS()
		f.servers[p.Name] = srv
		if f.CAFile == "" {
			f.CAFile = filepath.Join(tmp, "horizon-ca.pem")
			pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
			if err := os.WriteFile(f.CAFile, pemBytes, 0o600); err != nil {
				f.Close()
				return err
			}
		}
	}
	return nil
}

// Close stops every server.
func (f *Federation) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.servers {
		s.Close()
	}
}

// Pods are the pod names, in the order of pods.json.
func (f *Federation) Pods() []string {
	names := make([]string, len(f.pods))
	for i, p := range f.pods {
		names[i] = p.Name
	}
	return names
}

// URL is the address of a pod's Connection Server: https://127.0.0.1:PORT.
func (f *Federation) URL(pod string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.servers[pod].URL
}

// AddSessions adds n synthetic connected desktop sessions of alice in pod
// (to the fixture's global sessions): enough records for several pages.
func (f *Federation) AddSessions(pod string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var id string
	for _, p := range f.pods {
		if p.Name == pod {
			id = p.ID
		}
	}
	for i := 0; i < n; i++ {
		f.extra = append(f.extra, map[string]any{
			"id": fmt.Sprintf("5e550000-0000-4000-8000-%012d", len(f.extra)+1), "user_id": "S-1-5-21-1004336348-1177238915-682003330-1101",
			"user_name": "alice", "pod_id": id, "pod_name": pod, "brokering_pod_id": id, "brokering_pod_name": pod,
			"session_state": "CONNECTED", "session_type": "DESKTOP", "session_protocol": "BLAST",
			"start_time": int64(1767225600000 + i), "brokered_remotely": false, "resourced_remotely": false,
			"client_data": map[string]any{"name": fmt.Sprintf("client-%d", i), "type": "WINDOWS", "address": "192.0.2.10", "version": "8.17.0"},
		})
	}
}

// Stop stops a pod's server: it no longer answers (connection refused).
func (f *Federation) Stop(pod string) {
	f.mu.Lock()
	s := f.servers[pod]
	f.mu.Unlock()
	s.Close()
}

// SetFaults replaces the faults in force.
func (f *Federation) SetFaults(fl Faults) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = fl
	f.gets = 0
	f.expired = false
	f.changeGets = 0
	f.down = false
}

// Requests returns every request received so far, in order.
func (f *Federation) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.log)
}

// Sessions returns every login so far.
func (f *Federation) Sessions() []Session {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sessions)
}

func (f *Federation) podByID(id string) (podFixture, bool) {
	for _, p := range f.pods {
		if p.ID == id {
			return p, true
		}
	}
	return podFixture{}, false
}

func (f *Federation) handler(me podFixture) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &recorder{ResponseWriter: w, status: 200}
		rest, ok := strings.CutPrefix(r.URL.Path, "/rest")
		bearer, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		auth := rest == "/login" || rest == "/refresh" || rest == "/logout"
		var body []byte
		if r.Method != http.MethodGet && !auth {
			var err error
			if body, err = readBody(r); err != nil {
				apiError(rw, http.StatusBadRequest, "common.request.body.invalid", err.Error())
				return
			}
		}
		// Recorded before it is handled (its status when the handler
		// returns): a client that saw the connection hang up may look at
		// the log before this handler has returned.
		f.mu.Lock()
		at := len(f.log)
		f.log = append(f.log, Request{Pod: me.Name, Method: r.Method, Path: rest, Query: r.URL.RawQuery, Bearer: bearer, Body: body})
		f.mu.Unlock()
		defer func() {
			f.mu.Lock()
			f.log[at].Status = rw.status
			f.mu.Unlock()
		}()
		f.mu.Lock()
		down := f.down
		f.mu.Unlock()
		if down {
			hangUp(rw)
			return
		}
		if !ok {
			apiError(rw, http.StatusNotFound, "common.not.found", "not found")
			return
		}
		f.mu.Lock()
		throttled := f.faults.Throttle > 0 && (f.faults.ThrottlePod == "" || f.faults.ThrottlePod == me.Name)
		if throttled {
			f.faults.Throttle--
		}
		retryAfter := f.faults.RetryAfter
		f.mu.Unlock()
		if throttled {
			if retryAfter != "" {
				rw.Header().Set("X-Rate-Limit-Retry-After-Seconds", retryAfter)
			}
			rw.Header().Set("Content-Type", "application/json")
			rw.WriteHeader(http.StatusTooManyRequests)
			_, _ = fmt.Fprintf(rw, `{"status":"TOO_MANY_REQUESTS","timestamp":%d,"errors":[{"error_key":"common.api-throttle-limit.exceeded.error","error_message":"API throttle limit exceeded."}]}`, time.Now().UnixMilli())
			return
		}
		switch {
		case r.Method == http.MethodPost && rest == "/login":
			f.login(rw, r, me)
		case r.Method == http.MethodPost && rest == "/refresh":
			f.refresh(rw, r)
		case r.Method == http.MethodPost && rest == "/logout":
			f.logout(rw, r)
		case r.Method == http.MethodGet:
			if !f.authorized(bearer) {
				apiError(rw, http.StatusUnauthorized, "common.unauthorized", "Unauthorized")
				return
			}
			f.get(rw, r, me, rest)
		case r.Method == http.MethodPut || r.Method == http.MethodPost || r.Method == http.MethodDelete:
			if !f.authorized(bearer) {
				apiError(rw, http.StatusUnauthorized, "common.unauthorized", "Unauthorized")
				return
			}
			f.write(rw, r, rest, body)
		default:
			apiError(rw, http.StatusMethodNotAllowed, "common.method.not.allowed", "method not allowed")
		}
	})
}

type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func apiError(w http.ResponseWriter, status int, key, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"error_key": key, "error_message": msg})
	_, _ = w.Write(b)
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		apiError(w, 500, "test.encode", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// newToken returns a JWT-shaped token (its exp an hour ahead).
func (f *Federation) newToken(refresh bool, session int) string {
	var rnd [12]byte
	_, _ = rand.Read(rnd[:])
	enc := base64.RawURLEncoding
	claims, _ := json.Marshal(map[string]any{"sub": User, "exp": time.Now().Add(time.Hour).Unix(), "jti": hex.EncodeToString(rnd[:])})
	tok := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc.EncodeToString(claims) + "." + enc.EncodeToString(rnd[:])
	f.tokens[tok] = &token{refresh: refresh, session: session, valid: true}
	return tok
}

func (f *Federation) login(w http.ResponseWriter, r *http.Request, me podFixture) {
	var body struct {
		Domain   string          `json:"domain"`
		Username string          `json:"username"`
		Password json.RawMessage `json:"password"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&body); err != nil {
		apiError(w, http.StatusBadRequest, "common.request.body.invalid", "Invalid request body")
		return
	}
	var pw string
	strOK := json.Unmarshal(body.Password, &pw) == nil
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.faults.LoginRefused || !strOK || !strings.EqualFold(body.Domain, Domain) || body.Username != User || pw != Password {
		apiError(w, http.StatusUnauthorized, "auth.login.failed", "Login failed: check the user name, domain and password")
		return
	}
	f.sessions = append(f.sessions, Session{Pod: me.Name})
	n := len(f.sessions) - 1
	writeJSON(w, map[string]string{"access_token": f.newToken(false, n), "refresh_token": f.newToken(true, n)})
}

func (f *Federation) refreshToken(r *http.Request) (*token, bool) {
	var body struct {
		Refresh string `json:"refresh_token"`
	}
	if json.NewDecoder(r.Body).Decode(&body) != nil {
		return nil, false
	}
	t, ok := f.tokens[body.Refresh]
	return t, ok && t.refresh && t.valid
}

func (f *Federation) refresh(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.refreshToken(r)
	if !ok || f.faults.RefreshRefused {
		apiError(w, http.StatusBadRequest, "auth.refresh.token.invalid", "Invalid refresh token")
		return
	}
	f.sessions[t.session].Refreshes++
	writeJSON(w, map[string]string{"access_token": f.newToken(false, t.session)})
}

func (f *Federation) logout(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.refreshToken(r)
	if !ok {
		apiError(w, http.StatusBadRequest, "auth.refresh.token.invalid", "Invalid refresh token")
		return
	}
	for _, other := range f.tokens {
		if other.session == t.session {
			other.valid = false
		}
	}
	f.sessions[t.session].LoggedOut = true
	w.WriteHeader(http.StatusOK)
}

// authorized checks an access token, counting the GETs for ExpireAfter.
func (f *Federation) authorized(bearer string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.tokens[bearer]
	if !ok || t.refresh || !t.valid {
		return false
	}
	f.gets++
	if f.faults.ExpireAfter > 0 && !f.expired && f.gets > f.faults.ExpireAfter {
		f.expired = true
		for _, other := range f.tokens {
			if !other.refresh {
				other.valid = false
			}
		}
		return false
	}
	return true
}

func (f *Federation) get(w http.ResponseWriter, r *http.Request, me podFixture, rest string) {
	f.mu.Lock()
	faults := f.faults
	f.mu.Unlock()
	if f.pull != nil {
		if faults.NoV3Sites && (rest == "/federation/v3/sites" || strings.HasPrefix(rest, "/inventory/v7/global-")) {
			apiError(w, http.StatusNotFound, "common.not.found", "Resource not found")
			return
		}
		f.getPull(w, r, me, rest, faults)
		return
	}
	route, podID, ok := match(rest)
	if !ok || (faults.NoV3Sites && (strings.HasPrefix(rest, "/federation/v3/sites") || strings.HasPrefix(rest, "/inventory/v7/global-"))) {
		apiError(w, http.StatusNotFound, "common.not.found", "Resource not found")
		return
	}
	if route.Item {
		f.mu.Lock()
		f.changeOn(rest)
		f.mu.Unlock()
		f.getItem(w, route, podID)
		return
	}
	fixture := strings.ReplaceAll(route.Fixture, "{pod}", me.Name)
	if podID != "" {
		p, ok := f.podByID(podID)
		if !ok {
			apiError(w, http.StatusNotFound, "federation.pod.not.found", "Pod not found")
			return
		}
		fixture = strings.ReplaceAll(fixture, "{id}", p.Name)
	}
	b, err := f.fixtureBytes(fixture)
	if err != nil {
		apiError(w, http.StatusInternalServerError, "test.fixture", err.Error())
		return
	}
	if !route.Array {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
		return
	}
	var items []map[string]any
	if err := json.Unmarshal(b, &items); err != nil {
		apiError(w, http.StatusInternalServerError, "test.fixture", err.Error())
		return
	}
	q := r.URL.Query()
	items, bad := f.shape(route, rest, me, q, items)
	if bad != "" {
		apiError(w, http.StatusBadRequest, "common.request.invalid", bad)
		return
	}
	if !route.Paged {
		writeJSON(w, items)
		return
	}
	page, size, paged, bad := pageParams(q)
	if bad != "" {
		apiError(w, http.StatusBadRequest, "common.request.invalid", bad)
		return
	}
	w.Header().Set("X-TOTAL-COUNT", strconv.Itoa(len(items)))
	if !paged {
		writeJSON(w, items)
		return
	}
	start := (page - 1) * size
	if start >= len(items) && page > 1 {
		apiError(w, http.StatusBadRequest, "common.pagination.invalid", "Invalid page number")
		return
	}
	end := min(start+size, len(items))
	if end < len(items) || faults.LyingLastPage {
		w.Header().Set("HAS_MORE_RECORDS", "true")
	}
	writeJSON(w, items[start:end])
}

// shape applies what the server does to a fixture list: the answering
// pod marked local, left out of the monitor list, the query's filters,
// older versions' fields dropped.
func (f *Federation) shape(route Route, rest string, me podFixture, q map[string][]string, items []map[string]any) ([]map[string]any, string) {
	switch route.Transform {
	case "v2":
		for _, it := range items {
			delete(it, "preferred_sites")
		}
	case "v6":
		for _, it := range items {
			delete(it, "use_preferred_sites")
			delete(it, "ignore_preferred_sites_with_high_load")
			delete(it, "entra_sso_enabled")
		}
	}
	switch rest {
	case "/federation/v1/pods":
		for _, it := range items {
			it["local_pod"] = it["id"] == me.ID
		}
	case "/monitor/v2/pods":
		items = slices.DeleteFunc(items, func(it map[string]any) bool { return it["id"] == me.ID })
	case "/monitor/v3/desktop-pools/metrics":
		ids := q["ids"]
		if len(ids) == 0 {
			return nil, "ids is required"
		}
		items = slices.DeleteFunc(items, func(it map[string]any) bool { return !slices.Contains(ids, fmt.Sprint(it["id"])) })
	case "/inventory/v3/global-sessions":
		f.mu.Lock()
		for _, e := range f.extra {
			items = append(items, maps.Clone(e))
		}
		f.mu.Unlock()
		set := 0
		for _, k := range []string{"user_id", "pod_id", "brokering_pod_id"} {
			if v := q[k]; len(v) > 0 {
				set++
				items = slices.DeleteFunc(items, func(it map[string]any) bool { return fmt.Sprint(it[k]) != v[0] })
			}
		}
		if set != 1 {
			return nil, "Exactly one of user_id, pod_id and brokering_pod_id must be set"
		}
	case "/federation/v2/home-sites":
		return filterEquals(q, items)
	case "/external/v4/ad-users-or-groups":
		if v := q["group_only"]; len(v) > 0 {
			want := v[0] == "true"
			items = slices.DeleteFunc(items, func(it map[string]any) bool { return it["group"] != want })
		}
	}
	return items, ""
}

// pageParams reads page and size: both or neither, both > 0, size at
// most 1000.
func pageParams(q map[string][]string) (page, size int, paged bool, bad string) {
	ps, ss := q["page"], q["size"]
	if len(ps) == 0 && len(ss) == 0 {
		return 0, 0, false, ""
	}
	if len(ps) == 0 || len(ss) == 0 {
		return 0, 0, false, ""
	}
	page, err1 := strconv.Atoi(ps[0])
	size, err2 := strconv.Atoi(ss[0])
	if err1 != nil || err2 != nil || page < 1 || size < 1 || size > 1000 {
		return 0, 0, false, "page and size must be integers > 0, size at most 1000"
	}
	return page, size, true, ""
}

// match finds the route of a path; podID is the {id} (or {item}) it
// holds.
func match(rest string) (Route, string, bool) {
	for _, r := range Routes {
		if r.Path == rest {
			return r, "", true
		}
		p := strings.Replace(r.Path, "{item}", "{id}", 1)
		if pre, post, ok := strings.Cut(p, "{id}"); ok && strings.HasPrefix(rest, pre) && strings.HasSuffix(rest, post) {
			id := strings.TrimSuffix(strings.TrimPrefix(rest, pre), post)
			if id != "" && !strings.Contains(id, "/") {
				return r, id, true
			}
		}
	}
	return Route{}, "", false
}

// getItem answers one object of a writable fixture (404 when it is not
// there), the Info schemas' counts added.
func (f *Federation) getItem(w http.ResponseWriter, route Route, id string) {
	b, err := f.fixtureBytes(route.Fixture)
	if err != nil {
		apiError(w, http.StatusInternalServerError, "test.fixture", err.Error())
		return
	}
	var items []map[string]any
	if err := json.Unmarshal(b, &items); err != nil {
		apiError(w, http.StatusInternalServerError, "test.fixture", err.Error())
		return
	}
	for _, it := range items {
		if it["id"] != id {
			continue
		}
		if route.Transform == "info" {
			it["user_or_group_site_override_count"] = 0
			if strings.Contains(route.Path, "desktop") {
				it["local_desktop_pools_count"], it["remote_desktop_pools_count"] = 1, max(0, len(asList(it["member_pods"]))-1)
			} else {
				it["local_application_pools_count"], it["remote_application_pools_count"] = 0, 0
			}
		}
		writeJSON(w, it)
		return
	}
	apiError(w, http.StatusNotFound, "common.not.found", "Resource not found")
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
