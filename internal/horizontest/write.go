package horizontest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The test federation's writable part: sites, global entitlements and
// home sites are held in memory (loaded from the fixtures), served from
// there, and changed by the writes push makes (NOTES §c):
//
//	PUT    /federation/v3/sites/{item}                     SiteUpdateSpecV3
//	PUT    /inventory/v7/global-desktop-entitlements/{item}  GlobalDesktopEntitlementUpdateSpecV5
//	PUT    /inventory/v7/global-application-entitlements/{item}  GlobalApplicationEntitlementUpdateSpecV4
//	POST   /federation/v2/home-sites                       [HomeSiteCreateSpecV2]
//	PUT    /federation/v2/home-sites/{item}                HomeSiteUpdateSpecV2
//	DELETE /federation/v2/home-sites                       [id]
//
// Every body is checked against its schema (strictly: a field the schema
// does not name fails) and refused with a 400 when it fails; the PUTs are
// whole-object: a field of the update spec the body leaves out is removed
// from the object. Every write is recorded with its body.

// writable are the fixtures held in memory.
var writable = []string{"sites.json", "global-desktop-entitlements.json", "global-application-entitlements.json", "home-sites.json"}

// writeRoute is a write the test server takes.
type writeRoute struct {
	Method, Path string // Path under /rest; {item} matches an object's id
	Fixture      string
	Schema       string // the body's schema ("" for a list of ids)
	Array        bool
}

var writeRoutes = []writeRoute{
	{"PUT", "/federation/v3/sites/{item}", "sites.json", "SiteUpdateSpecV3", false},
	{"PUT", "/inventory/v7/global-desktop-entitlements/{item}", "global-desktop-entitlements.json", "GlobalDesktopEntitlementUpdateSpecV5", false},
	{"PUT", "/inventory/v7/global-application-entitlements/{item}", "global-application-entitlements.json", "GlobalApplicationEntitlementUpdateSpecV4", false},
	{"POST", "/federation/v2/home-sites", "home-sites.json", "HomeSiteCreateSpecV2", true},
	{"PUT", "/federation/v2/home-sites/{item}", "home-sites.json", "HomeSiteUpdateSpecV2", false},
	{"DELETE", "/federation/v2/home-sites", "home-sites.json", "", true},
}

// ChangeOn changes an object when a GET of Path (an object's path, with
// its id) is answered for the After+1-th time: another administrator's
// change between push's plan (which read it) and its write (which reads
// it again first).
type ChangeOn struct {
	Path  string
	After int
	Set   map[string]any
}

// Drop modes of Faults.DropWrite: the next write's connection is closed
// with no answer, after the server applied it or before.
const (
	DropApplied    = "applied"
	DropNotApplied = "not-applied"
)

// loadState reads the writable fixtures into memory.
func (f *Federation) loadState() error {
	f.state = map[string][]map[string]any{}
	for _, name := range writable {
		b, err := os.ReadFile(filepath.Join(f.dir, name))
		if err != nil {
			return err
		}
		var items []map[string]any
		if err := json.Unmarshal(b, &items); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		f.state[name] = items
	}
	return nil
}

// fixtureBytes is a fixture's content: the state for a writable one (or,
// while a read lags, the state before the last write), else the file.
func (f *Federation) fixtureBytes(name string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if items, ok := f.state[name]; ok {
		if f.lagLeft > 0 && f.stale != nil {
			f.lagLeft--
			items = f.stale[name]
		}
		return json.Marshal(items)
	}
	return os.ReadFile(filepath.Join(f.dir, filepath.FromSlash(name)))
}

// State returns a copy of a writable fixture's items as they are now.
func (f *Federation) State(fixture string) []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, _ := json.Marshal(f.state[fixture])
	var out []map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// Writes returns every write received so far (method, path, body), in
// order, refused ones included.
func (f *Federation) Writes() []Request {
	var out []Request
	for _, r := range f.Requests() {
		if r.Method != http.MethodGet && !(r.Method == http.MethodPost && (r.Path == "/login" || r.Path == "/refresh" || r.Path == "/logout")) {
			out = append(out, r)
		}
	}
	return out
}

// Invalid returns what the schema check said of each body it refused.
func (f *Federation) Invalid() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.invalid)
}

func matchWrite(method, rest string) (writeRoute, string, bool) {
	for _, r := range writeRoutes {
		if r.Method != method {
			continue
		}
		if r.Path == rest {
			return r, "", true
		}
		if pre, ok := strings.CutSuffix(r.Path, "{item}"); ok {
			if id, ok := strings.CutPrefix(rest, pre); ok && id != "" && !strings.Contains(id, "/") {
				return r, id, true
			}
		}
	}
	return writeRoute{}, "", false
}

// write answers a PUT, POST or DELETE.
func (f *Federation) write(w http.ResponseWriter, r *http.Request, rest string, body []byte) {
	if f.pull != nil {
		apiError(w, http.StatusMethodNotAllowed, "test.read.only", "the test Horizon of a pull directory answers reads only")
		return
	}
	route, id, ok := matchWrite(r.Method, rest)
	if !ok {
		apiError(w, http.StatusMethodNotAllowed, "common.method.not.allowed", "method not allowed")
		return
	}
	if route.Schema != "" {
		if err := f.schemas.Check(route.Schema, route.Array, body); err != nil {
			f.mu.Lock()
			f.invalid = append(f.invalid, fmt.Sprintf("%s %s: %v", r.Method, rest, err))
			f.mu.Unlock()
			apiError(w, http.StatusBadRequest, "common.request.body.invalid", oneLine(err.Error()))
			return
		}
	}
	f.mu.Lock()
	faults := f.faults
	throttle := f.faults.ThrottleWrites > 0
	if throttle {
		f.faults.ThrottleWrites--
	}
	drop := f.faults.DropWrite
	f.faults.DropWrite = ""
	if drop != "" && f.faults.DropThenDown {
		f.down = true
	}
	f.mu.Unlock()
	if throttle {
		w.Header().Set("X-Rate-Limit-Retry-After-Seconds", "0")
		apiError(w, http.StatusTooManyRequests, "common.api-throttle-limit.exceeded.error", "API throttle limit exceeded.")
		return
	}
	if drop == DropNotApplied {
		hangUp(w)
		return
	}
	f.mu.Lock()
	before := cloneState(f.state)
	status, answer := f.apply(route, id, body)
	if status/100 == 2 && faults.ReadLag > 0 {
		f.stale, f.lagLeft = before, faults.ReadLag
	}
	f.mu.Unlock()
	if drop == DropApplied {
		hangUp(w)
		return
	}
	switch {
	case status == http.StatusNoContent:
		w.WriteHeader(status)
	case status/100 == 2:
		writeJSON(w, answer)
	default:
		apiError(w, status, "test.write.refused", fmt.Sprint(answer))
	}
}

// hangUp closes the connection without an answer.
func hangUp(w http.ResponseWriter) {
	if rec, ok := w.(*recorder); ok {
		rec.status = 0
		w = rec.ResponseWriter
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("horizontest: cannot hang up: no Hijacker")
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		conn.Close()
	}
}

func cloneState(st map[string][]map[string]any) map[string][]map[string]any {
	b, _ := json.Marshal(st)
	var out map[string][]map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// find returns the item with id in a writable fixture.
func (f *Federation) find(fixture, id string) map[string]any {
	for _, it := range f.state[fixture] {
		if it["id"] == id {
			return it
		}
	}
	return nil
}

// apply changes the state (f.mu held): the status and the answer's body
// (or the refusal's message).
func (f *Federation) apply(route writeRoute, id string, body []byte) (int, any) {
	switch {
	case route.Method == http.MethodPut && route.Fixture != "home-sites.json":
		obj := f.find(route.Fixture, id)
		if obj == nil {
			return http.StatusNotFound, "no such object " + id
		}
		var spec map[string]any
		_ = json.Unmarshal(body, &spec)
		if msg := f.refuseUpdate(route.Fixture, id, spec); msg != "" {
			return http.StatusBadRequest, msg
		}
		for _, field := range f.schemas.Properties(route.Schema) {
			if v, ok := spec[field]; ok {
				obj[field] = v
			} else {
				delete(obj, field)
			}
		}
		return http.StatusNoContent, nil
	case route.Method == http.MethodPut:
		row := f.find(route.Fixture, id)
		if row == nil {
			return http.StatusNotFound, "no such home site " + id
		}
		var spec struct {
			Site     string `json:"site_id"`
			Redirect bool   `json:"use_homesite_for_redirection"`
		}
		_ = json.Unmarshal(body, &spec)
		site := f.find("sites.json", spec.Site)
		if site == nil {
			return http.StatusBadRequest, "no such site " + spec.Site
		}
		row["site_id"], row["site_name"], row["use_homesite_for_redirection"] = spec.Site, site["name"], spec.Redirect
		return http.StatusNoContent, nil
	case route.Method == http.MethodPost:
		var specs []map[string]any
		_ = json.Unmarshal(body, &specs)
		var answers []map[string]any
		for _, spec := range specs {
			answers = append(answers, f.createHomeSite(spec))
		}
		return http.StatusOK, answers
	default: // DELETE home sites
		var ids []string
		if err := json.Unmarshal(body, &ids); err != nil {
			return http.StatusBadRequest, "the body is not a list of home site ids"
		}
		var answers []map[string]any
		for _, hid := range ids {
			n := len(f.state[route.Fixture])
			f.state[route.Fixture] = slices.DeleteFunc(f.state[route.Fixture], func(it map[string]any) bool { return it["id"] == hid })
			if len(f.state[route.Fixture]) == n {
				answers = append(answers, bulkError(hid, http.StatusNotFound, "Home site not found"))
				continue
			}
			answers = append(answers, map[string]any{"id": hid, "status_code": http.StatusOK})
		}
		return http.StatusOK, answers
	}
}

// refuseUpdate checks what the server would: a site's preferred sites are
// other sites that exist; a backup is another desktop entitlement.
func (f *Federation) refuseUpdate(fixture, id string, spec map[string]any) string {
	if ps, ok := spec["preferred_sites"].([]any); ok {
		for _, p := range ps {
			if p == id || f.find("sites.json", fmt.Sprint(p)) == nil {
				return fmt.Sprintf("invalid preferred site %v", p)
			}
		}
	}
	if b, ok := spec["backup_gde_id"].(string); ok && (b == id || f.find("global-desktop-entitlements.json", b) == nil) {
		return "invalid backup global desktop entitlement " + b
	}
	return ""
}

func bulkError(id string, status int, msg string) map[string]any {
	return map[string]any{"id": id, "status_code": status,
		"errors": []map[string]any{{"error_key": "test.bulk.item", "error_message": msg}}}
}

// createHomeSite adds a row (f.mu held): its bulk answer.
func (f *Federation) createHomeSite(spec map[string]any) map[string]any {
	sid, _ := spec["ad_user_or_group_id"].(string)
	siteID, _ := spec["site_id"].(string)
	gde, _ := spec["global_desktop_entitlement_id"].(string)
	gae, _ := spec["global_application_entitlement_id"].(string)
	site := f.find("sites.json", siteID)
	if site == nil {
		return bulkError("", http.StatusBadRequest, "no such site "+siteID)
	}
	id := f.identity(sid)
	if id == nil {
		return bulkError("", http.StatusBadRequest, "no such user or group "+sid)
	}
	for _, it := range f.state["home-sites.json"] {
		if it["ad_user_or_group_id"] == sid && str(it["global_desktop_entitlement_id"]) == gde && str(it["global_application_entitlement_id"]) == gae {
			return bulkError("", http.StatusConflict, "a home site exists for this user or group and entitlement")
		}
	}
	f.nextID++
	row := map[string]any{"id": fmt.Sprintf("40e50000-0000-4000-8000-%012d", f.nextID), "ad_user_or_group_id": sid,
		"group": id["group"], "site_id": siteID, "site_name": site["name"], "use_homesite_for_redirection": spec["use_homesite_for_redirection"] == true,
		"user_name": id["login_name"], "domain": id["domain"]}
	if gde != "" {
		row["global_desktop_entitlement_id"] = gde
	}
	if gae != "" {
		row["global_application_entitlement_id"] = gae
	}
	f.state["home-sites.json"] = append(f.state["home-sites.json"], row)
	return map[string]any{"id": row["id"], "status_code": http.StatusCreated}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// identity finds an AD user or group of the fixture by SID.
func (f *Federation) identity(sid string) map[string]any {
	b, err := os.ReadFile(filepath.Join(f.dir, "ad-users-or-groups.json"))
	if err != nil {
		return nil
	}
	var ids []map[string]any
	_ = json.Unmarshal(b, &ids)
	for _, id := range ids {
		if id["id"] == sid {
			return id
		}
	}
	return nil
}

// changeOn applies the ChangeOn fault to a GET of rest (f.mu held).
func (f *Federation) changeOn(rest string) {
	c := f.faults.ChangeOn
	if c == nil || c.Path != rest {
		return
	}
	f.changeGets++
	if f.changeGets != c.After+1 {
		return
	}
	for _, name := range writable {
		for _, it := range f.state[name] {
			if strings.HasSuffix(rest, "/"+fmt.Sprint(it["id"])) {
				for k, v := range c.Set {
					it[k] = v
				}
			}
		}
	}
}

// filterEquals applies a filter query of one Equals ({"type": "Equals",
// "name": ..., "value": ...}) to a list; other filters are refused.
func filterEquals(q url.Values, items []map[string]any) ([]map[string]any, string) {
	raw := q.Get("filter")
	if raw == "" {
		return items, ""
	}
	var fl struct {
		Type  string `json:"type"`
		Name  string `json:"name"`
		Value any    `json:"value"`
	}
	if err := json.Unmarshal([]byte(raw), &fl); err != nil || fl.Type != "Equals" || fl.Name == "" {
		return nil, "the test server takes one Equals filter"
	}
	return slices.DeleteFunc(items, func(it map[string]any) bool { return fmt.Sprint(it[fl.Name]) != fmt.Sprint(fl.Value) }), ""
}

// readBody reads a write's body (at most 1 MiB).
func readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20+1))
	if err == nil && len(b) > 1<<20 {
		err = fmt.Errorf("body larger than 1 MiB")
	}
	return b, err
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
