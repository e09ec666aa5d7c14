package commands

import (
	"cmp"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/ldapschema"
)

// recordFilter builds the filter of the --user and --entitlement options
// of session and assignment lists. A user or entitlement that no longer
// exists is still matched by the DN it had, so records left behind can be
// found (and ended); missing is then its *ldapclient.NotFoundError, which
// the list returns when it finds no record (exit 3, as every name flag).
func recordFilter(st *directory.Store, user, entitlement, pod string) (filter string, missing, err error) {
	var fs []string
	if user != "" {
		dn, gone, err := userDN(st, user)
		if err != nil {
			return "", nil, err
		}
		missing = cmp.Or(missing, gone)
		fs = append(fs, ldapclient.Filter(ldapschema.AttrUserDN, dn))
	}
	if entitlement != "" {
		dn, gone, err := entitlementDN(st, entitlement)
		if err != nil {
			return "", nil, err
		}
		missing = cmp.Or(missing, gone)
		fs = append(fs, ldapclient.Filter(ldapschema.AttrEntitlementDN, dn))
	}
	if pod != "" {
		p, err := st.Pod(pod)
		if err != nil {
			return "", nil, err
		}
		fs = append(fs, ldapclient.Filter(ldapschema.AttrPodDN, p.DN))
	}
	switch len(fs) {
	case 0:
		return "", missing, nil
	case 1:
		return fs[0], missing, nil
	}
	return ldapclient.And(fs...), missing, nil
}

// userDN is the DN of the user an argument names; for a user that does
// not exist, the DN it would have, and its *ldapclient.NotFoundError as
// missing.
func userDN(st *directory.Store, arg string) (dn string, missing, err error) {
	u, err := st.User(arg)
	if directory.IsNotFound(err) {
		n, perr := directory.ParseUserName(arg)
		if perr != nil {
			return "", nil, perr
		}
		return st.DIT.User(n.UID), err, nil
	}
	return u.DN, nil, err
}

// entitlementDN is like userDN for entitlements.
func entitlementDN(st *directory.Store, name string) (dn string, missing, err error) {
	ge, err := st.Entitlement(name)
	if directory.IsNotFound(err) {
		return st.DIT.Entitlement(name), err, nil
	}
	return ge.DN, nil, err
}

// groupsOf lists the names of the groups among groups that hold dn as a
// member.
func groupsOf(dn string, groups []ldapschema.Group) []string {
	return groupIndex(groups).of(dn)
}

// groupsByMember lists, for each member (by normalized DN), the names of
// the groups that hold it directly, in the order of the groups given:
// built once, O(memberships), so that listing every user's groups is not
// users × memberships.
type groupsByMember map[string][]string

func groupIndex(groups []ldapschema.Group) groupsByMember {
	idx := groupsByMember{}
	for _, g := range groups {
		seen := map[string]bool{}
		for _, m := range g.Members {
			k := ldapschema.NormalizeDN(m)
			if !seen[k] {
				seen[k] = true
				idx[k] = append(idx[k], g.Name)
			}
		}
	}
	return idx
}
