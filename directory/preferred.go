package directory

// Preferred-site writes: a site's ordered preferred-site list is replaced
// as a whole, under an assertion that it is still the list read.

import (
	"fmt"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/ldapschema"
)

// PreferredAssertion returns the RFC 4528 assertion filter that holds
// exactly when an entry's preferred-site list is still the list read
// (raw, the stored values): every value read is present and, as cpactl
// writes ranks 0..n-1, no value has rank n; an empty list asserts that no
// value is stored.
func PreferredAssertion(raw []string) string {
	a := ldapschema.AttrPreferredSite
	if len(raw) == 0 {
		return ldapclient.Not(ldapclient.Present(a))
	}
	fs := make([]string, 0, len(raw)+1)
	ranks := map[int]bool{}
	top := -1
	for _, v := range raw {
		fs = append(fs, ldapclient.Filter(a, v))
		if rs, err := ldapschema.ParsePreferredSite(v); err == nil {
			ranks[rs.Rank] = true
			if rs.Rank > top {
				top = rs.Rank
			}
		}
	}
	// cpactl always writes ranks 0..n-1, so any other list written since
	// holds a rank the list read lacks: a gap, or the rank after the last.
	// Asserting those ranks absent pins the whole list, gaps included (lint
	// reports gaps, and the fix is to write the list again).
	for r := 0; r <= top+1; r++ {
		if !ranks[r] {
			fs = append(fs, ldapclient.Not(ldapclient.Prefix(a, fmt.Sprintf("{%d}", r))))
		}
	}
	return ldapclient.And(fs...)
}

// PreferredWrite plans replacing a site's preferred-site list with names
// (in rank order) in one modify that asserts the list read (site.PreferredRaw):
// if someone changed it since, the write fails with a *ConflictError.
func PreferredWrite(verb, object string, site ldapschema.Site, names []string) (Write, error) {
	ctl, err := ldapconn.AssertionControl(PreferredAssertion(site.PreferredRaw))
	if err != nil {
		return Write{}, err
	}
	change := ldap.Change{Operation: ldap.ReplaceAttribute,
		Modification: ldap.PartialAttribute{Type: ldapschema.AttrPreferredSite, Vals: ldapschema.EncodePreferredSites(names)}}
	if len(names) == 0 {
		change = ldap.Change{Operation: ldap.DeleteAttribute,
			Modification: ldap.PartialAttribute{Type: ldapschema.AttrPreferredSite}}
	}
	return ModifyWrite(verb, object, site.DN, []ldap.Change{change}, ctl), nil
}

// PreferredConflict is what a preferred-site assertion protects, for
// messages.
func PreferredConflict(site string) string {
	return fmt.Sprintf("the preferred-site list of site %s", site)
}

// SetPreferredSites replaces site's preferred-site list with names in one
// modify asserting the list read; a lost race is a *ConflictError.
func (s *Store) SetPreferredSites(site ldapschema.Site, names []string) error {
	w, err := PreferredWrite("set", "the preferred sites of site "+site.Name, site, names)
	if err != nil {
		return err
	}
	return s.ApplyPlan(&Plan{Writes: []Write{w}, Conflict: PreferredConflict(site.Name)})
}
