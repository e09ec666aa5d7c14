package rules

import (
	"fmt"
	"strings"

	"github.com/cpactl/cpactl/ldapschema"
)

// PreferredProblem is an entry of a preferred-site list that breaks a
// rule: Check is CheckPreferredDuplicate (it repeats an earlier entry) or
// CheckPreferredSelf (it names the site itself); Index is its position in
// the list.
type PreferredProblem struct {
	Check string
	Index int
}

// PreferredSiteProblems checks a site's preferred-site list, ranked first
// to last: a site is listed once, and never the site itself (names compared
// without regard to case). It returns every entry that breaks one, in list
// order, the site itself before a duplicate for the same entry. O(n).
func PreferredSiteProblems(site string, preferred []string) []PreferredProblem {
	var out []PreferredProblem
	seen := make(map[string]bool, len(preferred))
	for i, name := range preferred {
		if strings.EqualFold(name, site) {
			out = append(out, PreferredProblem{Check: CheckPreferredSelf, Index: i})
		}
		k := strings.ToLower(name)
		if seen[k] {
			out = append(out, PreferredProblem{Check: CheckPreferredDuplicate, Index: i})
		}
		seen[k] = true
	}
	return out
}

// PreferredSites checks the preferred-site list given for site (--set),
// before any site is looked up: it returns a *Error for the first site
// given twice, else for the site itself, else nil.
func PreferredSites(site string, preferred []string) error {
	problems := PreferredSiteProblems(site, preferred)
	for _, p := range problems {
		if p.Check == CheckPreferredDuplicate {
			return &Error{Rule: p.Check, Hint: "name each site once",
				Message: fmt.Sprintf("site %s is given twice in --set", preferred[p.Index])}
		}
	}
	if len(problems) > 0 { // the others are the site itself
		return preferredSelf(preferred[problems[0].Index])
	}
	return nil
}

// PreferredSite checks one site of a preferred-site list once the
// directory found it: preferred (given spelled so) must not be site itself,
// the same entry by DN, however the name was spelled.
func PreferredSite(site, preferred ldapschema.Site, given string) error {
	if ldapschema.EqualDN(site.DN, preferred.DN) {
		return preferredSelf(given)
	}
	return nil
}

func preferredSelf(given string) error {
	return &Error{Rule: CheckPreferredSelf, Hint: "a site's preferred sites are the other sites",
		Message: fmt.Sprintf("site %s cannot be its own preferred site", given)}
}
