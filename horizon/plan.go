package horizon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/cpactl/cpactl/internal/fold"
	"github.com/cpactl/cpactl/internal/objkind"
)

// Push makes Horizon match cpactl for what the API can write (NOTES §c):
// a site's preferred sites, a global entitlement's scope, home-site flags,
// preferred-site flags, session distribution policy, enabled and backup,
// and the home-site rows. The desired state comes by name (Desired, from
// cpactl's records through package horizonpush); PlanPush turns it into
// the API's writes against what Horizon holds now, and Push makes them,
// each one checked before (the object is as the plan read it) and after
// (read back).

// Member is a user or group as cpactl names it: DOMAIN\name (the domain
// may be empty: any), or a group's name.
type Member struct {
	Domain, Name string
	Group        bool
}

func (m Member) String() string {
	kind := "user"
	if m.Group {
		kind = "group"
	}
	if m.Domain == "" {
		return kind + " " + m.Name
	}
	return kind + " " + m.Domain + `\` + m.Name
}

// DesiredSite is a site's preferred sites, by name, in rank order.
type DesiredSite struct {
	Name           string
	PreferredSites []string
}

// DesiredEntitlement is what push writes of a global entitlement, in the
// API's terms (Scope ALL_SITES, WITHIN_SITE, WITHIN_POD; Policy LOAD,
// NONE, SESSION); Backup is the backup's name ("" for none; desktop
// entitlements only).
type DesiredEntitlement struct {
	Name              string
	Application       bool
	Scope             string
	UseHomeSite       bool
	RequireHomeSite   bool
	UsePreferredSites bool
	IgnoreHighLoad    bool
	Policy            string
	Enabled           bool
	Backup            string
}

// DesiredHomeSite is a home-site row: a member's site, for an entitlement
// (its name) or, with Entitlement "", the member's global home site.
type DesiredHomeSite struct {
	Member      Member
	Entitlement string
	Application bool // the entitlement is an application entitlement
	Site        string
}

// Desired is the state push makes Horizon match.
type Desired struct {
	Sites        []DesiredSite
	Entitlements []DesiredEntitlement
	HomeSites    []DesiredHomeSite
	// Users and Groups are every user and group cpactl holds: a Horizon
	// home-site row of someone cpactl does not hold is left alone, one of
	// someone it holds but without that row is removed.
	Users, Groups []Member
	// NotPushed is what cpactl holds that the API cannot write.
	NotPushed []NotPushed
}

// Wanted is the AD identities ReadState must keep for d.
func (d *Desired) Wanted() IdentityWanted {
	w := IdentityWanted{Users: map[string]bool{}, Groups: map[string]bool{}}
	for _, lists := range [][]Member{d.Users, d.Groups} {
		for _, m := range lists {
			if m.Group {
				w.Groups[fold.Key(m.Name)] = true
			} else {
				w.Users[fold.Key(m.Name)] = true
			}
		}
	}
	for _, h := range d.HomeSites {
		if h.Member.Group {
			w.Groups[fold.Key(h.Member.Name)] = true
		} else {
			w.Users[fold.Key(h.Member.Name)] = true
		}
	}
	return w
}

// NotPushed is something cpactl holds that push does not write, and why.
type NotPushed struct {
	Object string `json:"object"`
	Field  string `json:"field,omitempty"`
	Value  string `json:"value,omitempty"`
	Reason string `json:"reason"`
}

// Field is one field a change writes: its API name, its value now and the
// value pushed (ids shown as names; nil for none).
type Field struct {
	Field  string `json:"field"`
	Before any    `json:"before"`
	After  any    `json:"after"`
}

// Change is one write of a plan.
type Change struct {
	Method string  `json:"method"`
	Path   string  `json:"path"`
	Kind   string  `json:"kind"`
	Object string  `json:"object"`
	Fields []Field `json:"fields"`
	// Result is, for an entitlement, the entitlement as the write leaves
	// it (what cpactl's rules are checked on).
	Result *Entitlement `json:"-"`

	body  []byte
	read  string     // what is read before and after the write (GET)
	query url.Values // of read
	// pick reduces the answer of read to what the change compares: nil
	// when the object is not there.
	pick   func(raw json.RawMessage) (map[string]any, error)
	before map[string]any // pick at plan time
	after  map[string]any // the pushed fields' values once written (nil: gone)
	bulk   int            // rows of a bulk write (its answer is checked per row)
}

// Body is the JSON the change sends (nil for none).
func (c Change) Body() []byte { return c.body }

// Op is "METHOD path".
func (c Change) Op() string { return c.Method + " " + c.Path }

// FieldNames lists the fields the change writes.
func (c Change) FieldNames() []string {
	names := make([]string, len(c.Fields))
	for i, f := range c.Fields {
		names[i] = f.Field
	}
	return names
}

// Plan is what push would write, and what it cannot.
type Plan struct {
	Server    string      `json:"server"`
	Changes   []Change    `json:"changes"`
	NotPushed []NotPushed `json:"not_pushed"`
}

// The fields of the update specs: a PUT sends each of them the object has,
// as read, with the pushed ones changed (the body is the whole object).
var (
	siteUpdateFields = []string{"name", "description", "site_url", "preferred_sites"}
	gdeUpdateFields  = []string{"name", "display_name", "description", "scope", "enabled", "use_home_site", "require_home_site",
		"use_preferred_sites", "ignore_preferred_sites_with_high_load", "session_distribution_policy", "default_display_protocol",
		"allow_multiple_sessions_per_user", "allow_users_to_choose_machines", "multiple_session_auto_clean", "enable_client_restrictions",
		"session_collaboration_enabled", "display_assigned_machine_name", "display_machine_alias", "cloud_managed",
		"pcoip_ultra_protocol_enabled", "entra_sso_enabled", "federated_access_group_id", "cs_restriction_tags", "backup_gde_id",
		"category_folder_name", "shortcut_locations_v2"}
	gaeUpdateFields = []string{"name", "display_name", "description", "scope", "enabled", "use_home_site", "require_home_site",
		"use_preferred_sites", "ignore_preferred_sites_with_high_load", "session_distribution_policy", "default_display_protocol",
		"allow_users_to_choose_machines", "multiple_session_auto_clean", "enable_client_restrictions", "enable_pre_launch",
		"multi_session_mode", "app_launch_limit_enabled", "entra_sso_enabled", "federated_access_group_id", "cs_restriction_tags",
		"backup_gae_id", "category_folder_name", "shortcut_locations_v2"}
)

// decodeObject decodes a JSON object keeping numbers as written.
func decodeObject(raw json.RawMessage) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// project keeps the fields of obj that are named in fields.
func project(obj map[string]any, fields []string) map[string]any {
	out := make(map[string]any, len(fields))
	for _, f := range fields {
		if v, ok := obj[f]; ok && v != nil {
			out[f] = v
		}
	}
	return out
}

// pickObject reads an object (GET path) as the fields of its update spec.
func pickObject(fields []string) func(json.RawMessage) (map[string]any, error) {
	return func(raw json.RawMessage) (map[string]any, error) {
		obj, err := decodeObject(raw)
		if err != nil {
			return nil, err
		}
		return project(obj, fields), nil
	}
}

// samePicked compares two picks as JSON.
func samePicked(a, b map[string]any) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// shows reports whether got holds the pushed values of want (nil: the
// object is gone).
func shows(got, want map[string]any) bool {
	if want == nil || got == nil {
		return want == nil && got == nil
	}
	for k, v := range want {
		if !samePicked(map[string]any{k: got[k]}, map[string]any{k: v}) {
			return false
		}
	}
	return true
}

// PlanPush compares d with st (read by ReadState on s) and returns the
// writes that make Horizon match, reading each object it changes whole.
func (s *Session) PlanPush(ctx context.Context, st *State, d Desired) (*Plan, error) {
	p := &Plan{Server: s.base, NotPushed: slices.Clone(d.NotPushed)}
	x := st.Index
	notPushed := func(object, field, value, reason string) {
		p.NotPushed = append(p.NotPushed, NotPushed{Object: object, Field: field, Value: value, Reason: reason})
	}
	for _, ds := range d.Sites {
		if err := s.planSite(ctx, p, x, ds, notPushed); err != nil {
			return nil, err
		}
	}
	for _, de := range d.Entitlements {
		if err := s.planEntitlement(ctx, p, x, de, notPushed); err != nil {
			return nil, err
		}
	}
	planHomeSites(p, st, d, notPushed)
	return p, nil
}

func (s *Session) planSite(ctx context.Context, p *Plan, x *Index, ds DesiredSite, notPushed func(o, f, v, r string)) error {
	hs, ok := x.Site(ds.Name)
	if !ok {
		notPushed("site "+ds.Name, "", "", "Horizon has no site of this name: push does not create sites (create it in Horizon first)")
		return nil
	}
	ids := make([]string, 0, len(ds.PreferredSites))
	for _, n := range ds.PreferredSites {
		ps, ok := x.Site(n)
		if !ok {
			notPushed("site "+ds.Name, "preferred_sites", strings.Join(ds.PreferredSites, ", "),
				fmt.Sprintf("Horizon has no site %s to rank", n))
			return nil
		}
		ids = append(ids, ps.ID)
	}
	if slices.Equal(ids, hs.PreferredSites) {
		return nil
	}
	path := PathSites + "/" + url.PathEscape(hs.ID)
	raw, err := s.Get(ctx, path, nil)
	if err != nil {
		return err
	}
	pick := pickObject(siteUpdateFields)
	before, err := pick(raw)
	if err != nil {
		return &ProtocolError{URL: s.base, Op: "GET " + path, Err: err}
	}
	var now []string
	if v, ok := before["preferred_sites"].([]any); ok {
		for _, id := range v {
			now = append(now, fmt.Sprint(id))
		}
	}
	if slices.Equal(ids, now) {
		return nil // the list was behind (cache); the object is right
	}
	body := project(before, siteUpdateFields)
	body["preferred_sites"] = ids
	c := Change{Method: "PUT", Path: path, Kind: objkind.Site, Object: hs.Name, read: path, pick: pick, before: before,
		after:  map[string]any{"preferred_sites": toAny(ids)},
		Fields: []Field{{Field: "preferred_sites", Before: siteNames(x, now), After: siteNames(x, ids)}}}
	if c.body, err = json.Marshal(body); err != nil {
		return err
	}
	p.Changes = append(p.Changes, c)
	return nil
}

func toAny(list []string) []any {
	out := make([]any, len(list))
	for i, v := range list {
		out[i] = v
	}
	return out
}

func siteNames(x *Index, ids []string) []string {
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = x.SiteName(id)
	}
	return names
}

func (s *Session) planEntitlement(ctx context.Context, p *Plan, x *Index, de DesiredEntitlement, notPushed func(o, f, v, r string)) error {
	kind := "desktop entitlement"
	if de.Application {
		kind = "application entitlement"
	}
	he, ok := x.Entitlement(de.Name, de.Application)
	if !ok {
		notPushed(kind+" "+de.Name, "", "", "Horizon has no global entitlement of this name: push does not create entitlements (create it in Horizon first)")
		return nil
	}
	if he.Application != de.Application {
		notPushed(kind+" "+de.Name, "", "", fmt.Sprintf("it is a%s %s in Horizon", map[bool]string{false: "", true: "n"}[he.Application], he.Kind()))
		return nil
	}
	backupID, backupOK := "", true
	if !de.Application && de.Backup != "" {
		b, ok := x.Entitlement(de.Backup, false)
		if !ok || b.Application {
			notPushed(kind+" "+de.Name, "backup_gde_id", de.Backup, fmt.Sprintf("Horizon has no desktop entitlement %s to be the backup", de.Backup))
			backupOK = false
		} else {
			backupID = b.ID
		}
	}
	want := func(cur Entitlement) []Field {
		var fs []Field
		add := func(name string, before, after any) {
			if before != after {
				fs = append(fs, Field{Field: name, Before: before, After: after})
			}
		}
		add("scope", cur.Scope, de.Scope)
		add("use_home_site", cur.UseHomeSite, de.UseHomeSite)
		add("require_home_site", cur.RequireHomeSite, de.RequireHomeSite)
		add("use_preferred_sites", cur.UsePreferredSites, de.UsePreferredSites)
		add("ignore_preferred_sites_with_high_load", cur.IgnoreHighLoad, de.IgnoreHighLoad)
		add("session_distribution_policy", cur.Policy, de.Policy)
		add("enabled", cur.Enabled, de.Enabled)
		if !de.Application && backupOK && cur.BackupGDE != backupID {
			fs = append(fs, Field{Field: "backup_gde_id", Before: nameOrNil(x, cur.BackupGDE), After: nameOrNil(x, backupID)})
		}
		return fs
	}
	if len(want(he)) == 0 {
		return nil
	}
	base, fields := PathDesktopGEs, gdeUpdateFields
	if de.Application {
		base, fields = PathAppGEs, gaeUpdateFields
	}
	path := base + "/" + url.PathEscape(he.ID)
	raw, err := s.Get(ctx, path, nil)
	if err != nil {
		return err
	}
	var cur Entitlement
	obj, err := decodeObject(raw)
	if err == nil {
		err = json.Unmarshal(raw, &cur)
	}
	if err != nil {
		return &ProtocolError{URL: s.base, Op: "GET " + path, Err: err}
	}
	cur.Application = de.Application
	fs := want(cur)
	if len(fs) == 0 {
		return nil
	}
	pick := pickObject(fields)
	before := project(obj, fields)
	body := project(obj, fields)
	after := map[string]any{}
	result := cur
	for _, f := range fs {
		switch f.Field {
		case "backup_gde_id":
			// The body is the whole entitlement: without the field, no
			// backup (the read back checks that Horizon took it so).
			if backupID == "" {
				delete(body, f.Field)
				after[f.Field] = nil
			} else {
				body[f.Field], after[f.Field] = backupID, backupID
			}
			result.BackupGDE = backupID
		default:
			body[f.Field], after[f.Field] = f.After, f.After
		}
	}
	result.Scope, result.UseHomeSite, result.RequireHomeSite = de.Scope, de.UseHomeSite, de.RequireHomeSite
	result.UsePreferredSites, result.IgnoreHighLoad, result.Policy, result.Enabled = de.UsePreferredSites, de.IgnoreHighLoad, de.Policy, de.Enabled
	c := Change{Method: "PUT", Path: path, Kind: kind, Object: he.Name, read: path, pick: pick, before: before, after: after, Fields: fs, Result: &result}
	if c.body, err = json.Marshal(body); err != nil {
		return err
	}
	p.Changes = append(p.Changes, c)
	return nil
}

func nameOrNil(x *Index, id string) any {
	if id == "" {
		return nil
	}
	return x.EntitlementName(id)
}

// homeKey is a home-site row's key: the member's SID and the
// entitlement's id ("" for the global home site).
type homeKey struct{ sid, ge string }

// planHomeSites compares the home-site rows: a row cpactl has and Horizon
// not is created (POST), one on another site is moved (PUT), one Horizon
// has of a member and entitlement cpactl knows but cpactl has not is
// removed (DELETE). Rows of members or entitlements cpactl does not know
// are left alone.
func planHomeSites(p *Plan, st *State, d Desired, notPushed func(o, f, v, r string)) {
	x := st.Index
	have := map[homeKey]HomeSite{}
	for _, h := range st.HomeSites {
		k := homeKey{h.Member, h.Entitlement()}
		if _, dup := have[k]; !dup {
			have[k] = h
		}
	}
	wanted := map[homeKey]bool{}
	var creates, moves []Change
	for _, dh := range d.HomeSites {
		object := homeObject(dh.Member.String(), dh.Entitlement)
		id, err := x.FindIdentity(dh.Member.Domain, dh.Member.Name, dh.Member.Group)
		if err != nil {
			notPushed("home site of "+object, "", dh.Site, err.Error())
			continue
		}
		var ge Entitlement
		if dh.Entitlement != "" {
			var ok bool
			if ge, ok = x.Entitlement(dh.Entitlement, dh.Application); !ok {
				notPushed("home site of "+object, "", dh.Site, "Horizon has no global entitlement "+dh.Entitlement)
				continue
			}
		}
		site, ok := x.Site(dh.Site)
		if !ok {
			notPushed("home site of "+object, "", dh.Site, "Horizon has no site "+dh.Site)
			continue
		}
		k := homeKey{id.SID, ge.ID}
		if wanted[k] {
			continue
		}
		wanted[k] = true
		object = homeObject(memberString(id), dh.Entitlement)
		pickRow := pickHomeSite(id.SID, ge.ID)
		if cur, ok := have[k]; ok {
			if cur.Site == site.ID {
				continue
			}
			path := PathHomeSites + "/" + url.PathEscape(cur.ID)
			before := map[string]any{"ad_user_or_group_id": cur.Member, "site_id": cur.Site, "use_homesite_for_redirection": cur.Redirect}
			body, _ := json.Marshal(map[string]any{"site_id": site.ID, "use_homesite_for_redirection": cur.Redirect})
			moves = append(moves, Change{Method: "PUT", Path: path, Kind: objkind.HomeSiteRow, Object: object, body: body,
				read: path, pick: pickHomeSiteByID, before: before, after: map[string]any{"site_id": site.ID},
				Fields: []Field{{Field: "site_id", Before: x.SiteName(cur.Site), After: site.Name}}})
			continue
		}
		spec := map[string]any{"ad_user_or_group_id": id.SID, "site_id": site.ID}
		if ge.ID != "" {
			if ge.Application {
				spec["global_application_entitlement_id"] = ge.ID
			} else {
				spec["global_desktop_entitlement_id"] = ge.ID
			}
		}
		body, _ := json.Marshal([]any{spec})
		creates = append(creates, Change{Method: "POST", Path: PathHomeSites, Kind: objkind.HomeSiteRow, Object: object, body: body, bulk: 1,
			read: PathHomeSites, query: equalsFilter("ad_user_or_group_id", id.SID), pick: pickRow,
			after: map[string]any{"site_id": site.ID}, Fields: []Field{{Field: "site_id", Before: nil, After: site.Name}}})
	}
	known := knownMembers(d)
	holds := map[string]bool{}
	for _, e := range d.Entitlements {
		holds[fold.Key(e.Name)] = true
	}
	var deletes []Change
	for _, h := range st.HomeSites {
		k := homeKey{h.Member, h.Entitlement()}
		if wanted[k] || have[k].ID != h.ID {
			continue
		}
		geName := ""
		if k.ge != "" {
			ge, ok := x.EntitlementByID(k.ge)
			if !ok || !holds[fold.Key(ge.Name)] {
				continue // an entitlement cpactl does not hold: not its row
			}
			geName = ge.Name
		}
		id, ok := x.IdentityBySID(h.Member)
		object := homeObject(h.Member, geName)
		if ok {
			object = homeObject(memberString(id), geName)
		}
		if !ok || !known.holds(id) {
			notPushed("home site of "+object, "", x.SiteName(h.Site),
				"cpactl does not hold this "+map[bool]string{false: "user", true: "group"}[h.Group]+": Horizon's row is left alone")
			continue
		}
		path := PathHomeSites + "/" + url.PathEscape(h.ID)
		body, _ := json.Marshal([]string{h.ID})
		deletes = append(deletes, Change{Method: "DELETE", Path: PathHomeSites, Kind: objkind.HomeSiteRow, Object: object, body: body, bulk: 1,
			read: path, pick: pickHomeSiteByID,
			before: map[string]any{"ad_user_or_group_id": h.Member, "site_id": h.Site, "use_homesite_for_redirection": h.Redirect},
			Fields: []Field{{Field: "site_id", Before: x.SiteName(h.Site), After: nil}}})
	}
	p.Changes = append(append(append(p.Changes, deletes...), moves...), creates...)
}

func homeObject(member, entitlement string) string {
	if entitlement == "" {
		return member + " (global)"
	}
	return member + " for " + entitlement
}

func memberString(id Identity) string {
	if id.Group {
		return "group " + id.String()
	}
	return "user " + id.String()
}

// pickHomeSiteByID reads GET /federation/v2/home-sites/{id}: the row's
// member, site and redirection flag.
func pickHomeSiteByID(raw json.RawMessage) (map[string]any, error) {
	obj, err := decodeObject(raw)
	if err != nil {
		return nil, err
	}
	return project(obj, []string{"ad_user_or_group_id", "site_id", "use_homesite_for_redirection"}), nil
}

// pickHomeSite finds, in the member's rows (a filtered list), the row of
// the entitlement ge ("" for the global home site).
func pickHomeSite(sid, ge string) func(json.RawMessage) (map[string]any, error) {
	return func(raw json.RawMessage) (map[string]any, error) {
		var rows []HomeSite
		if err := json.Unmarshal(raw, &rows); err != nil {
			return nil, err
		}
		for _, r := range rows {
			if r.Member == sid && r.Entitlement() == ge {
				return map[string]any{"site_id": r.Site}, nil
			}
		}
		return nil, nil
	}
}

// members holds the users and groups cpactl holds, by fold key of the
// name.
type members struct{ users, groups map[string][]Member }

func knownMembers(d Desired) members {
	m := members{users: map[string][]Member{}, groups: map[string][]Member{}}
	for _, u := range d.Users {
		m.users[fold.Key(u.Name)] = append(m.users[fold.Key(u.Name)], u)
	}
	for _, g := range d.Groups {
		m.groups[fold.Key(g.Name)] = append(m.groups[fold.Key(g.Name)], g)
	}
	return m
}

// holds reports whether cpactl holds the AD identity id.
func (m members) holds(id Identity) bool {
	list := m.users[fold.Key(id.Name)]
	if id.Group {
		list = m.groups[fold.Key(id.Name)]
	}
	for _, c := range list {
		if id.MatchesDomain(c.Domain) {
			return true
		}
	}
	return false
}
