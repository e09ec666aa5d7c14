package broker

// Home site resolution (docs/resolve.md step 4).

import (
	"fmt"
	"sort"
	"strings"
)

// HomeSiteSource says which kind of home-site row decided a user's home
// site, from the highest precedence to the lowest.
type HomeSiteSource string

// HomeSiteSource values. USER_OVERRIDE, GROUP_OVERRIDE, USER_DEFAULT and
// GROUP_DEFAULT are the levels of home-site rows, in precedence order.
const (
	SourceUserOverride   HomeSiteSource = "USER_OVERRIDE"   // the user's row for this GE
	SourceGroupOverride  HomeSiteSource = "GROUP_OVERRIDE"  // an immediate group's row for this GE
	SourceUserDefault    HomeSiteSource = "USER_DEFAULT"    // the user's global home site
	SourceGroupDefault   HomeSiteSource = "GROUP_DEFAULT"   // an immediate group's global home site
	SourceConnectingSite HomeSiteSource = "CONNECTING_SITE" // no home site: Resolve starts at the connecting site
	SourceNone           HomeSiteSource = "NONE"            // ResolveHomeSite found no row
)

// homeSiteLevels are the row levels in precedence order.
var homeSiteLevels = []HomeSiteSource{SourceUserOverride, SourceGroupOverride, SourceUserDefault, SourceGroupDefault}

// levelRank is a level's place in homeSiteLevels.
func levelRank(l HomeSiteSource) int {
	for i, v := range homeSiteLevels {
		if v == l {
			return i
		}
	}
	return len(homeSiteLevels)
}

// HomeSiteRow is one home-site row considered for a user: the user's own
// rows and those of its immediate groups, global or for the entitlement
// asked about.
type HomeSiteRow struct {
	Kind MemberKind `json:"kind"` // user or group
	Name string     `json:"name"` // the user's or group's name
	// Entitlement is the GE the row overrides; nil for a global home site.
	Entitlement *string        `json:"entitlement"`
	Site        string         `json:"site"`  // the row's site
	Level       HomeSiteSource `json:"level"` // USER_OVERRIDE, GROUP_OVERRIDE, USER_DEFAULT or GROUP_DEFAULT
	// Won is set on the one row that decides the home site.
	Won bool `json:"won"`
	// LostBecause says why a row that did not win lost.
	LostBecause string `json:"lost_because,omitempty"`
}

// GroupSite is one group's home site at a conflicting level.
type GroupSite struct {
	Group string `json:"group"` // the group's name
	Site  string `json:"site"`  // the group's home site at that level
}

// HomeSiteConflict is a set of immediate groups at the same level naming
// different sites. The group whose name sorts first (case-insensitive) wins.
type HomeSiteConflict struct {
	Level        HomeSiteSource `json:"level"`         // GROUP_OVERRIDE or GROUP_DEFAULT
	Groups       []GroupSite    `json:"groups"`        // in name order
	WinningGroup string         `json:"winning_group"` // the group sorting first, case-insensitive
	Site         string         `json:"site"`          // the winning group's site
	// Decisive is set when this level decided the home site; a conflict at
	// a level outranked by another row changes nothing.
	Decisive bool `json:"decisive"`
}

// HomeSiteResolution is a user's home site for a global entitlement (or
// globally) and how it was decided, with every row considered.
type HomeSiteResolution struct {
	User string `json:"user"` // the user's stored name (as given when unknown)
	// Entitlement is the GE asked about; nil for the global home site only.
	Entitlement *string `json:"entitlement"`
	// Site is the resolved home site; nil when no row applies.
	Site *string `json:"site"`
	// Source is the level of the winning row, or NONE.
	Source HomeSiteSource `json:"source"`
	// Groups are the user's immediate groups, whose rows count.
	Groups    []string           `json:"groups"`
	Conflicts []HomeSiteConflict `json:"conflicts"` // group conflicts at any level
	// Rows lists every row considered, winner included, in precedence
	// order (level, then member name, then site).
	Rows []HomeSiteRow `json:"rows"`
}

// ResolveHomeSite resolves the home site of user for the global entitlement
// named entitlement ("" for the global home site only), as docs/resolve.md step 4
// says: the user's override for this GE; a group's override for this GE; the
// user's global home site; a group's global home site. Groups are the user's
// immediate groups (f.Users); two groups at the same level naming different
// sites are a conflict, won by the group whose name sorts first
// (case-insensitive), and listed. Rows for a user or group not entitled to
// the GE count like any other row.
//
// f must hold the sites, the user (with its immediate groups) and the
// home-site rows; a row naming a site absent from f.Sites loses ("site does
// not exist"). Duplicate rows for the same user or group and GE
// (the directory keeps one) are reported: the first by site name counts.
// ResolveHomeSite never fails: an unknown user simply has no groups.
func ResolveHomeSite(f *Federation, user, entitlement string) HomeSiteResolution {
	return newIndex(f, nil).resolveHomeSite(user, entitlement)
}

// resolveHomeSite is ResolveHomeSite over an index.
func (ix *index) resolveHomeSite(user, entitlement string) HomeSiteResolution {
	res := HomeSiteResolution{
		User:      user,
		Source:    SourceNone,
		Groups:    []string{},
		Conflicts: []HomeSiteConflict{},
		Rows:      []HomeSiteRow{},
	}
	var groupKeys = map[string]bool{}
	if u := ix.user(user); u != nil {
		res.User = u.Name
		for _, g := range u.Groups {
			if k := foldKey(g); !groupKeys[k] {
				groupKeys[k] = true
				res.Groups = append(res.Groups, ix.groupName(g))
			}
		}
	}
	sortNames(res.Groups)
	if entitlement != "" {
		name := entitlement
		if ge := ix.entitlement(entitlement); ge != nil {
			name = ge.Name
		}
		res.Entitlement = &name
	}

	// Gather the rows of the user and its immediate groups.
	type row struct {
		HomeSiteRow
		valid bool // names an existing site and is not a duplicate
	}
	var rows []row
	for _, h := range ix.f.HomeSites {
		var r row
		switch {
		case h.User != "" && strings.EqualFold(h.User, res.User):
			r.Kind, r.Name = MemberUser, res.User
		case h.User == "" && h.Group != "" && get(groupKeys, h.Group):
			r.Kind, r.Name = MemberGroup, ix.groupName(h.Group)
		default:
			continue
		}
		override := h.Entitlement != ""
		if override && (res.Entitlement == nil || !strings.EqualFold(h.Entitlement, *res.Entitlement)) {
			continue // another GE's override
		}
		if override {
			name := *res.Entitlement
			r.Entitlement = &name
		}
		switch {
		case override && r.Kind == MemberUser:
			r.Level = SourceUserOverride
		case override:
			r.Level = SourceGroupOverride
		case r.Kind == MemberUser:
			r.Level = SourceUserDefault
		default:
			r.Level = SourceGroupDefault
		}
		r.Site, r.valid = h.Site, true
		if s := ix.site(h.Site); s != nil {
			r.Site = s.Name
		} else {
			r.valid = false
			r.LostBecause = fmt.Sprintf("site %q does not exist", h.Site)
		}
		rows = append(rows, r)
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if ra, rb := levelRank(a.Level), levelRank(b.Level); ra != rb {
			return ra < rb
		}
		if !strings.EqualFold(a.Name, b.Name) {
			return nameLess(a.Name, b.Name)
		}
		if a.valid != b.valid {
			return a.valid
		}
		return nameLess(a.Site, b.Site)
	})
	// One row per (user or group, GE or none): later duplicates lose.
	for i := range rows {
		for j := 0; j < i; j++ {
			if rows[j].valid && rows[i].valid && rows[j].Level == rows[i].Level && strings.EqualFold(rows[j].Name, rows[i].Name) {
				rows[i].valid = false
				rows[i].LostBecause = fmt.Sprintf("duplicate row for %s %s: the row naming site %s counts", rows[j].Kind, rows[j].Name, rows[j].Site)
				break
			}
		}
	}

	// The winner: the first valid row of the highest level that has one.
	win := -1
	for i := range rows {
		if rows[i].valid {
			win = i
			break
		}
	}
	if win >= 0 {
		w := &rows[win]
		w.Won = true
		site := w.Site
		res.Site, res.Source = &site, w.Level
	}

	// Conflicts between groups at the same level.
	for _, level := range []HomeSiteSource{SourceGroupOverride, SourceGroupDefault} {
		var c HomeSiteConflict
		sites := map[string]bool{}
		for _, r := range rows {
			if r.valid && r.Level == level {
				c.Groups = append(c.Groups, GroupSite{Group: r.Name, Site: r.Site})
				sites[foldKey(r.Site)] = true
			}
		}
		if len(sites) < 2 {
			continue
		}
		c.Level = level
		c.WinningGroup, c.Site = c.Groups[0].Group, c.Groups[0].Site
		c.Decisive = win >= 0 && rows[win].Level == level
		res.Conflicts = append(res.Conflicts, c)
	}

	// Why every other row lost.
	for i := range rows {
		r := &rows[i]
		if r.Won || !r.valid {
			continue
		}
		w := rows[win]
		switch {
		case r.Level != w.Level:
			r.LostBecause = fmt.Sprintf("the %s row of %s %s (site %s) takes precedence", w.Level, w.Kind, w.Name, w.Site)
		case strings.EqualFold(r.Site, w.Site):
			r.LostBecause = fmt.Sprintf("group %s sorts first at %s and names the same site", w.Name, w.Level)
		default:
			r.LostBecause = fmt.Sprintf("conflict at %s: group %s sorts first (case-insensitive), so its site %s wins", w.Level, w.Name, w.Site)
		}
	}
	for _, r := range rows {
		res.Rows = append(res.Rows, r.HomeSiteRow)
	}
	return res
}
