package directory

import (
	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/ldapschema"
)

// HomeSiteFederation reads what broker.ResolveHomeSite needs for one user,
// in a fixed number of searches: the user's immediate groups (one search),
// the home-site rows of the user and those groups, for every entitlement
// (one search), and the sites those rows name (one search). The user is
// named in the federation by its uid; rows name users, groups, entitlements
// and sites by the names in their DNs, and a row whose site does not exist
// keeps that name, so the broker reports it as lost.
func (s *Store) HomeSiteFederation(user ldapschema.User) (*broker.Federation, error) {
	groups, err := s.GroupsWithMember(user.DN)
	if err != nil {
		return nil, err
	}
	f := &broker.Federation{Settings: broker.DefaultSettings()}
	bu := broker.User{Name: user.UID}
	rowFilters := []string{ldapclient.Filter(ldapschema.AttrUserDN, user.DN)}
	for _, g := range groups {
		bu.Groups = append(bu.Groups, g.Name)
		f.Groups = append(f.Groups, broker.Group{Name: g.Name})
		rowFilters = append(rowFilters, ldapclient.Filter(ldapschema.AttrGroupDN, g.DN))
	}
	f.Users = []broker.User{bu}
	rows, err := s.HomeSites(ldapclient.Or(rowFilters...))
	if err != nil {
		return nil, err
	}
	// The sites the rows name, by DN.
	var siteFilters []string
	for _, r := range rows {
		if n := ldapschema.NameOf(r.SiteDN); n != "" {
			siteFilters = append(siteFilters, ldapclient.Filter(ldapschema.AttrCN, n))
		}
	}
	siteByDN := map[string]ldapschema.Site{}
	if len(siteFilters) > 0 {
		entries, err := s.Find(s.DIT.Sites(), ldap.ScopeSingleLevel, ldapclient.And(ldapclient.ClassFilter(ldapschema.ClassSite), ldapclient.Or(siteFilters...)))
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			site, err := ldapschema.SiteFromEntry(e)
			if err != nil {
				return nil, err
			}
			siteByDN[ldapschema.NormalizeDN(site.DN)] = site
			f.Sites = append(f.Sites, broker.Site{Name: site.Name, PreferredSites: site.PreferredSites})
		}
	}
	for _, r := range rows {
		h := broker.HomeSite{Entitlement: ldapschema.NameOf(r.EntitlementDN), Site: ldapschema.NameOf(r.SiteDN)}
		if site, ok := siteByDN[ldapschema.NormalizeDN(r.SiteDN)]; ok {
			h.Site = site.Name
		} else if h.Site == "" {
			h.Site = r.SiteDN
		}
		if r.UserDN != "" {
			h.User = user.UID
		} else {
			h.Group = groupName(groups, r.GroupDN)
		}
		f.HomeSites = append(f.HomeSites, h)
	}
	return f, nil
}

// groupName is the stored name of the group with this DN among groups.
func groupName(groups []ldapschema.Group, dn string) string {
	for _, g := range groups {
		if ldapschema.EqualDN(g.DN, dn) {
			return g.Name
		}
	}
	return ldapschema.NameOf(dn)
}
