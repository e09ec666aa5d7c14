package horizon

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/cpactl/cpactl/internal/fold"
)

// What push reads of a live federation, and the joins between Horizon's
// ids and the names cpactl keeps: sites and entitlements by name, users
// and groups by DOMAIN\name and SID. Importers join the same way (sites,
// entitlements: by name, compared as cpactl compares names; identities:
// login_name with the NetBIOS or DNS domain), so the Index is theirs too.

// The paths push reads and writes (NOTES §b, §c).
const (
	PathSites        = "/federation/v3/sites"
	PathDesktopGEs   = "/inventory/v7/global-desktop-entitlements"
	PathAppGEs       = "/inventory/v7/global-application-entitlements"
	PathHomeSites    = "/federation/v2/home-sites"
	PathADIdentities = "/external/v4/ad-users-or-groups"
)

// Site is a site as the API gives it (SiteInfoV3).
type Site struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// PreferredSites are site ids, in rank order.
	PreferredSites []string `json:"preferred_sites"`
}

// Entitlement is the part of a global entitlement (desktop:
// GlobalDesktopEntitlementSummaryV7/InfoV7; application: ...SummaryV7/
// InfoV6) that cpactl models.
type Entitlement struct {
	ID                string `json:"id"`
	Name              string `json:"name"`
	Scope             string `json:"scope"`
	UseHomeSite       bool   `json:"use_home_site"`
	RequireHomeSite   bool   `json:"require_home_site"`
	UsePreferredSites bool   `json:"use_preferred_sites"`
	IgnoreHighLoad    bool   `json:"ignore_preferred_sites_with_high_load"`
	Policy            string `json:"session_distribution_policy"`
	Enabled           bool   `json:"enabled"`
	Dedicated         bool   `json:"dedicated"`
	AutoClean         bool   `json:"multiple_session_auto_clean"`
	MultipleSessions  bool   `json:"allow_multiple_sessions_per_user"`
	ClientRestriction bool   `json:"enable_client_restrictions"`
	BackupGDE         string `json:"backup_gde_id"`
	BackupGAE         string `json:"backup_gae_id"`
	// Application: a global application entitlement (set by the reader,
	// not in the JSON).
	Application bool `json:"-"`
}

// Backup is the id of the entitlement's backup, "" when none.
func (e Entitlement) Backup() string {
	if e.Application {
		return e.BackupGAE
	}
	return e.BackupGDE
}

// Kind names the entitlement's kind in messages.
func (e Entitlement) Kind() string {
	if e.Application {
		return "application entitlement"
	}
	return "desktop entitlement"
}

// HomeSite is a home-site row (HomeSiteInfoV2).
type HomeSite struct {
	ID       string `json:"id"`
	Member   string `json:"ad_user_or_group_id"` // a SID
	Group    bool   `json:"group"`
	Desktop  string `json:"global_desktop_entitlement_id"`
	App      string `json:"global_application_entitlement_id"`
	Site     string `json:"site_id"`
	Redirect bool   `json:"use_homesite_for_redirection"`
}

// Entitlement is the id of the row's entitlement, "" for the global home
// site.
func (h HomeSite) Entitlement() string {
	if h.Desktop != "" {
		return h.Desktop
	}
	return h.App
}

// Identity is an AD user or group (ADUserOrGroupInfoV4).
type Identity struct {
	SID       string `json:"id"`
	Name      string `json:"login_name"`
	DNSDomain string `json:"domain"`
	Domain    string `json:"domain_net_biosname"`
	Group     bool   `json:"group"`
}

// String is DOMAIN\name (the NetBIOS domain when known).
func (i Identity) String() string {
	d := i.Domain
	if d == "" {
		d = i.DNSDomain
	}
	if d == "" {
		return i.Name
	}
	return d + `\` + i.Name
}

// MatchesDomain reports whether domain (as cpactl holds it: NetBIOS, DNS
// or empty) names the identity's domain: empty matches any; a NetBIOS name
// also matches the first label of the DNS name (docs/conventions.md).
func (i Identity) MatchesDomain(domain string) bool {
	if domain == "" {
		return true
	}
	first, _, _ := strings.Cut(i.DNSDomain, ".")
	return strings.EqualFold(domain, i.Domain) || strings.EqualFold(domain, i.DNSDomain) ||
		(first != "" && strings.EqualFold(domain, first))
}

// State is what push read of a federation, with the joins by name and id.
type State struct {
	Sites        []Site
	Entitlements []Entitlement
	HomeSites    []HomeSite
	Index        *Index
}

// Index joins Horizon's ids and cpactl's names: sites and entitlements
// by name (as cpactl compares names, ignoring case) and by id, users and
// groups by login name and domain and by SID.
type Index struct {
	sites        map[string]int // fold key of the name, and id, to an index in Sites
	siteByID     map[string]int
	ges          map[string][]int
	geByID       map[string]int
	identities   map[string][]Identity // fold key of login_name
	identityBySD map[string]Identity
	st           *State
}

// NewIndex indexes st (and sets st.Index).
func NewIndex(st *State, identities []Identity) *Index {
	x := &Index{sites: map[string]int{}, siteByID: map[string]int{}, ges: map[string][]int{}, geByID: map[string]int{},
		identities: map[string][]Identity{}, identityBySD: map[string]Identity{}, st: st}
	for i, s := range st.Sites {
		x.sites[fold.Key(s.Name)] = i
		x.siteByID[s.ID] = i
	}
	for i, e := range st.Entitlements {
		k := fold.Key(e.Name)
		x.ges[k] = append(x.ges[k], i)
		x.geByID[e.ID] = i
	}
	for _, id := range identities {
		k := fold.Key(id.Name)
		x.identities[k] = append(x.identities[k], id)
		x.identityBySD[id.SID] = id
	}
	st.Index = x
	return x
}

// Site finds a site by name.
func (x *Index) Site(name string) (Site, bool) {
	i, ok := x.sites[fold.Key(name)]
	if !ok {
		return Site{}, false
	}
	return x.st.Sites[i], true
}

// SiteByID finds a site by id.
func (x *Index) SiteByID(id string) (Site, bool) {
	i, ok := x.siteByID[id]
	if !ok {
		return Site{}, false
	}
	return x.st.Sites[i], true
}

// SiteName is the name of the site id, or the id itself when no site has
// it.
func (x *Index) SiteName(id string) string {
	if s, ok := x.SiteByID(id); ok {
		return s.Name
	}
	return id
}

// Entitlement finds a global entitlement by name: of the kind asked
// (application or desktop) when both kinds have the name, else the one
// there is.
func (x *Index) Entitlement(name string, application bool) (Entitlement, bool) {
	list := x.ges[fold.Key(name)]
	for _, i := range list {
		if x.st.Entitlements[i].Application == application {
			return x.st.Entitlements[i], true
		}
	}
	if len(list) > 0 {
		return x.st.Entitlements[list[0]], true
	}
	return Entitlement{}, false
}

// EntitlementByID finds a global entitlement by id.
func (x *Index) EntitlementByID(id string) (Entitlement, bool) {
	i, ok := x.geByID[id]
	if !ok {
		return Entitlement{}, false
	}
	return x.st.Entitlements[i], true
}

// EntitlementName is the name of the entitlement id, or the id itself.
func (x *Index) EntitlementName(id string) string {
	if e, ok := x.EntitlementByID(id); ok {
		return e.Name
	}
	return id
}

// IdentityBySID finds a user or group by SID.
func (x *Index) IdentityBySID(sid string) (Identity, bool) {
	id, ok := x.identityBySD[sid]
	return id, ok
}

// FindIdentity finds the user (or group) name of domain (NetBIOS, DNS, or
// empty for any): an error when none or several match.
func (x *Index) FindIdentity(domain, name string, group bool) (Identity, error) {
	var found []Identity
	for _, id := range x.identities[fold.Key(name)] {
		if id.Group == group && id.MatchesDomain(domain) {
			found = append(found, id)
		}
	}
	what := "user"
	if group {
		what = "group"
	}
	full := name
	if domain != "" {
		full = domain + `\` + name
	}
	switch len(found) {
	case 0:
		return Identity{}, fmt.Errorf("no %s %s in Horizon's AD", what, full)
	case 1:
		return found[0], nil
	}
	return Identity{}, fmt.Errorf("%d %ss named %s in Horizon's AD (%s, %s, ...): give the %s's domain", len(found), what, full, found[0], found[1], what)
}

// IdentityWanted says which AD identities a read keeps (the list of a
// large domain is streamed, and only these are held): the login names
// asked for, users and groups apart, and every SID a home-site row names.
type IdentityWanted struct {
	Users, Groups map[string]bool // fold keys of login names
}

// ReadState reads what push compares, fresh: sites (v3), desktop and
// application entitlements (v7), home sites (v2) and, of the AD users and
// groups, those want names or a home-site row names (the list is read in
// one request, as the pull reads it, and streamed).
func (s *Session) ReadState(ctx context.Context, want IdentityWanted) (*State, error) {
	st := &State{}
	if err := s.readList(ctx, PathSites, false, func(raw json.RawMessage) error {
		var site Site
		if err := json.Unmarshal(raw, &site); err != nil || site.ID == "" {
			return &ProtocolError{URL: s.base, Op: "GET " + PathSites, Err: fmt.Errorf("a site without an id: %v", err)}
		}
		st.Sites = append(st.Sites, site)
		return nil
	}); err != nil {
		return nil, err
	}
	for _, p := range []struct {
		path string
		app  bool
	}{{PathDesktopGEs, false}, {PathAppGEs, true}} {
		if err := s.readList(ctx, p.path, true, func(raw json.RawMessage) error {
			var e Entitlement
			if err := json.Unmarshal(raw, &e); err != nil || e.ID == "" {
				return &ProtocolError{URL: s.base, Op: "GET " + p.path, Err: fmt.Errorf("an entitlement without an id: %v", err)}
			}
			e.Application = p.app
			st.Entitlements = append(st.Entitlements, e)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	named := map[string]bool{}
	if err := s.readList(ctx, PathHomeSites, true, func(raw json.RawMessage) error {
		var h HomeSite
		if err := json.Unmarshal(raw, &h); err != nil || h.ID == "" {
			return &ProtocolError{URL: s.base, Op: "GET " + PathHomeSites, Err: fmt.Errorf("a home site without an id: %v", err)}
		}
		st.HomeSites = append(st.HomeSites, h)
		named[h.Member] = true
		return nil
	}); err != nil {
		return nil, err
	}
	var ids []Identity
	_, err := s.Read(ctx, PathADIdentities, nil, io.Discard, func(raw json.RawMessage) error {
		var id Identity
		if json.Unmarshal(raw, &id) != nil || id.SID == "" {
			return nil // not one push can name
		}
		k := fold.Key(id.Name)
		if named[id.SID] || (id.Group && want.Groups[k]) || (!id.Group && want.Users[k]) {
			ids = append(ids, id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	NewIndex(st, ids)
	return st, nil
}

// readList reads a list, in pages when paged.
func (s *Session) readList(ctx context.Context, path string, paged bool, each func(json.RawMessage) error) error {
	if !paged {
		_, err := s.Read(ctx, path, nil, io.Discard, each)
		return err
	}
	return s.ReadPages(ctx, path, nil, func(int) (io.Writer, func(Page) error, error) {
		return io.Discard, func(Page) error { return nil }, nil
	}, each)
}

// equalsFilter is the filter query of a list read: one Equals on a field
// (the pagination and filter guide's minified JSON).
func equalsFilter(field, value string) url.Values {
	b, _ := json.Marshal(map[string]string{"type": "Equals", "name": field, "value": value})
	return url.Values{"filter": {string(b)}}
}
